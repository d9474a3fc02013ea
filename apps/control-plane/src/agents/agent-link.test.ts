/**
 * The agent link over real NATS with JWT auth and the real Docker Engine: the agent daemon
 * enrolls with a one-time token, its server turns active, validation reports the engine as it
 * is, one agent's credentials cannot reach another's subjects, and killing the agent leaves its
 * containers running while the server shows unreachable until a new agent process is back.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { decode, parseCreds } from "@nats-io/jwt";
import { connectAgentNats, enrollAgent, type RunningAgent, startAgent } from "@platform/agent";
import {
  dockerCli,
  removeContainer,
  requireDocker,
  runTestContainer,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import {
  AGENT_VERSION,
  AgentClient,
  connect,
  credsAuthenticator,
  NatsAgentTransport,
  type NatsConnection,
} from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import {
  type AgentProcess,
  insertTestServer,
  killAgentProcess,
  listen,
  serverRow,
  startAgentProcess,
} from "./testing/agents.ts";
import { type JwtNats, startJwtNats } from "./testing/nats-jwt.ts";

const HEARTBEAT_TIMEOUT_MS = 1500;
/** Sleeps until stopped, and stops at once on SIGTERM (so a restart is quick). */
const SLEEPER = ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"];

let docker: Awaited<ReturnType<typeof requireDocker>>;
let nats: JwtNats;
let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let owner: Session;
let serverA: string;
let serverB: string;
let agentA: AgentProcess | undefined;
let agentB: { agent: RunningAgent; connection: NatsConnection } | undefined;
const directories: string[] = [];
const containerName = uniqueName("cp-agents-link");

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), "cp-agents-"));
  directories.push(directory);
  return directory;
}

/** Connects with an agent's .creds and collects the errors NATS reports (permission violations). */
async function connectAs(credsFile: string) {
  const errors: string[] = [];
  const connection = await connect({
    servers: nats.server.url,
    authenticator: credsAuthenticator(await readFile(credsFile)),
  });
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type === "error") errors.push(status.error.message);
    }
  })();
  return { connection, errors };
}

beforeAll(async () => {
  docker = await requireDocker();
  nats = await startJwtNats();
  platform = await startTestPlatform(
    { ...nats.env, PLATFORM_URL: "https://cp.example.com" },
    {
      agents: {
        heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
        heartbeatWriteIntervalMs: 100,
        localAgent: { mainDirectory: await temporaryDirectory(), heartbeatIntervalMs: 500 },
      },
    },
  );
  http = await listen(platform);
  owner = await platform.registerOwner();
  serverA = await insertTestServer(platform, owner.user.organizationId, "server-a");
  serverB = await insertTestServer(platform, owner.user.organizationId, "server-b");
});

