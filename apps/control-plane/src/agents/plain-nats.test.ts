/**
 * NATS_URL without NATS_ACCOUNT_SEED (local development with a nats-server without
 * authentication): agents still enroll and connect with the credentials they get, which such a
 * server does not check, and the control plane warns that agents are not isolated.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connectAgentNats, enrollAgent, type RunningAgent, startAgent } from "@platform/agent";
import { TestNatsServer } from "@platform/agent/testing/nats-server.ts";
import { NatsAgentTransport, type NatsConnection } from "@platform/agent-protocol";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertTestServer, listen, serverRow } from "./testing/agents.ts";

let nats: TestNatsServer;
let platform: TestPlatform;
let http: Awaited<ReturnType<typeof listen>>;
let stateDir: string;
let agent: RunningAgent | undefined;
let connection: NatsConnection | undefined;

beforeAll(async () => {
  nats = await TestNatsServer.start("");
  platform = await startTestPlatform({ NATS_URL: nats.url }, { agents: { localAgent: false } });
  http = await listen(platform);
  stateDir = await mkdtemp(path.join(tmpdir(), "cp-plain-nats-"));
});

afterAll(async () => {
  await agent?.stop();
  await connection?.close();
  await http?.close();
  await platform?.close();
  await nats?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

it("enrolls and links an agent, warning that agents are not isolated", async () => {
  expect(platform.logLines.join("\n")).toMatch(/NATS_ACCOUNT_SEED is not set/);
  const owner = await platform.registerOwner();
  const serverId = await insertTestServer(platform, owner.user.organizationId);
  const { token } = await platform.ctx.agents.createEnrollmentToken(serverId);
  const enrollment = await enrollAgent({ controlPlaneUrl: http.url, enrollmentToken: token, stateDir });
  expect(enrollment).toMatchObject({ serverId, natsUrl: nats.url, enrolled: true });

  connection = await connectAgentNats(enrollment);
  agent = await startAgent({
    serverId,
    transport: new NatsAgentTransport(connection),
    mainDirectory: stateDir,
    heartbeatIntervalMs: 100,
  });
  await expect(platform.ctx.agents.client.ping(serverId)).resolves.toBeTruthy();
  await vi.waitFor(
    async () =>
      expect(platform.ctx.agents.connectionOf(await serverRow(platform, serverId)).online).toBe(true),
    { timeout: 10_000, interval: 100 },
  );
});
