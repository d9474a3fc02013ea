/**
 * deploy/agent/install.sh refuses bad arguments before it touches anything, and the control
 * plane serves it and the agent bundle (the code of apps/agent, packages/agent-protocol and
 * proto, with a package.json of their npm dependencies and no tests).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { INSTALL_SCRIPT_PATH } from "./agent-bundle.ts";

const execFileAsync = promisify(execFile);
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
    [["--enrollment-token", token], /no enrolled agent: give --control-plane-url/],
    [
      ["--control-plane-url", url, "--enrollment-token", token, "--advertise-addr", "1.2.3.4;id"],
      /--advertise-addr/,
    ],
    [
      ["--control-plane-url", url, "--enrollment-token", token, "--bundle", "/nonexistent.tar.gz"],
      /no such file/,
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

describe("GET /agent/install.sh and /agent/bundle.tar.gz", () => {
  it("serves the script and a bundle of the agent's code without tests", async () => {
    const script = await platform.request("/agent/install.sh");
    expect(script.status).toBe(200);
    expect(script.body).toMatch(/^#!\/bin\/sh\n# Platform agent bootstrap/);

    const response = await platform.app.request("/agent/bundle.tar.gz");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/gzip");
    const bundleFile = path.join(dir, "bundle.tar.gz");
    await writeFile(bundleFile, new Uint8Array(await response.arrayBuffer()));
    const { stdout: listing } = await execFileAsync("tar", ["-tzf", bundleFile]);
    const files = listing.split("\n");
    for (const expected of [
      "package.json",
      "apps/agent/src/main.ts",
      "apps/agent/package.json",
      "packages/agent-protocol/src/index.ts",
      "proto/agent.proto",
    ]) {
      expect(files).toContain(expected);
    }
    expect(files.filter((file) => /\.test\.ts$|\/testing\/|\/fixtures\//.test(file))).toEqual([]);
    const { stdout: packageJson } = await execFileAsync("tar", ["-xzOf", bundleFile, "package.json"]);
    const { dependencies } = JSON.parse(packageJson);
    expect(Object.keys(dependencies)).toEqual(
      expect.arrayContaining(["tsx", "dockerode", "@nats-io/transport-node", "protobufjs", "zod"]),
    );
    expect(Object.values(dependencies).filter((version) => String(version).startsWith("workspace:"))).toEqual(
      [],
    );
  });
});
