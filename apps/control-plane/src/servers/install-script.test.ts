/**
 * deploy/agent/install.sh refuses bad arguments, and an executable that does not match its
 * checksum, before it touches anything; the control plane serves it and the agent executable
 * for its architecture with the executable's sha256.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AGENT_VERSION } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { INSTALL_SCRIPT_PATH } from "./agent-artifact.ts";

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "../../../..");
let dir: string;
let platform: TestPlatform;

async function runScript(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await execFileAsync("sh", [INSTALL_SCRIPT_PATH, ...args], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        PLATFORM_AGENT_STATE_DIR: path.join(dir, "state"),
        PLATFORM_MAIN_DIR: path.join(dir, "main"),
        PLATFORM_AGENT_INSTALL_DIR: path.join(dir, "install"),
        ...env,
      },
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, output: failure.stdout + failure.stderr };
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "servers-install-"));
  // The agent executable is served from the build (made here when missing or stale).
  await execFileAsync("node", ["scripts/build.mjs", "--if-stale"], { cwd: repoRoot });
  platform = await startTestPlatform();
});

afterAll(async () => {
  await platform?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("install.sh arguments", () => {
  const token = "abcdefghijklmnopqrstuvwxyz012345";
  const url = "http://127.0.0.1:3000";

  it.each([
    [
      ["--control-plane-url", "http://cp;touch /tmp/pwned", "--enrollment-token", token],
      /--control-plane-url must be/,
    ],
    [["--control-plane-url", "http://cp$(id)", "--enrollment-token", token], /--control-plane-url must be/],
    [
      ["--control-plane-url", "file:///etc/passwd", "--enrollment-token", token],
      /--control-plane-url must be/,
    ],
    [["--control-plane-url", url, "--enrollment-token", "short"], /enrollment token is malformed/],
    [
      ["--control-plane-url", url, "--enrollment-token", "tok en`id`0123456789abcdef"],
      /enrollment token is malformed/,
    ],
    [["--control-plane-url", url], /no enrolled agent: give --enrollment-token/],
    [["--enrollment-token", token], /give --control-plane-url/],
    [
      ["--control-plane-url", url, "--enrollment-token", token, "--advertise-addr", "1.2.3.4;id"],
      /--advertise-addr/,
    ],
    [["--control-plane-url"], /needs a value/],
    [["--what"], /unknown argument: --what/],
  ])("refuses %j", async (args, message) => {
    const result = await runScript(args);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(message);
    expect(existsSync(path.join(dir, "state"))).toBe(false);
    expect(existsSync("/tmp/pwned")).toBe(false);
  });

  it.each([
    ["PLATFORM_AGENT_STATE_DIR", "relative/dir"],
    ["PLATFORM_AGENT_STATE_DIR", "/etc/platform/../../root"],
    ["PLATFORM_MAIN_DIR", "/tmp/x;id"],
    ["PLATFORM_AGENT_INSTALL_DIR", "/tmp/$(id)"],
  ])("refuses %s=%s", async (variable, value) => {
    const result = await runScript(["--control-plane-url", url, "--enrollment-token", token], {
      [variable]: value,
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain(`${variable} must be an absolute path`);
  });

  it("reads the token from a file and deletes the file", async () => {
    const tokenFile = path.join(dir, "token");
    await writeFile(tokenFile, "bad token with spaces\n");
    const result = await runScript(["--control-plane-url", url, "--enrollment-token-file", tokenFile]);
    expect(result.output).toMatch(/enrollment token is malformed/);
    expect(existsSync(tokenFile)).toBe(false);
  });

  it("documents itself", async () => {
    const result = await runScript(["--help"]);
    expect(result.code).toBe(0);
    expect(result.output).toMatch(/--enrollment-token-file FILE/);
  });
});

describe("GET /agent/install.sh, /agent/manifest.json and the agent executable", () => {
  it("serves the script, and the executable for this architecture with its sha256", async () => {
    const script = await platform.request("/agent/install.sh");
    expect(script.status).toBe(200);
    expect(script.body).toMatch(/^#!\/bin\/sh\n# Platform agent bootstrap/);

    const name = `platform-agent-linux-${process.arch}`;
    const manifest = await platform.request("/agent/manifest.json");
    expect(manifest.status).toBe(200);
    const { sha256, size } = manifest.body.artifacts[name];
    expect(manifest.body.version).toBe(AGENT_VERSION);
    expect(sha256).toMatch(/^[0-9a-f]{64}$/);

    const checksum = await platform.request(`/agent/${name}.sha256`);
    expect(checksum.body).toBe(`${sha256}  ${name}\n`);
    const response = await platform.app.request(`/agent/${name}`);
    expect(response.status).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(bytes.length).toBe(size);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(sha256);
    // An ELF executable that runs alone: it starts and asks for its configuration.
    const file = path.join(dir, name);
    await writeFile(file, bytes, { mode: 0o755 });
    const run = await execFileAsync(file, [], { env: { AGENT_STATE_DIR: path.join(dir, "none") } }).catch(
      (error) => error as { stdout: string },
    );
    expect(run.stdout).toMatch(/"msg":"platform agent starting"/);
    expect(run.stdout).toMatch(/invalid agent configuration/);

    expect((await platform.request("/agent/platform-agent-linux-sparc")).status).toBe(404);
  }, 120_000);

  it("keeps the executable and its checksum through another build of the same sources", async () => {
    // Two builds of one bundle are not byte-identical: rebuilt, every server's bootstrap would
    // replace its agent, and a build beside a setup would change the file being downloaded.
    const name = `platform-agent-linux-${process.arch}`;
    const before = (await platform.request("/agent/manifest.json")).body.artifacts[name].sha256;
    await execFileAsync("node", ["scripts/build.mjs"], { cwd: repoRoot });
    const after = (await platform.request("/agent/manifest.json")).body.artifacts[name].sha256;
    expect(after).toBe(before);
  }, 120_000);
});

describe("install.sh and a checksum that does not match", () => {
  let server: Server;
  let served: string;

  beforeAll(async () => {
    // A control plane whose executable is not what its checksum says.
    server = createServer((request, response) => {
      if (request.url === `/agent/platform-agent-linux-${process.arch}.sha256`) {
        response.end(`${"0".repeat(64)}  platform-agent-linux-${process.arch}\n`);
      } else if (request.url === `/agent/platform-agent-linux-${process.arch}`) {
        response.end("#!/bin/sh\ntouch /tmp/pwned\n");
      } else {
        response.statusCode = 404;
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    served = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("refuses it with a clear message and changes nothing", async () => {
    const result = await runScript([
      "--control-plane-url",
      served,
      "--enrollment-token",
      "abcdefghijklmnopqrstuvwxyz012345",
    ]);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(
      /checksum mismatch for platform-agent-linux-[a-z0-9]+: expected sha256 0{64}, downloaded [0-9a-f]{64}; nothing was changed/,
    );
    for (const made of ["state", "main", "install"]) expect(existsSync(path.join(dir, made))).toBe(false);
    expect(existsSync("/tmp/pwned")).toBe(false);
  });
});
