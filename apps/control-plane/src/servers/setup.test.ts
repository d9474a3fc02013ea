/**
 * server.setup for real: a private OpenSSH server on 127.0.0.1 (scripts/start-test-sshd.sh),
 * a nats-server with JWT auth and the control plane listening on 127.0.0.1. setup logs in with
 * a generated key, runs deploy/agent/install.sh (pointed by sshd's SetEnv at test directories
 * and at this checkout), the agent enrolls through agent.enroll, connects to NATS and the
 * server turns active. Also: running it twice, a key the server refuses, a changed host key.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, mkdir, mkdtemp, readFile, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ServerType, serve } from "@hono/node-server";
import { freePort } from "@platform/agent/testing/net.ts";
import { builderFix } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JwtNats, startJwtNats } from "../agents/testing/nats-jwt.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../../..");
/** The agent installed over SSH names its proxy service with the default name. */
const PROXY_SERVICE = "platform-traefik";
const STANDIN_IMAGE = "platform-test/traefik-standin:latest";

let nats: JwtNats;
let platform: TestPlatform;
let http: ServerType;
let owner: Session;
let dir: string;
let sshPort: number;
let stateDir: string;
const issuedTokens: string[] = [];
const as = () => ({ token: owner.token });

function pidIn(file: string): Promise<number | undefined> {
  return readFile(file, "utf8").then(
    (text) => Number(text.trim()) || undefined,
    () => undefined,
  );
}

async function stopProcess(pidFile: string): Promise<void> {
  const pid = await pidIn(pidFile);
  if (!pid) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {}
}

/**
 * Starts a private sshd for `sshdDir` whose sessions point install.sh at directories inside it
 * (plus `extraEnv`); returns its port.
 */
