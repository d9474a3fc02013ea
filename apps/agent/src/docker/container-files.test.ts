/**
 * containerFiles against the real Docker Engine, through the archive API only: LIST, READ and
 * WRITE in a container of the scope's organization; paths normalised inside the container's root
 * (`..`, NUL refused); a binary file refused for reading; a file over the limit truncated; a
 * symbolic link pointing out of the container never reaching the host; another organization's
 * container NOT_FOUND with nothing read or written. DELETE through the exec API: the file or
 * directory gone, a path with shell syntax removing only the file of that literal name, `/` and
 * system directories refused, a stopped container and one without `rm` FAILED_PRECONDITION.
 */
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  type ContainerFilesResult,
  makeCommandRequest,
} from "@platform/agent-protocol";
import { ORGANIZATION_LABEL } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import {
  dockerCli,
  removeContainer,
  requireDocker,
  runTestContainer,
  TEST_IMAGE,
  uniqueName,
} from "../testing/docker.ts";
import { checkDeletablePath, MAX_TEXT_FILE_BYTES, normaliseContainerPath } from "./container-files.ts";

const serverId = "container-files-test";
let docker: Docker;
let core: AgentCore;
const mine = uniqueName("files-mine");
const theirs = uniqueName("files-theirs");
const stopped = uniqueName("files-stopped");
const noRm = uniqueName("files-norm");
const scope = { organizationId: "org-files", includeUnmanaged: false };
const setup = [
  "mkdir -p /data/sub/deeper",
  "printf 'hello\\nworld\\n' > /data/hello.txt",
  "printf 'caf\\303\\251' > /data/utf8.txt",
  "printf 'a\\000b' > /data/binary.bin",
  "chown 1234:2345 /data/hello.txt && chmod 600 /data/hello.txt",
  "head -c 600000 /dev/zero | tr '\\0' 'x' > /data/big.txt",
  "ln -s /etc/hostname /data/link",
  "printf 'secret' > /data/theirs.txt",
  "printf 'bye' > /data/gone.txt && mkdir -p /data/tree/a/b && printf 'x' > /data/tree/a/b/f",
  // A directory `x; touch ` holding tmp/pwned: the literal target of "/tmp/x; touch /tmp/pwned".
  "mkdir -p '/tmp/x; touch /tmp' && printf 'literal' > '/tmp/x; touch /tmp/pwned' && printf 'keep' > /tmp/x",
  "sleep 300",
].join(" && ");

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 60_000)));
}

async function files(args: Record<string, unknown>, containerId = mine): Promise<ContainerFilesResult> {
  const reply = await send({ command: "containerFiles", containerFiles: { containerId, scope, ...args } });
  if (reply.result !== "containerFiles") throw new Error(JSON.stringify(reply));
  return reply.containerFiles;
}

