/**
 * The proxy's files through AgentCore, in a temporary main directory: write, read and remove
 * in each scope, atomic replacement, and refusal of every name or planted symbolic link that
 * would reach outside the proxy's directory (nothing outside is read, written or removed).
 */
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  decodeCommandRequest,
  encodeCommandRequest,
  makeCommandRequest,
  type ProxyFileHolder,
} from "@platform/agent-protocol";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { createDockerClient } from "../docker/engine.ts";
import { MAX_PROXY_FILE_BYTES } from "./files.ts";

const serverId = "proxy-files-test";
const scratch: string[] = [];
let mainDirectory: string;
let outside: string;
let core: AgentCore;

async function temporaryDirectory(prefix: string): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), prefix));
  scratch.push(directory);
  return directory;
}

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 10_000)));
}

type Scope = "static" | "dynamic" | "certificate";
const tenant: ProxyFileHolder = { owner: { organizationId: "org-a", resource: "application:app-a" } };
/** The holder these tests act as: a tenant's application (traefik.yml takes none). */
const holderFor = (scope: Scope, holder: ProxyFileHolder) => (scope === "static" ? {} : holder);
const write = (scope: Scope, fileName: string, content: string, holder = tenant) =>
  send({
    command: "writeProxyFile",
    writeProxyFile: { scope, fileName, content, ...holderFor(scope, holder) },
  });
const read = (scope: Scope, fileName: string, holder = tenant) =>
  send({ command: "readProxyFile", readProxyFile: { scope, fileName, ...holderFor(scope, holder) } });
const remove = (scope: Scope, fileName: string, holder = tenant) =>
  send({ command: "removeProxyFile", removeProxyFile: { scope, fileName, ...holderFor(scope, holder) } });

/**
 * A write whose content holds the bytes ED A0 80 on the wire: not UTF-8 (a lone surrogate, which
 * the codec decodes as such), as a sender other than this codec may send them.
 */
function writeWithLoneSurrogate(): Promise<CommandReply> {
  const writeProxyFile = { scope: "dynamic", fileName: "app.yml", content: "http: {}\nXXX", ...tenant };
  // A plain Uint8Array, as NATS hands a message over (a Buffer would decode it as U+FFFD).
  const bytes = new Uint8Array(
    encodeCommandRequest(makeCommandRequest(serverId, { command: "writeProxyFile", writeProxyFile }, 10_000)),
  );
  bytes.set([0xed, 0xa0, 0x80], Buffer.from(bytes).indexOf("XXX"));
  return core.handle(decodeCommandRequest(bytes));
}

function expectInvalid(reply: CommandReply, field: string): void {
  expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
  if (reply.result === "error") expect(reply.error.message).toContain(field);
}

const proxyDirectory = () => path.join(mainDirectory, "traefik");
const dynamicDirectory = () => path.join(proxyDirectory(), "dynamic");
const certificatesDirectory = () => path.join(dynamicDirectory(), "certificates");
const mode = async (file: string) => (await stat(file)).mode & 0o777;

/** Every entry below `directory`, relative, with symlinks shown as `name -> target`. */
async function tree(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  const listed: string[] = [];
  for (const entry of entries) {
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(directory, full);
    listed.push(entry.isSymbolicLink() ? `${relative} -> ${await readlink(full)}` : relative);
  }
  return listed.sort();
}

beforeEach(async () => {
  mainDirectory = await temporaryDirectory("proxy-main-");
  outside = await temporaryDirectory("proxy-outside-");
  // Never called for files; a real client keeps AgentCore as it runs in production.
  core = new AgentCore({ serverId, docker: createDockerClient(), mainDirectory });
});

afterAll(async () => {
  for (const directory of scratch) await rm(directory, { recursive: true, force: true });
});

