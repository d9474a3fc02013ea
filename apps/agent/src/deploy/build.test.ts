/**
 * buildImage against the real Docker Engine and a real git server: Dockerfile builds from git
 * (with HTTP credentials) and from archives, static sites, build secrets, refused sources and
 * paths, cancellation and the missing-tool message.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  asReceived,
  type BuildImageCommand,
  builderFix,
  type CommandInput,
  type CommandReply,
  type Init,
  makeCommandRequest,
} from "@platform/agent-protocol";
import { ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { type ArchiveEntry, makeTarGz, makeZip } from "../testing/archives.ts";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../testing/docker.ts";
import { type GitServer, startGitServer } from "../testing/git-server.ts";
import { DEFAULT_ARCHIVE_LIMITS } from "./archive.ts";
import { cliBuild } from "./build.ts";
import { Deployer } from "./index.ts";
import { LogStream, SecretMasker } from "./log-stream.ts";
import { LogCollector } from "./test-support.ts";

const serverId = "deploy-build-test";
const STATIC_IMAGE = "platform-test/static-httpd:latest";
let docker: Docker;
let core: AgentCore;
let mainDirectory: string;
let scratch: string;
let git: GitServer;
const logs = new LogCollector();
const images: string[] = [];
const containers: string[] = [];
const prefix = uniqueName("build").toLowerCase();

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 600_000)));
}

let jobCounter = 0;
/** A build command as the tests send it. */
type BuildCommand = Init<BuildImageCommand> &
  Pick<BuildImageCommand, "jobId" | "logStreamId" | "appName" | "imageName">;

function buildCommand(overrides: Init<BuildImageCommand>): BuildCommand {
  jobCounter++;
  const imageName = `platform-test/${prefix}-${jobCounter}:v1`;
  images.push(imageName);
  return {
    jobId: `job-${prefix}-${jobCounter}`,
    logStreamId: `stream-${prefix}-${jobCounter}`,
    appName: `${prefix}-app`,
    imageName,
    buildType: "dockerfile",
    git: { url: git.url("app"), branch: "main", httpUsername: "builder", httpPassword: "git-pa55word-xyz" },
    ...overrides,
  } as BuildCommand;
}

async function build(command: BuildCommand) {
  const reply = await send({ command: "buildImage", buildImage: command });
  return { reply, log: logs.text(command.logStreamId) };
}

/** Runs `image` with `command` and returns its stdout. */
async function runImage(image: string, command: string[]): Promise<string> {
  const name = uniqueName("build-run");
  containers.push(name);
  return dockerCli(["run", "--name", name, image, ...command]);
}