async function failure(args: Record<string, unknown>, containerId = mine) {
  const reply = await send({ command: "containerFiles", containerFiles: { containerId, scope, ...args } });
  if (reply.result !== "error") throw new Error(`expected an error, got ${JSON.stringify(reply)}`);
  return reply.error;
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");

beforeAll(async () => {
  docker = await requireDocker();
  core = new AgentCore({ serverId, docker, mainDirectory: "/nonexistent", toolSearchPath: "/nonexistent" });
  await runTestContainer(mine, ["sh", "-c", setup], { [ORGANIZATION_LABEL]: "org-files" });
  await runTestContainer(theirs, ["sh", "-c", setup], { [ORGANIZATION_LABEL]: "org-other" });
  await dockerCli([
    "create",
    "--name",
    stopped,
    "--label",
    "platform.test=agent",
    "--label",
    `${ORGANIZATION_LABEL}=org-files`,
    TEST_IMAGE,
    "sleep",
    "300",
  ]);
  await runTestContainer(
    noRm,
    [
      "sh",
      "-c",
      "rm -f /bin/rm /usr/bin/rm /sbin/rm /usr/sbin/rm && mkdir -p /data && printf 'k' > /data/k && sleep 300",
    ],
    {
      [ORGANIZATION_LABEL]: "org-files",
    },
  );
  // The set-up script has run once the sleep is what the container does.
  for (let i = 0; i < 100; i += 1) {
    const top = await dockerCli(["exec", mine, "ls", "/data"]).catch(() => "");
    const other = await dockerCli(["exec", theirs, "ls", "/data"]).catch(() => "");
    const withoutRm = await dockerCli(["exec", noRm, "ls", "/data"]).catch(() => "");
    if (top.includes("theirs.txt") && other.includes("theirs.txt") && withoutRm.includes("k")) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 60_000);

afterAll(async () => {
  for (const name of [mine, theirs, stopped, noRm]) await removeContainer(name);
});

describe("normaliseContainerPath", () => {
  it("makes paths absolute, drops '.' and empty segments, refuses '..', NUL and control characters", () => {
    expect(normaliseContainerPath("data//./hello.txt")).toBe("/data/hello.txt");
    expect(normaliseContainerPath("/")).toBe("/");
    for (const bad of ["/data/../etc/passwd", "..", "/a/..", "/a\u0000b", "/a\nb", "", "   "]) {
      expect(() => normaliseContainerPath(bad), bad).toThrow(/path/);
    }
  });
});

describe("containerFiles", () => {
  it("LIST answers a directory's entries, directories first", async () => {
    const { entries, partial } = await files({ operation: "LIST", path: "/data" });
    expect(partial).toBe(false);
    expect(entries).toEqual([
      { name: "sub", isDirectory: true },
      { name: "tree", isDirectory: true },
      { name: "big.txt", isDirectory: false },
      { name: "binary.bin", isDirectory: false },
      { name: "gone.txt", isDirectory: false },
      { name: "hello.txt", isDirectory: false },
      { name: "link", isDirectory: false },
      { name: "theirs.txt", isDirectory: false },
      { name: "utf8.txt", isDirectory: false },
    ]);
    const root = await files({ operation: "LIST", path: "/" });
    expect(root.entries).toContainEqual({ name: "data", isDirectory: true });
    expect(root.entries).toContainEqual({ name: "etc", isDirectory: true });
  }, 60_000);

  it("READ answers a text file; a longer one truncated at the limit", async () => {
    expect(text((await files({ operation: "READ", path: "data/hello.txt" })).content)).toBe("hello\nworld\n");
    expect(text((await files({ operation: "READ", path: "/data/utf8.txt" })).content)).toBe("café");
    const big = await files({ operation: "READ", path: "/data/big.txt" });
    expect(big.truncated).toBe(true);
    expect(big.content.length).toBe(MAX_TEXT_FILE_BYTES);
  }, 60_000);

  it("READ refuses a binary file, a directory, a symbolic link and a missing file, naming the path", async () => {
    expect(await failure({ operation: "READ", path: "/data/binary.bin" })).toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("binary"),
    });
    expect(await failure({ operation: "READ", path: "/data/sub" })).toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("directory"),
    });
    expect(await failure({ operation: "READ", path: "/data/link" })).toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("symbolic link"),
    });
    expect(await failure({ operation: "READ", path: "/data/missing" })).toMatchObject({ code: "NOT_FOUND" });
  }, 60_000);

  it("refuses '..' escapes and NUL before touching the container", async () => {
    for (const path of ["/data/../../etc/passwd", "../etc/hostname", "/data/hello.txt\u0000x"]) {
      expect(await failure({ operation: "READ", path })).toMatchObject({ code: "INVALID_ARGUMENT" });
    }
  });

  it("WRITE replaces a file keeping its owner and mode, creates a new one, refuses a missing directory", async () => {
    await files({ operation: "WRITE", path: "/data/hello.txt", content: Buffer.from("changed\n") });
    expect(await dockerCli(["exec", mine, "cat", "/data/hello.txt"])).toBe("changed");
    expect(await dockerCli(["exec", mine, "stat", "-c", "%u:%g %a", "/data/hello.txt"])).toBe(
      "1234:2345 600",
    );

    await files({ operation: "WRITE", path: "/data/sub/new.txt", content: Buffer.from("new") });
    expect(await dockerCli(["exec", mine, "cat", "/data/sub/new.txt"])).toBe("new");
    expect(await dockerCli(["exec", mine, "stat", "-c", "%u:%g %a", "/data/sub/new.txt"])).toBe("0:0 644");

    expect(
      await failure({ operation: "WRITE", path: "/nowhere/x.txt", content: Buffer.from("x") }),
    ).toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await failure({ operation: "WRITE", path: "/data/sub", content: Buffer.from("x") })).toMatchObject(
      {
        code: "INVALID_ARGUMENT",
      },
    );
  }, 60_000);

  it("answers NOT_FOUND for another organization's container: nothing read, nothing written", async () => {
    expect(await failure({ operation: "READ", path: "/data/theirs.txt" }, theirs)).toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await failure({ operation: "LIST", path: "/data" }, theirs)).toMatchObject({ code: "NOT_FOUND" });
    expect(
      await failure({ operation: "WRITE", path: "/data/theirs.txt", content: Buffer.from("taken") }, theirs),
    ).toMatchObject({ code: "NOT_FOUND" });
    expect(await dockerCli(["exec", theirs, "cat", "/data/theirs.txt"])).toBe("secret");
  }, 60_000);
});