describe("writing, reading and removing proxy files", () => {
  it("keeps traefik.yml, dynamic files and certificates where Traefik's mount expects them", async () => {
    const staticReply = await write("static", "ignored-for-static.yml", "entryPoints: {}\n");
    expect(staticReply).toMatchObject({
      result: "proxyFileWritten",
      proxyFileWritten: { path: path.join(proxyDirectory(), "traefik.yml") },
    });
    const dynamicReply = await write("dynamic", "shop-web.yml", "http: {}\n");
    expect(dynamicReply).toMatchObject({
      proxyFileWritten: { path: path.join(dynamicDirectory(), "shop-web.yml") },
    });
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const certificateReply = await write("certificate", "shop-web.crt", pem);
    expect(certificateReply).toMatchObject({
      proxyFileWritten: { path: path.join(certificatesDirectory(), "shop-web.crt") },
    });

    expect(await readFile(path.join(proxyDirectory(), "traefik.yml"), "utf8")).toBe("entryPoints: {}\n");
    expect(await readFile(path.join(dynamicDirectory(), "shop-web.yml"), "utf8")).toBe("http: {}\n");
    expect(await readFile(path.join(certificatesDirectory(), "shop-web.crt"), "utf8")).toBe(pem);
    expect(await mode(path.join(proxyDirectory(), "traefik.yml"))).toBe(0o644);
    expect(await mode(path.join(dynamicDirectory(), "shop-web.yml"))).toBe(0o644);
    expect(await mode(path.join(certificatesDirectory(), "shop-web.crt"))).toBe(0o600);
    expect(await mode(proxyDirectory())).toBe(0o755);
    expect(await mode(dynamicDirectory())).toBe(0o755);
    expect(await mode(certificatesDirectory())).toBe(0o700);

    expect(await read("static", "")).toEqual({
      requestId: expect.any(String),
      result: "proxyFile",
      proxyFile: { exists: true, content: "entryPoints: {}\n" },
    });
    expect(await read("dynamic", "shop-web.yml")).toMatchObject({
      proxyFile: { exists: true, content: "http: {}\n" },
    });
    expect(await read("certificate", "shop-web.crt")).toMatchObject({
      proxyFile: { exists: true, content: pem },
    });

    expect(await remove("dynamic", "shop-web.yml")).toMatchObject({ proxyFileRemoved: { removed: true } });
    expect(await remove("certificate", "shop-web.crt")).toMatchObject({
      proxyFileRemoved: { removed: true },
    });
    expect(await remove("static", "")).toMatchObject({ proxyFileRemoved: { removed: true } });
    expect(await tree(proxyDirectory())).toEqual(["dynamic", "dynamic/certificates"]);

    expect(await read("dynamic", "shop-web.yml")).toMatchObject({
      proxyFile: { exists: false, content: "" },
    });
    expect(await remove("dynamic", "shop-web.yml")).toMatchObject({ proxyFileRemoved: { removed: false } });
  });

  it("takes file names of up to 255 characters", async () => {
    const longest = `${"a".repeat(251)}.yml`;
    expect(await write("dynamic", longest, "http: {}\n")).toMatchObject({ result: "proxyFileWritten" });
    expect(await read("dynamic", longest)).toMatchObject({
      proxyFile: { exists: true, content: "http: {}\n" },
    });
    expect(await tree(dynamicDirectory())).toEqual([longest]);
  });

  it("ignores the file name of the static scope: it is always traefik.yml", async () => {
    const reply = await write("static", "../../etc/x", "entryPoints: {}\n");
    expect(reply).toMatchObject({ proxyFileWritten: { path: path.join(proxyDirectory(), "traefik.yml") } });
    expect(await tree(mainDirectory)).toEqual(["traefik", "traefik/traefik.yml"]);
  });

  it("answers 'no such file' when the directories were never created, and creates none", async () => {
    const names = { static: "", dynamic: "app.yml", certificate: "app.pem" } as const;
    for (const [scope, fileName] of Object.entries(names) as [Scope, string][]) {
      expect(await read(scope, fileName)).toMatchObject({ proxyFile: { exists: false } });
      expect(await remove(scope, fileName)).toMatchObject({ proxyFileRemoved: { removed: false } });
    }
    expect(await readdir(mainDirectory)).toEqual([]);
  });

  it("tightens a certificates directory that was created with a looser mode", async () => {
    await mkdir(certificatesDirectory(), { recursive: true, mode: 0o755 });
    await write("certificate", "a.pem", "pem");
    expect(await mode(certificatesDirectory())).toBe(0o700);
  });
});

