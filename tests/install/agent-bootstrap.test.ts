/**
 * The agent's bootstrap on a fresh Debian 12: a debootstrap userland (scripts/build-debian-image.sh)
 * runs as a container with host networking and the test Docker Engine's socket, and the bootstrap
 * runs in it exactly as the README tells a user (curl … | sh -s -- --control-plane-url …
 * --enrollment-token …) against a control plane listening on 127.0.0.1. The bootstrap installs
 * Docker's CLI and git from Debian's mirror (reusing the engine behind the socket), downloads
 * the agent executable, checks its sha256 and starts it; the agent enrolls and answers
 * server.validate. A second run changes nothing; a newer build served by the control plane
 * replaces the agent. The container (and the agent in it) is removed at the end.
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { appendFile, copyFile, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type ServerType, serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JwtNats, startJwtNats } from "../../apps/control-plane/src/agents/testing/nats-jwt.ts";
import {
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../../apps/control-plane/src/testing/harness.ts";

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "../..");
const container = `platform-install-test-${randomBytes(4).toString("hex")}`;
/** The Debian suite of the fresh server: bookworm (12) by default; PLATFORM_INSTALL_TEST_SUITE=trixie for 13. */
const suite = process.env.PLATFORM_INSTALL_TEST_SUITE || "bookworm";

let nats: JwtNats;
let platform: TestPlatform;
let http: ServerType;
let url: string;
let owner: Session;
let distDir: string;
let serverId: string;

/** Runs `script` with sh in the container; returns its exit code and output. */
async function inContainer(script: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync("docker", ["exec", container, "sh", "-c", script], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, output: `${failure.stdout}${failure.stderr}` };
  }
}

/** The output of `script`, which must succeed. */
async function output(script: string): Promise<string> {
  const result = await inContainer(script);
  expect(result.code, result.output).toBe(0);
  return result.output.trim();
}

/** What identifies the installed agent: its executable's checksum, its process and its enrollment. */
async function installedAgent() {
  const pid = await output("cat /etc/platform/agent/agent.pid");
  return {
    sha256: await output("sha256sum /opt/platform-agent/platform-agent | cut -d' ' -f1"),
    pid,
    running: await output(`readlink /proc/${pid}/exe`),
    enrollment: await output("cat /etc/platform/agent/agent.json"),
  };
}

async function servedSha256(): Promise<string> {
  const response = await fetch(`${url}/agent/platform-agent-linux-${process.arch}.sha256`);
  expect(response.status).toBe(200);
  return (await response.text()).split(" ")[0] ?? "";
}

/** The command the README's "Servers and the agent" section gives, with this URL and token. */
async function readmeCommand(token: string): Promise<string> {
  const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Servers and the agent"));
  const command = /```sh\n([^`]*)```/.exec(section)?.[1] ?? "";
  expect(command).toContain("$PLATFORM_URL/agent/install.sh");
  return command.replaceAll("\\\n", " ").replaceAll("$PLATFORM_URL", url).replaceAll("<token>", token).trim();
}

/** Runs the README's command as root on the fresh server, with a new enrollment token. */
async function bootstrap(label: string) {
  const { token } = await platform.mutateOk("server.enrollmentCommand", { serverId }, { token: owner.token });
  const started = Date.now();
  const result = await inContainer(await readmeCommand(token));
  console.log(`bootstrap, ${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  expect(result.code, result.output).toBe(0);
  return { ...result, token };
}