describe("containerFiles DELETE", () => {
  const exists = (container: string, path: string) =>
    dockerCli(["exec", container, "test", "-e", path]).then(
      () => true,
      () => false,
    );

  it("checkDeletablePath refuses /, the top-level system directories and anything under /proc, /sys, /dev", () => {
    for (const bad of ["/", "/etc", "/usr", "/tmp", "/var", "/proc/1/root", "/sys/kernel", "/dev/null"]) {
      expect(() => checkDeletablePath(bad), bad).toThrow(/path/);
    }
    for (const good of ["/data", "/etc/app.conf", "/tmp/x", "/var/lib/app"]) checkDeletablePath(good);
  });

  it("removes a file and a whole directory: they are gone from the container", async () => {
    expect(await exists(mine, "/data/gone.txt")).toBe(true);
    await files({ operation: "DELETE", path: "/data/gone.txt" });
    expect(await exists(mine, "/data/gone.txt")).toBe(false);
    await files({ operation: "DELETE", path: "data/tree" });
    expect(await exists(mine, "/data/tree")).toBe(false);
    expect(await exists(mine, "/data/hello.txt")).toBe(true);
  }, 60_000);

  it("runs no shell: '/tmp/x; touch /tmp/pwned' removes the file of that literal name and nothing else", async () => {
    expect(await exists(mine, "/tmp/x; touch /tmp/pwned")).toBe(true);
    await files({ operation: "DELETE", path: "/tmp/x; touch /tmp/pwned" });
    expect(await exists(mine, "/tmp/x; touch /tmp/pwned")).toBe(false);
    // Neither was /tmp/pwned created nor the file /tmp/x removed.
    expect(await exists(mine, "/tmp/pwned")).toBe(false);
    expect(await dockerCli(["exec", mine, "cat", "/tmp/x"])).toBe("keep");
    // A missing path of the same kind: NOT_FOUND, and still nothing run.
    expect(await failure({ operation: "DELETE", path: "/tmp/y; touch /tmp/pwned2" })).toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await exists(mine, "/tmp/pwned2")).toBe(false);
  }, 60_000);

  it("refuses /, system directories, '..' and NUL without removing anything", async () => {
    for (const path of ["/", "/etc", "/proc/1", "/dev/null", "/data/../etc", "/data/hello.txt\u0000"]) {
      expect(await failure({ operation: "DELETE", path }), path).toMatchObject({ code: "INVALID_ARGUMENT" });
    }
    expect(await exists(mine, "/etc/hostname")).toBe(true);
  }, 60_000);

  it("answers NOT_FOUND for another organization's container, whose file stays", async () => {
    expect(await failure({ operation: "DELETE", path: "/data/theirs.txt" }, theirs)).toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await dockerCli(["exec", theirs, "cat", "/data/theirs.txt"])).toBe("secret");
  }, 60_000);

  it("answers FAILED_PRECONDITION for a stopped container and for one without rm", async () => {
    expect(await failure({ operation: "DELETE", path: "/etc/hostname" }, stopped)).toMatchObject({
      code: "FAILED_PRECONDITION",
      message: expect.stringContaining("not running"),
    });
    expect(await failure({ operation: "DELETE", path: "/data/k" }, noRm)).toMatchObject({
      code: "FAILED_PRECONDITION",
      message: expect.stringContaining("has no rm"),
    });
    expect(await exists(noRm, "/data/k")).toBe(true);
  }, 60_000);
});