describe("atomic replacement", () => {
  it("replaces a file whole and leaves no temporary file behind", async () => {
    const long = `${"# a long first version\n".repeat(2000)}http: {}\n`;
    await write("dynamic", "app.yml", long);
    await write("dynamic", "app.yml", "http: {}\n");
    expect(await readFile(path.join(dynamicDirectory(), "app.yml"), "utf8")).toBe("http: {}\n");
    expect(await tree(dynamicDirectory())).toEqual(["app.yml"]);
  });

  it("ends with exactly one of the contents when writes race", async () => {
    const contents = Array.from(
      { length: 20 },
      (_, index) => `# version ${index}\n${"x".repeat(50_000 + index)}\n`,
    );
    const replies = await Promise.all(contents.map((content) => write("certificate", "race.pem", content)));
    for (const reply of replies) expect(reply.result).toBe("proxyFileWritten");
    expect(contents).toContain(await readFile(path.join(certificatesDirectory(), "race.pem"), "utf8"));
    expect(await tree(certificatesDirectory())).toEqual(["race.pem"]);
  });
});

describe("refused names and contents", () => {
  const badNames = [
    "../../etc/x",
    "../x.yml",
    "a/b.yml",
    ".hidden",
    ".hidden.yml",
    "/etc/passwd",
    "/tmp/x.yml",
    "..",
    "x..yml",
    "",
    "-rf.yml",
    "name with space.yml",
    "x;rm -rf.yml",
    "$(reboot).yml",
    "x\n.yml",
    "x\0.yml",
    "é.yml",
    `${"a".repeat(252)}.yml`,
  ];

  it("refuses names that are not plain file names, in every scope that takes a name", async () => {
    for (const scope of ["dynamic", "certificate"] as const) {
      for (const fileName of badNames) {
        expectInvalid(await write(scope, fileName, "content"), "fileName");
        expectInvalid(await read(scope, fileName), "fileName");
        expectInvalid(await remove(scope, fileName), "fileName");
      }
    }
    expect(await readdir(mainDirectory)).toEqual([]);
  });

  it("refuses a dynamic file that Traefik would not load, and a certificate that it would", async () => {
    for (const fileName of ["app", "app.json", "app.toml", "app.yml.bak"]) {
      expectInvalid(await write("dynamic", fileName, "http: {}"), "fileName");
    }
    for (const fileName of ["key.yml", "key.YAML", "key.toml"]) {
      expectInvalid(await write("certificate", fileName, "pem"), "fileName");
    }
    expect((await write("dynamic", "app.YAML", "http: {}")).result).toBe("proxyFileWritten");
  });

  it("refuses an unknown scope", async () => {
    const reply = await send({
      command: "writeProxyFile",
      writeProxyFile: { scope: "host" as Scope, fileName: "x.yml", content: "x" },
    });
    expectInvalid(reply, "scope");
    expectInvalid(await read("" as Scope, "x.yml"), "scope");
  });

  it("refuses empty, oversized and non-UTF-8 content and keeps the old file", async () => {
    await write("dynamic", "app.yml", "http: {}\n");
    expectInvalid(await write("dynamic", "app.yml", ""), "content");
    expectInvalid(await write("dynamic", "app.yml", "x".repeat(MAX_PROXY_FILE_BYTES + 1)), "content");
    expectInvalid(await writeWithLoneSurrogate(), "content");
    expectInvalid(await write("static", "", ""), "content");
    expect((await write("dynamic", "app.yml", "x".repeat(MAX_PROXY_FILE_BYTES))).result).toBe(
      "proxyFileWritten",
    );
    expectInvalid(await write("dynamic", "app.yml", `${"é".repeat(MAX_PROXY_FILE_BYTES / 2)}x`), "content");
    expect((await readFile(path.join(dynamicDirectory(), "app.yml"), "utf8")).length).toBe(
      MAX_PROXY_FILE_BYTES,
    );
  });
});

