/**
 * The daemon (main.ts) as a child process against its own nats-server that authenticates with
 * JWTs: it enrolls with a one-time token, connects with its .creds (limited to its own
 * subjects), answers commands and beats; it survives NATS going away and reconnects by itself;
 * a restart does not enroll again; its logs are JSON lines without secrets.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createUser } from "@nats-io/nkeys";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { AgentClient, type Heartbeat, NatsAgentTransport } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AGENT_ENTRY } from "../../../scripts/built-entries.mjs";
import { formatCreds } from "./enroll.ts";
import { startEnrollServer, type TestEnrollServer } from "./testing/enroll-server.ts";
import { createNatsAuthority, type TestNatsAuthority } from "./testing/nats-auth.ts";
import { TestNatsServer } from "./testing/nats-server.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../..");
const serverId = `daemon-${process.pid}`;
const enrollmentToken = "one-time-enrollment-token-5f2c9a";

let authority: TestNatsAuthority;
let nats: TestNatsServer;
let enrollServer: TestEnrollServer;
let stateDir: string;
let controlPlane: NatsConnection;
let client: AgentClient;
const logLines: string[] = [];

interface Daemon {
  process: ChildProcess;
  exited: Promise<number | null>;
}
let daemon: Daemon | undefined;

function startDaemon(): Daemon {
  const child = spawn(process.execPath, [AGENT_ENTRY], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      AGENT_STATE_DIR: stateDir,
      AGENT_CONTROL_PLANE_URL: enrollServer.url,
      AGENT_ENROLLMENT_TOKEN: enrollmentToken,
      AGENT_HEARTBEAT_INTERVAL_MS: "300",
      AGENT_MAIN_DIR: stateDir,
      LOG_LEVEL: "debug",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let buffered = "";
  child.stdout!.on("data", (chunk) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    logLines.push(...lines.filter(Boolean));
  });
  child.stderr!.on("data", (chunk) => logLines.push(`STDERR ${chunk}`));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { process: child, exited };
}

async function stopDaemon(): Promise<number | null> {
  if (!daemon) return null;
  const { process: child, exited } = daemon;
  daemon = undefined;
  child.kill("SIGTERM");
  return exited;
}

async function pingSoon(timeoutMs: number): Promise<void> {
  await vi.waitFor(() => client.ping(serverId, 1000), { timeout: timeoutMs, interval: 250 });
}

beforeAll(async () => {
  authority = await createNatsAuthority();
  nats = await TestNatsServer.start(authority.serverConfig);
  enrollServer = await startEnrollServer({
    token: enrollmentToken,
    serverId,
    natsUrl: nats.url,
    signJwt: (id, publicKey) => authority.agentJwt(id, publicKey),
  });
  stateDir = await mkdtemp(path.join(tmpdir(), "agent-daemon-"));
  const user = createUser();
  const creds = formatCreds(await authority.controlPlaneJwt(user), new TextDecoder().decode(user.getSeed()));
  controlPlane = await connect({
    servers: nats.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 200,
  });
  client = new AgentClient(new NatsAgentTransport(controlPlane), 2000);
});

afterAll(async () => {
  await stopDaemon();
  await controlPlane?.close().catch(() => {});
  await enrollServer?.close();
  await nats?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe("agent daemon", () => {
  it("enrolls, connects with its credentials and answers commands", async () => {
    daemon = startDaemon();
    await pingSoon(20_000);
    expect(enrollServer.requests).toHaveLength(1);
    const result = await client.validateServer(serverId, 10_000);
    expect(result.isMainDirectoryInstalled).toBe(true);
  });

  it("publishes heartbeats", async () => {
    const transport = new NatsAgentTransport(controlPlane);
    const heartbeat = await new Promise<Heartbeat>((resolve) => {
      transport.subscribeHeartbeats(resolve, serverId);
    });
    await transport.close();
    expect(heartbeat).toMatchObject({
      serverId,
      agentVersion: expect.any(String),
      sentAtUnixMs: expect.any(Number),
    });
    expect(Math.abs(Date.now() - heartbeat.sentAtUnixMs)).toBeLessThan(5000);
  });

  it("its credentials only reach its own subjects", async () => {
    const creds = await readFile(path.join(stateDir, "agent.creds"));
    const errors: Error[] = [];
    const asAgent = await connect({ servers: nats.url, authenticator: credsAuthenticator(creds) });
    void (async () => {
      for await (const status of asAgent.status()) if (status.type === "error") errors.push(status.error);
    })();
    asAgent.publish("agent.someone-else.heartbeat", new Uint8Array());
    asAgent.publish(`agent.${serverId}.events`, new Uint8Array());
    await asAgent.flush();
    await vi.waitFor(() =>
      expect(errors.map((error) => error.message).join()).toMatch(/permissions violation/i),
    );
    expect(errors).toHaveLength(1);
    await asAgent.close();
  });

  it("keeps running while NATS is away and reconnects by itself", async () => {
    await nats.pause();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(daemon?.process.exitCode).toBeNull();
    await nats.resume();
    await pingSoon(20_000);
    expect(logLines.join("\n")).toMatch(/NATS connection lost/);
    await vi.waitFor(() => expect(logLines.join("\n")).toMatch(/NATS connection restored/), {
      timeout: 5000,
    });
  });

  it("stops on SIGTERM, starts while NATS is down, and does not enroll again", async () => {
    expect(await stopDaemon()).toBe(0);
    await nats.pause();
    daemon = startDaemon();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(daemon.process.exitCode).toBeNull();
    await nats.resume();
    await pingSoon(20_000);
    expect(enrollServer.requests).toHaveLength(1);
    expect(logLines.join("\n")).toMatch(/already enrolled/);
  });

  it("logs JSON lines without the token, the JWT or the seed", async () => {
    const creds = await readFile(path.join(stateDir, "agent.creds"), "utf8");
    const jwt = /-----BEGIN NATS USER JWT-----\n(\S+)\n/.exec(creds)![1]!;
    const seed = /-----BEGIN USER NKEY SEED-----\n(\S+)\n/.exec(creds)![1]!;
    expect(logLines.length).toBeGreaterThan(5);
    for (const line of logLines) {
      expect(() => JSON.parse(line), line).not.toThrow();
      expect(line).not.toContain(enrollmentToken);
      expect(line).not.toContain(jwt);
      expect(line).not.toContain(seed);
    }
    expect(logLines.some((line) => JSON.parse(line).msg === "command handled")).toBe(true);
  });
});