beforeAll(async () => {
  docker = await requireDocker();
  try {
    await docker.getImage(STATIC_IMAGE).inspect();
  } catch {
    throw new Error(`the test image ${STATIC_IMAGE} is missing: run scripts/build-static-test-image.sh`);
  }
  process.env.PLATFORM_STATIC_IMAGE = STATIC_IMAGE;
  process.env.PLATFORM_STATIC_IMAGE_FLAVOR = "busybox-httpd";
  mainDirectory = await mkdtemp(path.join(tmpdir(), "agent-build-main-"));
  scratch = await mkdtemp(path.join(tmpdir(), "agent-build-scratch-"));
  core = new AgentCore({ serverId, docker, mainDirectory, publishLogChunk: logs.publish });
  git = await startGitServer({ username: "builder", password: "git-pa55word-xyz" });
  await git.createRepo("app", {
    Dockerfile: `FROM ${TEST_IMAGE}\nARG GREETING=none\nCOPY site/ /www/\nRUN echo "greeting=$GREETING" > /www/greeting.txt\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
    "site/index.html": "hello from git v1\n",
  });
});

afterAll(async () => {
  for (const name of containers) await dockerCli(["rm", "-f", name]).catch(() => {});
  for (const image of images) await dockerCli(["rmi", "-f", image]).catch(() => {});
  await git?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("buildImage from git (dockerfile)", () => {
  it("clones with HTTP credentials, builds with build args, reports the commit and cleans the work directory", async () => {
    const command = buildCommand({ buildArgs: { GREETING: "bonjour" } });
    const { reply, log } = await build(command);
    if (reply.result !== "buildImage") throw new Error(JSON.stringify(reply));
    expect(reply.buildImage.imageName).toBe(command.imageName);
    expect(reply.buildImage.imageId).toMatch(/^sha256:/);
    expect(reply.buildImage.commitHash).toMatch(/^[0-9a-f]{40}$/);
    expect(reply.buildImage.commitMessage).toBe("initial commit");
    expect(await runImage(command.imageName, ["cat", "/www/index.html", "/www/greeting.txt"])).toBe(
      "hello from git v1\ngreeting=bonjour",
    );
    // The log shows the commands, never the git password.
    expect(log).toContain(
      "git -c protocol.ext.allow=never -c protocol.file.allow=never -c http.followRedirects=false clone --depth 1 --branch main",
    );
    expect(log).toContain("docker build");
    expect(log).not.toContain("git-pa55word-xyz");
    const chunks = logs.forStream(command.logStreamId);
    expect(chunks.map((chunk) => chunk.seq)).toEqual(chunks.map((_, index) => index));
    expect(chunks.at(-1)?.final).toBe(true);
    expect(chunks.filter((chunk) => chunk.final)).toHaveLength(1);
    // The work directory is gone.
    expect(await readdir(path.join(mainDirectory, "builds", command.appName))).toEqual([]);
  });

  it("fails with a clear error when the git credentials are wrong, without leaking them", async () => {
    const command = buildCommand({
      git: { url: git.url("app"), branch: "main", httpUsername: "builder", httpPassword: "wrong-secret-123" },
    });
    const { reply, log } = await build(command);
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    expect(JSON.stringify(reply)).not.toContain("wrong-secret-123");
    expect(log).not.toContain("wrong-secret-123");
    expect(log).toMatch(/git clone|Authentication failed|fatal/);
  });

  it("answers FAILED for a broken Dockerfile with the build output in the log", async () => {
    await git.createRepo("broken", {
      Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo "about to break: marker-4711" && exit 3\n`,
    });
    const command = buildCommand({
      git: {
        url: git.url("broken"),
        branch: "main",
        httpUsername: "builder",
        httpPassword: "git-pa55word-xyz",
      },
    });
    const { reply, log } = await build(command);
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    if (reply.result === "error") expect(reply.error.message).toMatch(/^docker build failed: /);
    expect(log).toContain("about to break: marker-4711");
    expect(log).toMatch(/error \(FAILED\): docker build failed/);
  });

  it("gives build secrets to RUN --mount=type=secret, never to the log or the image history", async () => {
    const secret = "bk-secret-value-9f8e7d";
    const secretSha = createHash("sha256").update(secret).digest("hex");
    await git.createRepo("secrets", {
      // The build prints the secret on purpose: the log must show it masked.
      Dockerfile: `FROM ${TEST_IMAGE}\nRUN --mount=type=secret,id=API_TOKEN cat /run/secrets/API_TOKEN && sha256sum /run/secrets/API_TOKEN | cut -c1-64 > /token.sha\n`,
    });
    const command = buildCommand({
      git: {
        url: git.url("secrets"),
        branch: "main",
        httpUsername: "builder",
        httpPassword: "git-pa55word-xyz",
      },
      buildSecrets: { API_TOKEN: secret },
      // A cached step would not print anything: the masking has to be exercised.
      noCache: true,
    });
    const { reply, log } = await build(command);
    if (reply.result !== "buildImage") throw new Error(JSON.stringify(reply));
    expect(await runImage(command.imageName, ["cat", "/token.sha"])).toBe(secretSha);
    expect(log).not.toContain(secret);
    expect(log).toContain("********");
    const history = await dockerCli([
      "history",
      "--no-trunc",
      "--format",
      "{{.CreatedBy}}",
      command.imageName,
    ]);
    expect(history).toContain("/run/secrets/API_TOKEN");
    expect(history).not.toContain(secret);
    const inspect = await dockerCli(["image", "inspect", command.imageName]);
    expect(inspect).not.toContain(secret);
  });

  it("builds a given stage with a Dockerfile and context in a build path", async () => {
    await git.createRepo("stages", {
      "services/web/docker/Web.dockerfile": `FROM ${TEST_IMAGE} AS first\nRUN echo first > /stage\nFROM ${TEST_IMAGE} AS second\nCOPY note.txt /note\nRUN echo second > /stage\n`,
      "services/web/ctx/note.txt": "from the context\n",
    });
    const command = buildCommand({
      git: {
        url: git.url("stages"),
        branch: "main",
        httpUsername: "builder",
        httpPassword: "git-pa55word-xyz",
      },
      buildPath: "services/web",
      dockerfile: "docker/Web.dockerfile",
      // The context is relative to the source root, the Dockerfile to the build path.
      dockerContextPath: "services/web/ctx",
      dockerBuildStage: "first",
    });
    const { reply } = await build(command);
    if (reply.result !== "buildImage") throw new Error(JSON.stringify(reply));
    expect(await runImage(command.imageName, ["cat", "/stage"])).toBe("first");
  });
});