describe("planted symbolic links", () => {
  const cases = [
    { scope: "static", fileName: "", directory: () => proxyDirectory(), entry: "traefik.yml" },
    { scope: "dynamic", fileName: "app.yml", directory: () => dynamicDirectory(), entry: "app.yml" },
    { scope: "certificate", fileName: "app.pem", directory: () => certificatesDirectory(), entry: "app.pem" },
  ] as const;

  for (const { scope, fileName, directory, entry } of cases) {
    it(`refuses a ${scope} file that is a link pointing outside, leaving both untouched`, async () => {
      const victim = path.join(outside, "victim");
      await writeFile(victim, "original secret");
      await mkdir(directory(), { recursive: true });
      const link = path.join(directory(), entry);
      await symlink(victim, link);

      expectInvalid(await write(scope, fileName, "overwritten"), link);
      const readReply = await read(scope, fileName);
      expectInvalid(readReply, link);
      expect(JSON.stringify(readReply)).not.toContain("original secret");
      expectInvalid(await remove(scope, fileName), link);

      expect(await readFile(victim, "utf8")).toBe("original secret");
      expect((await lstat(link)).isSymbolicLink()).toBe(true);
      expect(await readlink(link)).toBe(victim);
      expect(await tree(outside)).toEqual(["victim"]);
      expect((await tree(directory())).filter((name) => name.includes(".tmp"))).toEqual([]);
    });
  }

  it("refuses a directory of the proxy that is a link pointing outside", async () => {
    await mkdir(proxyDirectory());
    await writeFile(path.join(outside, "app.yml"), "original");
    await symlink(outside, dynamicDirectory());

    expectInvalid(await write("dynamic", "app.yml", "overwritten"), dynamicDirectory());
    expectInvalid(await write("certificate", "app.pem", "overwritten"), dynamicDirectory());
    expectInvalid(await read("dynamic", "app.yml"), dynamicDirectory());
    expectInvalid(await remove("dynamic", "app.yml"), dynamicDirectory());

    expect(await tree(outside)).toEqual(["app.yml"]);
    expect(await readFile(path.join(outside, "app.yml"), "utf8")).toBe("original");
  });

  it("refuses a proxy directory that is a link, even one pointing inside the main directory", async () => {
    await mkdir(path.join(mainDirectory, "elsewhere"));
    await symlink(path.join(mainDirectory, "elsewhere"), proxyDirectory());
    expectInvalid(await write("static", "", "entryPoints: {}"), proxyDirectory());
    expect(await readdir(path.join(mainDirectory, "elsewhere"))).toEqual([]);
  });

  it("refuses a name that is a directory", async () => {
    await mkdir(path.join(dynamicDirectory(), "app.yml"), { recursive: true });
    expectInvalid(await write("dynamic", "app.yml", "http: {}"), "app.yml");
    expectInvalid(await remove("dynamic", "app.yml"), "app.yml");
    expect((await stat(path.join(dynamicDirectory(), "app.yml"))).isDirectory()).toBe(true);
  });
});