afterAll(async () => {
  await killAgentProcess(agentA);
  await agentB?.agent.stop();
  await agentB?.connection.close();
  await removeContainer(containerName);
  await http?.close();
  await platform?.close();
  await nats?.stop();
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describe("agent link over NATS with JWT auth", () => {
  let stateDirA: string;

  it("an agent enrolls with a one-time token and its server turns active", async () => {
    const { token, expiresAt } = await platform.ctx.agents.createEnrollmentToken(serverA);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(55 * 60_000);
    stateDirA = await temporaryDirectory();
    agentA = startAgentProcess({ stateDir: stateDirA, controlPlaneUrl: http.url, enrollmentToken: token });

    await vi.waitFor(
      async () => {
        const row = await serverRow(platform, serverA);
        expect(row.serverStatus).toBe("active");
        expect(row.lastHeartbeatAt).not.toBeNull();
      },
      { timeout: 25_000, interval: 200 },
    );
    const row = await serverRow(platform, serverA);
    const creds = await parseCreds(await readFile(path.join(stateDirA, "agent.creds")));
    expect(row.agentPublicKey).toBe(creds.uc.sub);
    expect(row.agentVersion).toBe(AGENT_VERSION);
    expect(row.enrolledAt).not.toBeNull();
    expect(platform.ctx.agents.connectionOf(row).online).toBe(true);

    // The JWT is the account's, for the agent's key, limited to the server's own subjects.
    const claims = decode<{ pub: { allow: string[] }; sub: { allow: string[] } }>(creds.jwt);
    expect(claims.iss).toBe(nats.accountPublicKey);
    expect(claims.nats.pub?.allow).toEqual([`agent.${serverA}.>`]);
    expect(claims.nats.sub?.allow).toEqual([`agent.${serverA}.>`]);

    // The token was for one use only.
    const again = await platform.mutate("agent.enroll", {
      enrollmentToken: token,
      publicKey: creds.uc.sub,
      hostname: "again",
      agentVersion: AGENT_VERSION,
    });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe("UNAUTHORIZED");
  });

  it("refuses unknown and expired tokens and malformed keys without binding anything", async () => {
    const before = await serverRow(platform, serverA);
    const { token } = await platform.ctx.agents.createEnrollmentToken(serverA);
    const publicKey = (await parseCreds(await readFile(path.join(stateDirA, "agent.creds")))).uc.sub;
    const body = { enrollmentToken: token, publicKey, hostname: "h", agentVersion: "1" };

    const badKey = await platform.mutate("agent.enroll", { ...body, publicKey: "UABC;rm -rf /" });
    expect(badKey.status).toBe(400);
    expect(badKey.body.error.data.fields).toEqual(["publicKey"]);
    // An account key is not a user key.
    const accountKey = await platform.mutate("agent.enroll", { ...body, publicKey: nats.accountPublicKey });
    expect(accountKey.status).toBe(400);

    const unknown = await platform.mutate("agent.enroll", { ...body, enrollmentToken: `${token}x` });
    expect(unknown.status).toBe(401);

    await platform.ctx.db
      .updateTable("agentEnrollments")
      .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
      .where("serverId", "=", serverA)
      .where("usedAt", "is", null)
      .execute();
    const expired = await platform.mutate("agent.enroll", body);
    expect(expired.status).toBe(401);

    const after = await serverRow(platform, serverA);
    expect(after.agentPublicKey).toBe(before.agentPublicKey);
    expect(after.enrolledAt).toBe(before.enrolledAt);
  });

  it("validation through the agent reports Docker and Swarm as the engine really is", async () => {
    const [version, info, networks] = await Promise.all([
      docker.version(),
      docker.info(),
      docker.listNetworks({ filters: { name: ["platform-network"] } }),
    ]);
    const validation = await platform.ctx.agents.client.validateServer(serverA);
    expect(validation.docker).toEqual({ enabled: true, version: version.Version });
    expect(validation.isSwarmInstalled).toBe(info.Swarm.LocalNodeState === "active");
    expect(validation.isPlatformNetworkInstalled).toBe(
      networks.some((network: { Name: string }) => network.Name === "platform-network"),
    );
    expect(validation.isMainDirectoryInstalled).toBe(true);
  });

  it("docker.* list and restart a real container through the server's agent", async () => {
    await runTestContainer(containerName, SLEEPER);
    const listed = await platform.query(
      "docker.getContainers",
      { serverId: serverA },
      { token: owner.token },
    );
    expect(listed.status).toBe(200);
    const container = listed.body.find((entry: { name: string }) => entry.name === containerName);
    expect(container).toMatchObject({ state: "running", serverId: serverA, image: expect.any(String) });

    const startedBefore = await dockerCli(["inspect", "-f", "{{.State.StartedAt}}", containerName]);
    const restarted = await platform.mutate(
      "docker.restartContainer",
      { containerId: container.containerId, serverId: serverA },
      { token: owner.token },
    );
    expect(restarted.status).toBe(200);
    expect(restarted.body).toEqual({ success: true });
    expect(await dockerCli(["inspect", "-f", "{{.State.StartedAt}}", containerName])).not.toBe(startedBefore);
  });

  it("one agent's credentials cannot publish or subscribe on another server's subjects", async () => {
    // Agent B enrolls in-process and serves its own subjects with its own credentials.
    const stateDirB = await temporaryDirectory();
    const { token } = await platform.ctx.agents.createEnrollmentToken(serverB);
    const enrollment = await enrollAgent({
      controlPlaneUrl: http.url,
      enrollmentToken: token,
      stateDir: stateDirB,
    });
    expect(enrollment.serverId).toBe(serverB);
    const connection = await connectAgentNats({ ...enrollment, natsUrl: enrollment.natsUrl });
    const agent = await startAgent({
      serverId: serverB,
      transport: new NatsAgentTransport(connection),
      mainDirectory: stateDirB,
      heartbeatIntervalMs: 200,
    });
    agentB = { agent, connection };
    await expect(platform.ctx.agents.client.ping(serverB)).resolves.toMatchObject({
      agentVersion: AGENT_VERSION,
    });

    const asA = await connectAs(path.join(stateDirA, "agent.creds"));
    // Its own subjects are fine.
    asA.connection.publish(`agent.${serverA}.events`, new Uint8Array());
    await asA.connection.flush();
    expect(asA.errors).toEqual([]);

    asA.connection.publish(`agent.${serverB}.cmd`, new Uint8Array());
    await asA.connection.flush();
    await vi.waitFor(() => expect(asA.errors.join("\n")).toMatch(/permissions violation for publish/i));

    const spy = asA.connection.subscribe(`agent.${serverB}.heartbeat`);
    const received: unknown[] = [];
    const drained = (async () => {
      try {
        for await (const message of spy) received.push(message);
      } catch (error) {
        return (error as Error).message;
      }
      return "closed";
    })();
    await asA.connection.flush();
    await vi.waitFor(() => expect(asA.errors.join("\n")).toMatch(/permissions violation for subscription/i));
    // B beats every 200 ms; none reached A.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(received).toEqual([]);
    spy.unsubscribe();
    await drained;

    // A's credentials cannot send B commands either.
    const asClient = new AgentClient(new NatsAgentTransport(asA.connection), 1000);
    await expect(asClient.ping(serverB)).rejects.toThrow();
    await asA.connection.close();
  });

  it("re-running the bootstrap with a new token enrolls a new key", async () => {
    const before = await serverRow(platform, serverB);
    await agentB?.agent.stop();
    await agentB?.connection.close();
    agentB = undefined;

    // The token an administrator gets for installing the agent by hand.
    const issued = await platform.mutate(
      "server.enrollmentCommand",
      { serverId: serverB },
      { token: owner.token },
    );
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const { token, command } = issued.body as { token: string; command: string };
    expect(command).toBe(
      "curl -fsSL https://cp.example.com/agent/install.sh | sudo sh -s -- " +
        `--control-plane-url https://cp.example.com --enrollment-token ${token}`,
    );
    const stateDir = await temporaryDirectory();
    const enrollment = await enrollAgent({ controlPlaneUrl: http.url, enrollmentToken: token, stateDir });
    const creds = await parseCreds(await readFile(enrollment.credsFile));
    const after = await serverRow(platform, serverB);
    expect(after.agentPublicKey).toBe(creds.uc.sub);
    expect(after.agentPublicKey).not.toBe(before.agentPublicKey);

    const connection = await connectAgentNats({ ...enrollment });
    const agent = await startAgent({
      serverId: serverB,
      transport: new NatsAgentTransport(connection),
      mainDirectory: stateDir,
    });
    agentB = { agent, connection };
    await expect(platform.ctx.agents.client.ping(serverB)).resolves.toBeTruthy();
  });

  it("a killed agent leaves its container running; the server turns unreachable, then online with a new agent", async () => {
    const startedAt = await dockerCli(["inspect", "-f", "{{.State.StartedAt}}", containerName]);
    const publicKeyBefore = (await serverRow(platform, serverA)).agentPublicKey;
    await killAgentProcess(agentA, "SIGKILL");

    await vi.waitFor(
      async () =>
        expect(platform.ctx.agents.connectionOf(await serverRow(platform, serverA)).online).toBe(false),
      { timeout: HEARTBEAT_TIMEOUT_MS * 4, interval: 100 },
    );
    expect(await dockerCli(["inspect", "-f", "{{.State.Running}} {{.State.StartedAt}}", containerName])).toBe(
      `true ${startedAt}`,
    );
    const unreachable = await platform.query(
      "docker.getContainers",
      { serverId: serverA },
      { token: owner.token },
    );
    expect(unreachable.status).toBe(503);
    expect(unreachable.body.error.message).toMatch(/agent of server .* is not connected/);

    // A new process with the stored enrollment (no token) comes back online.
    agentA = startAgentProcess({ stateDir: stateDirA });
    await vi.waitFor(
      async () =>
        expect(platform.ctx.agents.connectionOf(await serverRow(platform, serverA)).online).toBe(true),
      { timeout: 25_000, interval: 200 },
    );
    await expect(platform.ctx.agents.client.ping(serverA)).resolves.toBeTruthy();
    // It reused its stored credentials: no new enrollment.
    expect((await serverRow(platform, serverA)).agentPublicKey).toBe(publicKeyBefore);
  });
});