async function validate() {
  const answer = await platform.query("server.validate", { serverId }, { token: owner.token });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

beforeAll(async () => {
  execFileSync("node", ["scripts/build.mjs", "--if-stale"], { cwd: repoRoot, stdio: "ignore" });
  const image = execFileSync("bash", [path.join(repoRoot, "scripts/build-debian-image.sh"), suite], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .at(-1) as string;
  // The control plane serves the build's executable from here; a later step puts a newer bundle
  // here, from which it builds a newer executable.
  distDir = await mkdtemp(path.join(tmpdir(), "install-test-dist-"));
  // (The build's executable is copied when it is that bundle's; otherwise it is built on request.)
  const built = path.join(repoRoot, "dist/agent");
  await copyFile(path.join(built, "main.js"), path.join(distDir, "main.js"));
  const executable = `platform-agent-linux-${process.arch}`;
  const modified = (file: string) =>
    stat(path.join(built, file)).then(
      (info) => info.mtimeMs,
      () => 0,
    );
  if ((await modified(executable)) > (await modified("main.js"))) {
    await copyFile(path.join(built, executable), path.join(distDir, executable));
  }

  nats = await startJwtNats();
  // Listening before the platform starts: its PLATFORM_URL needs the port, and a port only
  // reported free could be taken by a parallel suite while the platform migrates.
  let fetchApp: (request: Request) => Response | Promise<Response> = () =>
    new Response(null, { status: 503 });
  http = serve({ fetch: (request) => fetchApp(request), port: 0, hostname: "127.0.0.1" });
  await once(http, "listening");
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  process.env.PLATFORM_AGENT_DIST_DIR = distDir;
  platform = await startTestPlatform({ ...nats.env, PLATFORM_URL: url });
  fetchApp = platform.app.fetch;
  owner = await platform.registerOwner();
  const key = await platform.mutateOk("sshKey.generate", { type: "ed25519" }, { token: owner.token });
  const { sshKeyId } = await platform.mutateOk(
    "sshKey.create",
    { name: "fresh-debian", ...key },
    { token: owner.token },
  );
  const created = await platform.mutate(
    "server.create",
    { name: "fresh-debian", ipAddress: "127.0.0.1", port: 22, username: "root", sshKeyId },
    { token: owner.token },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  serverId = created.body.serverId;

  execFileSync("docker", [
    "run",
    "--detach",
    "--init",
    "--name",
    container,
    "--network",
    "host",
    "--volume",
    "/var/run/docker.sock:/var/run/docker.sock",
    image,
    "sleep",
    "infinity",
  ]);
  // A fresh minimal Debian has no curl; a user installs it first, as the README says.
  const curl = await inContainer(
    "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl ca-certificates >/dev/null",
  );
  expect(curl.code, curl.output).toBe(0);
}, 180_000);

afterAll(async () => {
  try {
    execFileSync("docker", ["rm", "--force", container], { stdio: "ignore" });
  } catch {}
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  await platform?.close();
  await nats?.stop();
  delete process.env.PLATFORM_AGENT_DIST_DIR;
  if (distDir) await rm(distDir, { recursive: true, force: true });
});

describe(`the agent's bootstrap on a fresh Debian (${suite})`, () => {
  let first: Awaited<ReturnType<typeof installedAgent>>;

  it("installs Docker's CLI and git, the checked executable, and the agent enrolls and validates", async () => {
    const run = await bootstrap("first run");
    expect(run.output).toMatch(/installing docker(\.io|-cli) from the distribution's packages/);
    expect(run.output).toMatch(/checksum verified/);
    expect(run.output).toMatch(/agent enrolled/);
    expect((await inContainer("git --version && docker --version")).code).toBe(0);
    // No second engine was started: the only one is the test engine behind the socket.
    expect((await inContainer("ls /proc/*/exe -l 2>/dev/null | grep -c dockerd || true")).output.trim()).toBe(
      "0",
    );

    first = await installedAgent();
    expect(first.sha256).toBe(await servedSha256());
    expect(JSON.parse(first.enrollment).serverId).toBe(serverId);
    // The agent runs from the executable alone: no Node.js on this host.
    expect((await inContainer("command -v node")).code).not.toBe(0);
    expect(first.running).toBe("/opt/platform-agent/platform-agent");
    // The spent token is gone from disk.
    expect(await output("cat /etc/platform/agent/agent.env")).not.toContain(run.token);

    const answer = await validate();
    expect(answer).toMatchObject({
      docker: { enabled: true },
      isSwarmInstalled: true,
      isPlatformNetworkInstalled: true,
      isMainDirectoryInstalled: true,
    });
  }, 240_000);

  it("changes nothing when run a second time", async () => {
    const run = await bootstrap("second run");
    expect(run.output).toMatch(/the agent is up to date/);
    expect(run.output).toMatch(/agent unchanged and running/);
    expect(run.output).not.toMatch(/installing|downloading/);
    expect(await installedAgent()).toEqual(first);
    await validate();
  }, 120_000);

  it("replaces the agent when the control plane serves a newer build", async () => {
    await appendFile(path.join(distDir, "main.js"), `\n// a newer build ${Date.now()}\n`);
    const newer = await servedSha256();
    expect(newer).not.toBe(first.sha256);
    const run = await inContainer(
      "sh -c 'curl -fsSL $(cat /etc/platform/agent/control-plane-url)/agent/install.sh | sh'",
    );
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/checksum verified/);
    const upgraded = await installedAgent();
    expect(upgraded.sha256).toBe(newer);
    expect(upgraded.pid).not.toBe(first.pid);
    expect(upgraded.enrollment).toBe(first.enrollment);
    // The new process connects with the same identity and answers.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await platform.query("server.validate", { serverId }, { token: owner.token });
      if (answer.status === 200) break;
      if (Date.now() > deadline)
        throw new Error(`the upgraded agent does not answer: ${JSON.stringify(answer.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }, 120_000);
});