describe("holders of proxy files (issue 22, finding 9)", () => {
  const other: ProxyFileHolder = { owner: { organizationId: "org-b", resource: "application:app-b" } };
  const platform: ProxyFileHolder = { platformFile: true };

  it("refuses to read, overwrite or remove another holder's dynamic or certificate file", async () => {
    for (const [scope, fileName] of [
      ["dynamic", "shared.yml"],
      ["certificate", "shared.pem"],
    ] as const) {
      expect((await write(scope, fileName, "mine: 1\n")).result).toBe("proxyFileWritten");
      for (const intruder of [other, platform]) {
        expect(await read(scope, fileName, intruder)).toMatchObject({
          error: { code: "FAILED_PRECONDITION" },
        });
        expect(await write(scope, fileName, "theirs: 1\n", intruder)).toMatchObject({
          error: { code: "FAILED_PRECONDITION" },
        });
        expect(await remove(scope, fileName, intruder)).toMatchObject({
          error: { code: "FAILED_PRECONDITION" },
        });
      }
      const file = path.join(scope === "dynamic" ? dynamicDirectory() : certificatesDirectory(), fileName);
      expect(await readFile(file, "utf8")).toBe("mine: 1\n");
      expect(await read(scope, fileName)).toMatchObject({
        proxyFile: { exists: true, content: "mine: 1\n" },
      });
      expect(await remove(scope, fileName)).toMatchObject({ proxyFileRemoved: { removed: true } });
      // Once removed the name is free again.
      expect((await write(scope, fileName, "theirs: 1\n", other)).result).toBe("proxyFileWritten");
    }
  });

  it("the platform's own file is not a tenant's to touch", async () => {
    expect((await write("dynamic", "platform-route.yml", "route: 1\n", platform)).result).toBe(
      "proxyFileWritten",
    );
    expect(await remove("dynamic", "platform-route.yml")).toMatchObject({
      error: { code: "FAILED_PRECONDITION" },
    });
    expect(await read("dynamic", "platform-route.yml", platform)).toMatchObject({
      proxyFile: { exists: true },
    });
  });

  it("a dynamic or certificate command without a holder, or with both, is refused; traefik.yml takes no owner", async () => {
    expectInvalid(await write("dynamic", "x.yml", "a: 1\n", {}), "owner");
    expectInvalid(await read("certificate", "x.pem", {}), "owner");
    expectInvalid(await remove("dynamic", "x.yml", { ...tenant, platformFile: true }), "owner");
    const staticWithOwner = await send({
      command: "writeProxyFile",
      writeProxyFile: { scope: "static", fileName: "", content: "a: 1\n", ...tenant },
    });
    expectInvalid(staticWithOwner, "owner");
  });
});

describe("listing the dynamic directory (listProxyFiles, settings.readDirectories)", () => {
  const list = () => send({ command: "listProxyFiles", listProxyFiles: {} });

  it("answers no files when the directory was never created, and creates none", async () => {
    expect(await list()).toMatchObject({ result: "proxyFileList", proxyFileList: { files: [] } });
    expect(await tree(mainDirectory)).toEqual([]);
  });

  it("lists the configuration files with their recorded holders, and nothing else that lies there", async () => {
    await write("dynamic", "b-app.yml", "http: {}\n");
    await write("dynamic", "a-platform.yaml", "http: {}\n", { platformFile: true });
    await write("certificate", "key.pem", "PEM");
    await writeFile(path.join(dynamicDirectory(), "c-unheld.yml"), "http: {}\n");
    await writeFile(path.join(dynamicDirectory(), "notes.txt"), "not configuration");
    await writeFile(path.join(dynamicDirectory(), ".hidden.yml"), "http: {}\n");
    await writeFile(path.join(outside, "secret.yml"), "outside");
    await symlink(path.join(outside, "secret.yml"), path.join(dynamicDirectory(), "d-link.yml"));
    await mkdir(path.join(dynamicDirectory(), "e-dir.yml"));

    const reply = await list();
    expect(reply).toMatchObject({ result: "proxyFileList" });
    if (reply.result !== "proxyFileList") return;
    expect(reply.proxyFileList.files).toEqual([
      { fileName: "a-platform.yaml", platformFile: true },
      { fileName: "b-app.yml", owner: tenant.owner, platformFile: false },
      { fileName: "c-unheld.yml", platformFile: false },
    ]);
  });

  it("refuses a dynamic directory that is a link pointing outside, listing nothing of it", async () => {
    await mkdir(proxyDirectory(), { recursive: true });
    await writeFile(path.join(outside, "secret.yml"), "outside");
    await symlink(outside, dynamicDirectory());
    const reply = await list();
    expectInvalid(reply, dynamicDirectory());
    expect(JSON.stringify(reply)).not.toContain("secret.yml");
  });
});
