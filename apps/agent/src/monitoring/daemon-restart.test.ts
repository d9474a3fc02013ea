/**
 * The agent daemon (main.ts, its own process on the test NATS) set up for monitoring over the
 * protocol, then killed with SIGKILL in the middle of collecting: started again, it resumes its
 * kept configuration without a new setupMonitoring, serves every sample stored before the kill
 * and keeps appending, with the same token.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AgentClient, NatsAgentTransport } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AGENT_ENTRY } from "../../../../scripts/built-entries.mjs";
import { removeContainer, runSleepingContainer, uniqueName } from "../testing/docker.ts";
import { freePort } from "../testing/net.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../../..");
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const serverId = `monitoring-daemon-${process.pid}`;
const appName = uniqueName("mon-daemon");
const token = "daemon-monitoring-token-42";
let mainDirectory: string;
let connection: NatsConnection;
let client: AgentClient;
let daemon: ChildProcess | undefined;
let port: number;

function startDaemon(): ChildProcess {
  return spawn(process.execPath, [AGENT_ENTRY], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      NATS_URL: natsUrl,
      AGENT_SERVER_ID: serverId,
      AGENT_CONFIG_FILE: path.join(mainDirectory, "absent.json"),
      AGENT_MAIN_DIR: mainDirectory,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

const metrics = async (pathname: string) => {
  const response = await fetch(`http://127.0.0.1:${port}${pathname}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { timestamp: string }[];
};

beforeAll(async () => {
  mainDirectory = await mkdtemp(path.join(tmpdir(), "agent-monitoring-daemon-"));
  port = await freePort();
  await runSleepingContainer(appName);
  connection = await connect({ servers: natsUrl });
  client = new AgentClient(new NatsAgentTransport(connection), 20_000);
}, 60_000);

afterAll(async () => {
  daemon?.kill("SIGKILL");
  await connection?.close();
  await removeContainer(appName);
  await rm(mainDirectory, { recursive: true, force: true });
});

describe("the agent daemon's monitoring across a kill -9", () => {
  it("keeps every stored sample and resumes collecting by itself", async () => {
    daemon = startDaemon();
    await vi.waitFor(() => client.ping(serverId, 1000), { timeout: 30_000, interval: 250 });
    const config = {
      server: {
        refreshRate: 2,
        port,
        token,
        urlCallback: "http://127.0.0.1:9/unused",
        retentionDays: 1,
        cronJob: "0 0 * * *",
        thresholds: { cpu: 0, memory: 0 },
      },
      containers: { refreshRate: 2, services: { include: [appName] } },
    };
    expect(await client.setupMonitoring(serverId, JSON.stringify(config))).toEqual({ port });

    const before = await vi.waitFor(
      async () => {
        const system = await metrics("/metrics?limit=all");
        const containers = await metrics(`/metrics/containers?appName=${appName}&limit=all`);
        expect(system.length).toBeGreaterThanOrEqual(2);
        expect(containers.length).toBeGreaterThanOrEqual(2);
        return { system, containers };
      },
      { timeout: 30_000, interval: 500 },
    );
    const killed = daemon;
    const exited = new Promise((resolve) => killed.once("exit", resolve));
    killed.kill("SIGKILL");
    await exited;

    daemon = startDaemon();
    const after = await vi.waitFor(
      async () => {
        const system = await metrics("/metrics?limit=all");
        expect(system.length).toBeGreaterThan(before.system.length);
        return { system, containers: await metrics(`/metrics/containers?appName=${appName}&limit=all`) };
      },
      { timeout: 40_000, interval: 500 },
    );
    const times = (records: { timestamp: string }[]) => records.map((record) => record.timestamp);
    expect(times(after.system)).toEqual(expect.arrayContaining(times(before.system)));
    expect(times(after.containers)).toEqual(expect.arrayContaining(times(before.containers)));
  }, 120_000);
});