async function startSshd(sshdDir: string, extraEnv: string[]): Promise<number> {
  await mkdir(path.join(sshdDir, "main"));
  const port = await freePort();
  const setenv = [
    `PLATFORM_AGENT_STATE_DIR=${path.join(sshdDir, "agent-state")}`,
    `PLATFORM_MAIN_DIR=${path.join(sshdDir, "main")}`,
    `PLATFORM_AGENT_INSTALL_DIR=${path.join(sshdDir, "install")}`,
    ...extraEnv,
  ];
  execFileSync(
    "bash",
    [
      path.join(repoRoot, "scripts/start-test-sshd.sh"),
      "--dir",
      sshdDir,
      "--port",
      String(port),
      ...setenv.flatMap((assignment) => ["--setenv", assignment]),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return port;
}

async function newKey(name: string, authorizeIn: string | null) {
  const pair = (await platform.mutate("sshKey.generate", { type: "ed25519" }, as())).body;
  const created = await platform.mutate("sshKey.create", { name, ...pair }, as());
  expect(created.status).toBe(200);
  if (authorizeIn) await appendFile(path.join(authorizeIn, "authorized_keys"), `${pair.publicKey}\n`);
  return created.body.sshKeyId as string;
}

async function newServer(sshKeyId: string, name: string, port = sshPort) {
  const created = await platform.mutate(
    "server.create",
    { name, ipAddress: "127.0.0.1", port, username: "root", sshKeyId },
    as(),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.serverId as string;
}

beforeAll(async () => {
  nats = await startJwtNats();
  const httpPort = await freePort();
  platform = await startTestPlatform({ ...nats.env, PLATFORM_URL: `http://127.0.0.1:${httpPort}` });
  http = serve({ fetch: platform.app.fetch, port: httpPort, hostname: "127.0.0.1" });
  owner = await platform.registerOwner();
  // server.setup installs the proxy: the Traefik stand-in on free host ports (removed in afterAll).
  execFileSync("bash", [path.join(repoRoot, "scripts/build-traefik-standin-image.sh")], { stdio: "ignore" });
  await platform.ctx.db
    .updateTable("webServerSettings")
    .set({
      traefikImage: STANDIN_IMAGE,
      proxyHttpPort: await freePort(),
      proxyHttpsPort: await freePort(),
      proxyDashboardPort: await freePort(),
    })
    .where("id", "=", 1)
    .execute();
  // The real hub, watched: the tokens it issues must never show up in a setup log.
  const hub = platform.ctx.agents;
  const createEnrollmentToken = hub.createEnrollmentToken.bind(hub);
  hub.createEnrollmentToken = async (serverId) => {
    const issued = await createEnrollmentToken(serverId);
    issuedTokens.push(issued.token);
    return issued;
  };

  dir = await mkdtemp(path.join(tmpdir(), "servers-sshd-"));
  stateDir = path.join(dir, "agent-state");
  sshPort = await startSshd(dir, [`PLATFORM_AGENT_SOURCE=${repoRoot}`]);
}, 60_000);

afterAll(async () => {
  try {
    execFileSync("docker", ["service", "rm", PROXY_SERVICE], { stdio: "ignore" });
  } catch {}
  if (stateDir) await stopProcess(path.join(stateDir, "agent.pid"));
  if (dir) await stopProcess(path.join(dir, "sshd.pid"));
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  await platform?.close();
  await nats?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("server.setup over SSH", () => {
  let serverId: string;

  it("installs the agent, which enrolls, connects and makes the server active", async () => {
    serverId = await newServer(await newKey("setup key", dir), "loopback");
    const setup = await platform.mutate("server.setup", { serverId }, as());
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);
    expect(setup.body).toEqual({
      serverId,
      serverStatus: "active",
      message: "Server is set up: its agent is connected, validation passed and the proxy is installed",
    });
    // The proxy runs on the server: the settings' image, its files in the server's main directory.
    const proxy = JSON.parse(
      execFileSync("docker", ["service", "inspect", PROXY_SERVICE], { encoding: "utf8" }),
    )[0];
    expect(proxy.Spec.TaskTemplate.ContainerSpec.Image.split("@")[0]).toBe(STANDIN_IMAGE);
    expect(existsSync(path.join(dir, "main", "traefik", "traefik.yml"))).toBe(true);

    const one = (await platform.query("server.one", { serverId }, as())).body;
    expect(one).toMatchObject({ serverStatus: "active", agentVersion: expect.any(String) });
    expect(one.enrolledAt).not.toBeNull();
    expect(one.setupLog).toMatch(/connecting to root@127\.0\.0\.1:\d+/);
    expect(one.setupLog).toMatch(/\[platform-install\] agent enrolled/);
    // The setup tries the pinned builders (tests/install/builders.test.ts runs that part on its own).
    expect(one.setupLog).toMatch(
      /\[platform-install\] (installed )?nixpacks \S+ (is installed|not installed|at )/,
    );
    expect(one.setupLog).toMatch(/== setup finished/);
    const hostKey = execFileSync("ssh-keygen", ["-l", "-f", path.join(dir, "host_ed25519_key.pub")], {
      encoding: "utf8",
    }).split(" ")[1];
    expect(one.hostKeyFingerprint).toBe(hostKey);

    // The agent writes its own config; the spent token is gone from what install.sh wrote.
    const agentJson = JSON.parse(await readFile(path.join(stateDir, "agent.json"), "utf8"));
    expect(agentJson.serverId).toBe(serverId);
    const agentEnv = await readFile(path.join(stateDir, "agent.env"), "utf8");
    expect(agentEnv).not.toMatch(/ENROLLMENT_TOKEN/);
    expect(issuedTokens).toHaveLength(1);
    for (const token of issuedTokens) {
      expect(one.setupLog).not.toContain(token);
      expect(agentEnv).not.toContain(token);
      expect(platform.logLines.join("\n")).not.toContain(token);
    }
  }, 120_000);

  it("validates and audits the server through its agent", async () => {
    const validate = await platform.query("server.validate", { serverId }, as());
    expect(validate.status, JSON.stringify(validate.body)).toBe(200);
    expect(validate.body).toMatchObject({
      docker: { enabled: true, version: expect.any(String) },
      isSwarmInstalled: true,
      isPlatformNetworkInstalled: true,
      isMainDirectoryInstalled: true,
    });
    // Each builder says whether it is installed and, when not, the fix a deploy needing it names.
    for (const [key, tool] of [
      ["nixpacks", "nixpacks"],
      ["railpack", "railpack"],
      ["buildpacks", "pack"],
    ] as const) {
      const status = validate.body[key];
      expect(status.fix, key).toBe(status.enabled ? null : builderFix(tool));
    }
    const security = await platform.query("server.security", { serverId }, as());
    expect(security.status).toBe(200);
    expect(Object.keys(security.body).sort()).toEqual([
      "fail2ban",
      "nonRootUser",
      "ssh",
      "ufw",
      "unattendedUpgrades",
    ]);
  }, 60_000);

  it("shows the server online once its agent beats", async () => {
    await expect
      .poll(async () => (await platform.query("server.all", {}, as())).body[0], { timeout: 20_000 })
      .toMatchObject({ serverId, online: true, lastHeartbeatAt: expect.any(String), totalSum: 0 });
  }, 30_000);

  it("changes nothing a second time: same agent identity, same process", async () => {
    const firstPid = await pidIn(path.join(stateDir, "agent.pid"));
    const setup = await platform.mutate("server.setup", { serverId }, as());
    expect(setup.body).toMatchObject({ serverId, serverStatus: "active" });
    const secondPid = await pidIn(path.join(stateDir, "agent.pid"));
    expect(secondPid).toBeDefined();
    expect(secondPid).toBe(firstPid);
    const one = (await platform.query("server.one", { serverId }, as())).body;
    expect(one.setupLog).toMatch(/Docker Swarm is active/);
    expect(one.setupLog).toMatch(/network platform-network exists/);
    expect(one.setupLog).toMatch(/agent unchanged and running/);
    const agentJson = JSON.parse(await readFile(path.join(stateDir, "agent.json"), "utf8"));
    expect(agentJson.serverId).toBe(serverId);
    const validate = await platform.query("server.validate", { serverId }, as());
    expect(validate.status).toBe(200);
  }, 120_000);

  it("reports a key the server refuses, in the answer and in setupLog", async () => {
    const refusedId = await newServer(await newKey("unknown key", null), "refused");
    const setup = await platform.mutate("server.setup", { serverId: refusedId }, as());
    expect(setup.status).toBe(200);
    expect(setup.body.serverStatus).toBe("inactive");
    expect(setup.body.message).toMatch(/^SSH authentication failed for root@127\.0\.0\.1:\d+/);
    const one = (await platform.query("server.one", { serverId: refusedId }, as())).body;
    expect(one.setupLog).toContain(setup.body.message);
    expect(one.serverStatus).toBe("inactive");
    expect(one.hostKeyFingerprint).toBeNull();
  }, 60_000);

  it("refuses a host key other than the one trusted at the first setup", async () => {
    await platform.ctx.db
      .updateTable("servers")
      .set({ hostKeySha256: "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" })
      .where("serverId", "=", serverId)
      .execute();
    const pidBefore = await pidIn(path.join(stateDir, "agent.pid"));
    const setup = await platform.mutate("server.setup", { serverId }, as());
    expect(setup.body.message).toMatch(/SSH host key of root@127\.0\.0\.1:\d+ changed/);
    // Nothing ran on the impostor: the agent was not restarted.
    expect(await pidIn(path.join(stateDir, "agent.pid"))).toBe(pidBefore);
  }, 60_000);
});

describe("server.setup with the agent executable (the production path)", () => {
  let installRoot: string | undefined;

  afterAll(async () => {
    if (!installRoot) return;
    await stopProcess(path.join(installRoot, "agent-state", "agent.pid"));
    await stopProcess(path.join(installRoot, "sshd.pid"));
    await rm(installRoot, { recursive: true, force: true });
  });

  it("downloads the executable from the control plane, checks it and runs the agent from it", async () => {
    execFileSync("node", ["scripts/build.mjs", "--if-stale"], { cwd: repoRoot, stdio: "ignore" });
    installRoot = await mkdtemp(path.join(tmpdir(), "servers-sshd-executable-"));
    const port = await startSshd(installRoot, []);
    const serverId = await newServer(await newKey("executable key", installRoot), "executable", port);
    const setup = await platform.mutate("server.setup", { serverId }, as());
    expect(setup.body).toMatchObject({ serverId, serverStatus: "active" });

    const executable = path.join(installRoot, "install", "platform-agent");
    const pid = await pidIn(path.join(installRoot, "agent-state", "agent.pid"));
    expect(await readlink(`/proc/${pid}/exe`)).toBe(executable);
    const one = (await platform.query("server.one", { serverId }, as())).body;
    expect(one.setupLog).toMatch(/checksum verified/);
    const validate = await platform.query("server.validate", { serverId }, as());
    expect(validate.status).toBe(200);
    expect(validate.body.isMainDirectoryInstalled).toBe(true);
  }, 300_000);
});