describe("buildImage with submodules", () => {
  it("checks submodules out only when enabled, with the same credentials", async () => {
    await git.createRepo("library", { "lib.txt": "from the submodule\n" });
    await git.createRepo("with-sub", {
      Dockerfile: `FROM ${TEST_IMAGE}\nCOPY vendor/ /vendor/\nRUN ls /vendor > /vendor-list\n`,
      "vendor/.keep": "",
    });
    await git.addSubmodule("with-sub", "vendor/lib", "library", git.url("library"));
    const source = {
      url: git.url("with-sub"),
      branch: "main",
      httpUsername: "builder",
      httpPassword: "git-pa55word-xyz",
    };
    const withSubmodules = buildCommand({ git: { ...source, enableSubmodules: true } });
    const on = await build(withSubmodules);
    if (on.reply.result !== "buildImage") throw new Error(`${JSON.stringify(on.reply)}\n${on.log}`);
    expect(on.log).toContain("--recurse-submodules --shallow-submodules");
    expect(await runImage(withSubmodules.imageName, ["cat", "/vendor/lib/lib.txt"])).toBe(
      "from the submodule",
    );
    const without = buildCommand({ git: source });
    const off = await build(without);
    if (off.reply.result !== "buildImage") throw new Error(`${JSON.stringify(off.reply)}\n${off.log}`);
    expect(await runImage(without.imageName, ["ls", "-A", "/vendor/lib"])).toBe("");
  });

  it("gives the application's credentials to its own Git host only, never to a submodule's other host", async () => {
    const authorizations: string[] = [];
    const elsewhere = createServer((request, response) => {
      if (request.headers.authorization) authorizations.push(request.headers.authorization);
      response.writeHead(401, { "WWW-Authenticate": 'Basic realm="elsewhere"' }).end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = elsewhere.address() as AddressInfo;
      await git.createRepo("foreign-library", { "lib.txt": "elsewhere\n" });
      await git.createRepo("foreign-sub", { Dockerfile: `FROM ${TEST_IMAGE}\n` });
      await git.addSubmodule(
        "foreign-sub",
        "vendor",
        "foreign-library",
        `http://127.0.0.1:${port}/library.git`,
      );
      const command = buildCommand({
        git: {
          url: git.url("foreign-sub"),
          branch: "main",
          httpUsername: "builder",
          httpPassword: "git-pa55word-xyz",
          enableSubmodules: true,
        },
      });
      const { reply, log } = await build(command);
      // The other host asked for credentials and got none; the repository itself was cloned with them.
      expect(authorizations).toEqual([]);
      expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
      expect(log).toMatch(/could not read Username for 'http:\/\/127\.0\.0\.1:\d+'/);
      expect(log).toMatch(/Submodule 'vendor' .* registered/);
    } finally {
      await new Promise<void>((resolve) => elsewhere.close(() => resolve()));
    }
  });

  it("never follows a submodule through the file transport", async () => {
    await git.createRepo("file-sub", { Dockerfile: `FROM ${TEST_IMAGE}\n` });
    await git.addSubmodule(
      "file-sub",
      "stolen",
      "library",
      pathToFileURL(path.join(git.root, "library.git")).href,
    );
    const command = buildCommand({
      git: {
        url: git.url("file-sub"),
        branch: "main",
        httpUsername: "builder",
        httpPassword: "git-pa55word-xyz",
        enableSubmodules: true,
      },
    });
    const { reply, log } = await build(command);
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    expect(log).toMatch(/transport 'file' not allowed/);
  });

  it("follows submodules only over https, http and ssh (no git:// either)", async () => {
    await git.createRepo("git-protocol-sub", { Dockerfile: `FROM ${TEST_IMAGE}\n` });
    await git.addSubmodule("git-protocol-sub", "elsewhere", "library", "git://127.0.0.1:9/library.git");
    const command = buildCommand({
      git: {
        url: git.url("git-protocol-sub"),
        branch: "main",
        httpUsername: "builder",
        httpPassword: "git-pa55word-xyz",
        enableSubmodules: true,
      },
    });
    const { reply, log } = await build(command);
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    expect(log).toMatch(/transport 'git' not allowed/);
  });
});

describe("buildImage does not follow HTTP redirects", () => {
  it("refuses a Git server that redirects elsewhere (the control plane checked only the first host)", async () => {
    let redirected = 0;
    const redirector = createServer((request, response) => {
      redirected++;
      response.writeHead(302, { location: `${git.baseUrl}${request.url}` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = redirector.address() as AddressInfo;
      const command = buildCommand({
        git: {
          url: `http://127.0.0.1:${port}/app.git`,
          branch: "main",
          httpUsername: "builder",
          httpPassword: "git-pa55word-xyz",
        },
      });
      const { reply, log } = await build(command);
      expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
      expect(redirected).toBeGreaterThan(0);
      expect(log).toMatch(/redirect/i);
      expect(log).toContain("http.followRedirects=false");
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });
});

describe("buildImage refuses dangerous sources and paths", () => {
  const marker = () =>
    path.join(tmpdir(), `platform-marker-${process.pid}-${Math.random().toString(36).slice(2)}`);

  it.each([
    ["ext:: transport", (m: string) => `ext::sh -c touch% ${m}`],
    ["ext:: without spaces", (m: string) => `ext::/bin/touch%20${m}`],
    ["--upload-pack option", (m: string) => `--upload-pack=touch ${m}`],
    ["--upload-pack inside an ssh URL", (m: string) => `ssh://host/--upload-pack=touch${m}`],
    ["host starting with -", (m: string) => `ssh://-oProxyCommand=touch${m}/repo`],
    ["scp-like host starting with -", (m: string) => `-oProxyCommand=touch${m}:repo`],
    ["file: URL", (_m: string) => "file:///etc"],
    ["credentials in the URL", (_m: string) => "https://user:pw@example.com/repo.git"],
    ["control characters", (_m: string) => "https://example.com/repo\n.git"],
  ])("git url with %s -> INVALID_ARGUMENT, no marker file", async (_label, makeUrl) => {
    const markerFile = marker();
    const command = buildCommand({ git: { url: makeUrl(markerFile), branch: "main" } });
    const { reply } = await build(command);
    expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    if (reply.result === "error") expect(reply.error.message).toMatch(/^git\.url: /);
    expect(existsSync(markerFile)).toBe(false);
  });

  it.each([
    "main;touch /tmp/x",
    "main && touch /tmp/x",
    "$(touch /tmp/x)",
    "-b",
    "a..b",
    "feature/.hidden",
    "x.lock",
    "`id`",
    "a b",
  ])("branch %j -> INVALID_ARGUMENT", async (branch) => {
    const markerFile = "/tmp/x";
    const before = existsSync(markerFile);
    const command = buildCommand({ git: { url: git.url("app"), branch } });
    const { reply } = await build(command);
    expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    if (reply.result === "error") expect(reply.error.message).toMatch(/^git\.branch: /);
    expect(existsSync(markerFile)).toBe(before);
  });

  it.each([
    ["buildPath", { buildPath: "../outside" }],
    ["buildPath", { buildPath: "/etc" }],
    ["dockerfile", { dockerfile: "../../etc/passwd" }],
    ["dockerContextPath", { dockerContextPath: "a/../../b" }],
    ["publishDirectory", { publishDirectory: "dist/\u0000x" }],
  ])("%s escaping the source -> INVALID_ARGUMENT", async (field, overrides) => {
    const { reply } = await build(buildCommand(overrides));
    expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    if (reply.result === "error") expect(reply.error.message.startsWith(`${field}: `)).toBe(true);
  });

  it("refuses a Dockerfile that is a symlink leading outside the source", async () => {
    await git.createRepo("linked", { "README.md": "x" });
    // git stores the symlink; the clone recreates it.
    const work = await mkdtemp(path.join(scratch, "link-"));
    await symlink("/etc/passwd", path.join(work, "Dockerfile"));
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const run = promisify(execFile);
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    };
    await run("git", ["clone", "--quiet", path.join(git.root, "linked.git"), path.join(work, "clone")], {
      env,
    });
    await rm(path.join(work, "clone", "README.md"));
    await symlink("/etc/passwd", path.join(work, "clone", "Dockerfile"));
    await run("git", ["add", "-A"], { cwd: path.join(work, "clone"), env });
    await run("git", ["commit", "-qm", "link"], { cwd: path.join(work, "clone"), env });
    await run("git", ["push", "-q", "origin", "HEAD:main"], { cwd: path.join(work, "clone"), env });
    const command = buildCommand({
      git: {
        url: git.url("linked"),
        branch: "main",
        httpUsername: "builder",
        httpPassword: "git-pa55word-xyz",
      },
    });
    const { reply } = await build(command);
    expect(reply).toMatchObject({
      result: "error",
      error: { code: "INVALID_ARGUMENT", message: "dockerfile: points outside the source" },
    });
  });
});

describe("buildImage from archives", () => {
  const site = (version: string): ArchiveEntry[] => [
    { name: "app/", type: "directory" },
    { name: "app/Dockerfile", content: `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\n` },
    { name: "app/index.html", content: `archive ${version}\n` },
    { name: "app/link-inside", type: "symlink", target: "index.html" },
  ];

  async function archiveCommand(
    format: "tar.gz" | "zip",
    data: Buffer,
    overrides: Init<BuildImageCommand> = {},
  ) {
    const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.${format}`);
    await writeFile(file, data);
    const sha256 = createHash("sha256").update(data).digest("hex");
    return buildCommand({
      git: undefined,
      archive: { url: pathToFileURL(file).href, format, sha256 },
      ...overrides,
    } as never);
  }

  it.each(["tar.gz", "zip"] as const)("builds from a %s archive with a build path", async (format) => {
    const data = format === "zip" ? makeZip(site(format)) : makeTarGz(site(format));
    const command = await archiveCommand(format, data, { buildPath: "app" });
    const { reply, log } = await build(command);
    if (reply.result !== "buildImage") throw new Error(`${JSON.stringify(reply)}\n${log}`);
    expect(await runImage(command.imageName, ["cat", "/www/index.html"])).toBe(`archive ${format}`);
  });

  it("downloads an archive over HTTP; size and entry caps refuse oversized ones", async () => {
    const data = makeTarGz(site("http"));
    const served = createServer((req, res) => {
      if (req.url === "/redirect") res.writeHead(302, { location: "/archive" }).end();
      else res.writeHead(200, { "content-type": "application/gzip" }).end(data);
    });
    await new Promise<void>((resolve) => served.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(served.address() as AddressInfo).port}`;
    try {
      const sha256 = createHash("sha256").update(data).digest("hex");
      const archive = { url: `${base}/archive`, format: "tar.gz" as const, sha256 };
      const command = buildCommand({ git: undefined, archive, buildPath: "app" } as never);
      const { reply, log } = await build(command);
      if (reply.result !== "buildImage") throw new Error(`${JSON.stringify(reply)}\n${log}`);
      expect(await runImage(command.imageName, ["cat", "/www/index.html"])).toBe("archive http");

      const redirected = await build(
        buildCommand({ git: undefined, archive: { ...archive, url: `${base}/redirect` } } as never),
      );
      expect(redirected.reply).toMatchObject({ result: "error", error: { code: "FAILED" } });

      const limited = (limits: Partial<typeof DEFAULT_ARCHIVE_LIMITS>) =>
        new Deployer({
          docker,
          agentMark: "build-test",
          mainDirectory,
          publishLogChunk: logs.publish,
          archiveLimits: { ...DEFAULT_ARCHIVE_LIMITS, ...limits },
        });
      await expect(
        limited({ maxDownloadBytes: 100 }).buildImage(
          asReceived("BuildImageCommand", buildCommand({ git: undefined, archive } as never)),
        ),
      ).rejects.toMatchObject({ code: "FAILED", message: "the archive is larger than 100 bytes" });
      await expect(
        limited({ maxEntries: 2 }).buildImage(
          asReceived("BuildImageCommand", buildCommand({ git: undefined, archive } as never)),
        ),
      ).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: "archive: more than 2 entries" });
      await expect(
        limited({ maxUnpackedBytes: 10 }).buildImage(
          asReceived("BuildImageCommand", buildCommand({ git: undefined, archive } as never)),
        ),
      ).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: "archive: unpacks to more than 10 bytes",
      });
    } finally {
      served.closeAllConnections();
      await new Promise((resolve) => served.close(resolve));
    }
  });

  it("refuses an archive whose SHA-256 does not match", async () => {
    const command = await archiveCommand("tar.gz", makeTarGz(site("x")));
    if (!command.archive) throw new Error("no archive");
    command.archive.sha256 = "0".repeat(64);
    const { reply } = await build(command);
    expect(reply).toMatchObject({
      result: "error",
      error: { code: "FAILED", message: "the archive does not match its SHA-256" },
    });
  });

  const outside = () => path.join(scratch, `escaped-${Math.random().toString(36).slice(2)}`);

  it.each(["tar.gz", "zip"] as const)(
    "refuses %s entries that would leave the directory; nothing appears outside",
    async (format) => {
      const escapeName = path.basename(outside());
      const attacks: [string, ArchiveEntry[]][] = [
        ["..", [{ name: `../../../../../../${escapeName}`, content: "pwned" }]],
        ["absolute", [{ name: path.join(scratch, escapeName), content: "pwned" }]],
        [
          "symlink escape",
          [
            { name: "evil", type: "symlink", target: scratch },
            { name: `evil/${escapeName}`, content: "pwned" },
          ],
        ],
        ["symlink to an absolute path", [{ name: "passwd", type: "symlink", target: "/etc/passwd" }]],
        ["symlink with ..", [{ name: "up", type: "symlink", target: "../../../.." }]],
        ["device", [{ name: "dev", type: "chardev" }]],
      ];
      if (format === "tar.gz") {
        attacks.push(["hard link outside", [{ name: "hard", type: "hardlink", target: "../../etc/passwd" }]]);
        attacks.push([
          "symlink chain",
          [
            { name: "a", type: "symlink", target: "." },
            { name: "c", type: "symlink", target: "a/.." },
            { name: "h", type: "hardlink", target: "c/etc/passwd" },
          ],
        ]);
      }
      for (const [label, entries] of attacks) {
        const data =
          format === "zip" ? makeZip([...site("x"), ...entries]) : makeTarGz([...site("x"), ...entries]);
        const command = await archiveCommand(format, data);
        const { reply } = await build(command);
        expect(reply, label).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
        if (reply.result === "error") expect(reply.error.message, label).toMatch(/^archive: /);
      }
      expect(existsSync(path.join(scratch, escapeName))).toBe(false);
      expect(existsSync(path.join(mainDirectory, escapeName))).toBe(false);
      expect(existsSync(path.join("/", escapeName))).toBe(false);
    },
  );
});

describe("static builds", () => {
  it("serves publishDirectory, with the SPA fallback to index.html", async () => {
    await git.createRepo("static", {
      "dist/index.html": "<h1>static spa</h1>\n",
      "dist/about.html": "about page\n",
      "src/secret.ts": "not published",
    });
    const command = buildCommand({
      git: {
        url: git.url("static"),
        branch: "main",
        httpUsername: "builder",
        httpPassword: "git-pa55word-xyz",
      },
      buildType: "static",
      publishDirectory: "dist",
      isStaticSpa: true,
    });
    const { reply, log } = await build(command);
    if (reply.result !== "buildImage") throw new Error(`${JSON.stringify(reply)}\n${log}`);
    const name = uniqueName("static-run");
    containers.push(name);
    await dockerCli(["run", "-d", "--name", name, command.imageName]);
    // busybox wget inside the container: the site, another page, and an unknown route.
    const get = (route: string) =>
      dockerCli(["exec", name, "wget", "-q", "-O-", `http://127.0.0.1:80${route}`]).catch(
        (error) => `ERR ${(error as { stdout?: string }).stdout ?? ""}`,
      );
    let index = "";
    for (let attempt = 0; attempt < 20 && !index.includes("static spa"); attempt++) {
      index = await get("/");
      if (!index.includes("static spa")) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(index).toContain("<h1>static spa</h1>");
    expect(await get("/about.html")).toBe("about page");
    // Unknown path: the SPA's index.html (busybox httpd serves it as its 404 page).
    const fallback = await dockerCli([
      "exec",
      name,
      "sh",
      "-c",
      'printf "GET /some/client/route HTTP/1.0\r\n\r\n" | nc 127.0.0.1 80',
    ]);
    expect(fallback).toContain("<h1>static spa</h1>");
    expect(await get("/src/secret.ts")).not.toContain("not published");
  });
});

describe("jobs", () => {
  it("cancelJob stops a slow build with CANCELLED; an unknown job is not cancelled", async () => {
    await git.createRepo("slow", {
      Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo starting-slow-step && sleep 60\n`,
    });
    const command = buildCommand({
      git: {
        url: git.url("slow"),
        branch: "main",
        httpUsername: "builder",
        httpPassword: "git-pa55word-xyz",
      },
      noCache: true,
    });
    const started = send({ command: "buildImage", buildImage: command });
    // Wait until the slow step runs.
    for (
      let attempt = 0;
      attempt < 300 && !logs.text(command.logStreamId).includes("starting-slow-step");
      attempt++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(logs.text(command.logStreamId)).toContain("starting-slow-step");
    const cancel = await send({ command: "cancelJob", cancelJob: { jobId: command.jobId } });
    expect(cancel).toMatchObject({ result: "cancelJob", cancelJob: { cancelled: true } });
    const reply = await started;
    expect(reply).toMatchObject({ result: "error", error: { code: "CANCELLED" } });
    expect(logs.forStream(command.logStreamId).at(-1)?.final).toBe(true);
    await expect(docker.getImage(command.imageName).inspect()).rejects.toThrow();
    const again = await send({ command: "cancelJob", cancelJob: { jobId: command.jobId } });
    expect(again).toMatchObject({ result: "cancelJob", cancelJob: { cancelled: false } });
  }, 60_000);

  it("names the missing tool for CLI build types when the repository has no Dockerfile", async () => {
    await git.createRepo("no-dockerfile", { "index.html": "no Dockerfile here\n" });
    const deployer = new Deployer({
      docker,
      agentMark: "build-test",
      mainDirectory,
      publishLogChunk: logs.publish,
      toolSearchPath: "/nonexistent",
    });
    for (const [buildType, tool] of [
      ["nixpacks", "nixpacks"],
      ["railpack", "railpack"],
      ["heroku_buildpacks", "pack"],
      ["paketo_buildpacks", "pack"],
    ] as const) {
      const command = buildCommand({
        buildType,
        git: {
          url: git.url("no-dockerfile"),
          branch: "main",
          httpUsername: "builder",
          httpPassword: "git-pa55word-xyz",
        },
      });
      await expect(deployer.buildImage(asReceived("BuildImageCommand", command))).rejects.toMatchObject({
        code: "FAILED",
        message: `${tool} is not installed on this server (needed for the ${buildType} build type): ${builderFix(tool)}`,
      });
      expect(logs.text(command.logStreamId)).toContain(`${tool} is not installed`);
    }
  });

  it("builds the repository's Dockerfile when the CLI builder of the build type is not installed", async () => {
    const deployer = new Deployer({
      docker,
      agentMark: "build-test",
      mainDirectory,
      publishLogChunk: logs.publish,
      toolSearchPath: "/nonexistent",
    });
    for (const [buildType, tool] of [
      ["nixpacks", "nixpacks"],
      ["paketo_buildpacks", "pack"],
    ] as const) {
      const command = buildCommand({ buildType, buildArgs: { GREETING: buildType } });
      const result = await deployer.buildImage(asReceived("BuildImageCommand", command));
      expect(result.imageName).toBe(command.imageName);
      expect(logs.text(command.logStreamId)).toContain(
        `${tool} is not installed on this server: building with the repository's Dockerfile instead of ${buildType}`,
      );
      expect(await runImage(command.imageName, ["cat", "/www/greeting.txt"])).toBe(`greeting=${buildType}`);
    }
  });

  it("looks for CLI builders in the core's toolSearchPath", async () => {
    const bin = await mkdtemp(path.join(scratch, "tools-"));
    await writeFile(path.join(bin, "nixpacks"), "#!/bin/sh\necho 'fake nixpacks ran' >&2\nexit 3\n", {
      mode: 0o755,
    });
    const withTools = new AgentCore({
      serverId,
      docker,
      mainDirectory,
      publishLogChunk: logs.publish,
      toolSearchPath: bin,
    });
    const command = buildCommand({ buildType: "nixpacks" });
    const reply = await withTools.handle(
      asReceived(makeCommandRequest(serverId, { command: "buildImage", buildImage: command }, 600_000)),
    );
    expect(reply).toMatchObject({
      result: "error",
      error: { code: "FAILED", message: "nixpacks build failed: fake nixpacks ran" },
    });
    expect(logs.text(command.logStreamId)).toContain(`$ nixpacks build`);
  });

  it("cleanBuildCache prunes the builder cache", async () => {
    const reply = await send({ command: "cleanBuildCache", cleanBuildCache: {} });
    if (reply.result !== "cleanBuildCache") throw new Error(JSON.stringify(reply));
    expect(reply.cleanBuildCache.reclaimedBytes).toBeGreaterThanOrEqual(0);
  });
});

describe("ownership labels of built images, every build type (issue 22, finding 9)", () => {
  const owner = { organizationId: "org-labels", resource: `application:${prefix}` };
  const expected = { ...ownershipLabels(owner), "platform.app": `${prefix}-app` };
  const imageLabels = async (image: string) =>
    ((await docker.getImage(image).inspect()) as { Config: { Labels: Record<string, string> | null } }).Config
      .Labels ?? {};

  /**
   * A stand-in for a CLI builder that is not installed here: it records its argv and builds an
   * image WITHOUT labels through the real engine, as a builder ignoring label options would.
   */
  async function fakeBuilders(): Promise<string> {
    const bin = await mkdtemp(path.join(scratch, "builders-"));
    const script = `#!/bin/sh
printf '%s\\n' "$@" >> "$0.argv"
case "$(basename "$0")" in
  nixpacks) image="$4" ;;
  pack) image="$2" ;;
  railpack) [ "$1" = "--version" ] && echo "railpack 0.2.0"; exit 0 ;;
  docker) exit 0 ;;
esac
dir=$(mktemp -d)
printf 'FROM ${TEST_IMAGE}\\nCMD ["true"]\\n' > "$dir/Dockerfile"
DOCKER_BUILDKIT=0 exec docker build -q -t "$image" "$dir"
`;
    for (const tool of ["nixpacks", "pack", "railpack", "docker"])
      await writeFile(path.join(bin, tool), script, { mode: 0o755 });
    return bin;
  }

  it("dockerfile and static builds carry the owner's labels (real engine)", async () => {
    const dockerfile = buildCommand({ owner });
    const built = await build(dockerfile);
    expect(built.reply.result, built.log).toBe("buildImage");
    expect(await imageLabels(dockerfile.imageName)).toMatchObject(expected);
    const site = buildCommand({ owner, buildType: "static", publishDirectory: "site" });
    const builtSite = await build(site);
    expect(builtSite.reply.result, builtSite.log).toBe("buildImage");
    expect(await imageLabels(site.imageName)).toMatchObject(expected);
  });

  it("nixpacks, heroku and paketo builds carry them even when the builder drops them (real engine)", async () => {
    const bin = await fakeBuilders();
    const withTools = new Deployer({
      docker,
      agentMark: "build-test",
      mainDirectory,
      publishLogChunk: logs.publish,
      toolSearchPath: bin,
    });
    for (const buildType of ["nixpacks", "heroku_buildpacks", "paketo_buildpacks"] as const) {
      const command = buildCommand({ owner, buildType, herokuVersion: "22" });
      await withTools.buildImage(asReceived("BuildImageCommand", command));
      expect(await imageLabels(command.imageName), buildType).toMatchObject(expected);
    }
    // herokuVersion picks the Heroku builder's stack (paketo's builder is fixed).
    const packArgv = (await readFile(path.join(bin, "pack.argv"), "utf8")).split("\n");
    expect(packArgv).toContain("heroku/builder:22");
    expect(packArgv).toContain("paketobuildpacks/builder-jammy-full");
    // nixpacks is also given them as its own option.
    const argv = (await readFile(path.join(bin, "nixpacks.argv"), "utf8")).split("\n");
    expect(argv).toContain("--label");
    expect(argv).toContain(`platform.organization=${owner.organizationId}`);
    expect(argv).toContain(`platform.resource=${owner.resource}`);
  });

  it("railpack's docker build is given the labels (argv: its BuildKit frontend cannot run here)", async () => {
    const bin = await fakeBuilders();
    const cli = { command: path.join(bin, "docker"), env: { PATH: process.env.PATH }, buildKit: true };
    const command = buildCommand({ owner, buildType: "railpack", railpackVersion: "0.9.1" });
    const sourceDir = await mkdtemp(path.join(scratch, "railpack-src-"));
    const log = new LogStream("railpack-argv", logs.publish, new SecretMasker([]));
    await cliBuild(
      "railpack",
      asReceived("BuildImageCommand", command),
      sourceDir,
      cli,
      bin,
      log,
      new AbortController().signal,
      expected,
    );
    const argv = (await readFile(path.join(bin, "docker.argv"), "utf8")).split("\n");
    expect(argv.slice(0, 1)).toEqual(["build"]);
    // railpackVersion picks the BuildKit frontend (not the installed railpack's 0.2.0).
    expect(argv).toContain("BUILDKIT_SYNTAX=ghcr.io/railwayapp/railpack-frontend:v0.9.1");
    for (const [key, value] of Object.entries(expected)) {
      const at = argv.indexOf(`${key}=${value}`);
      expect(at, key).toBeGreaterThan(0);
      expect(argv[at - 1]).toBe("--label");
    }
  });
});
