/**
 * The agent hub without NATS (the embedded default): starting on a machine without Docker,
 * heartbeat tracking with an injected timeout, activation, the cloud edition's refusal of the
 * control plane's own machine, and the NATS configuration checks.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createAccount, createUser } from "@nats-io/nkeys";
import { type RunningAgent, startAgent } from "@platform/agent";
import { requireDocker } from "@platform/agent/testing/docker.ts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfig } from "../config.ts";
import { ApiError } from "../errors.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { markActiveIfValid } from "./activation.ts";
import { LOCAL_SERVER_ID } from "./hub.ts";
import { insertTestServer, serverRow } from "./testing/agents.ts";

const directories: string[] = [];
async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), "cp-hub-"));
  directories.push(directory);
  return directory;
}
afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describe("a control plane on a machine without Docker", () => {
  let platform: TestPlatform;
  let owner: Session;
  beforeAll(async () => {
    platform = await startTestPlatform(
      {},
      {
        agents: {
          localAgent: { dockerSocket: "/nonexistent/docker.sock", mainDirectory: await temporaryDirectory() },
        },
      },
    );
    owner = await platform.registerOwner();
  });
  afterAll(() => platform?.close());

  it("starts, and validation reports Docker as disabled", async () => {
    const health = await platform.request("/health");
    expect(health.status).toBe(200);
    const validation = await platform.ctx.agents.client.validateServer(LOCAL_SERVER_ID);
    expect(validation.docker).toEqual({ enabled: false });
    expect(validation.isSwarmInstalled).toBe(false);
  });

  it("docker.* answer a 503 that names Docker as missing", async () => {
    for (const [name, input] of [
      ["docker.getContainers", {}],
      ["docker.getConfig", { containerId: "web" }],
      ["docker.getContainersByAppNameMatch", { appName: "web" }],
    ] as const) {
      const response = await platform.query(name, input, { token: owner.token });
      expect(response.status).toBe(503);
      expect(response.body.error.code).toBe("SERVICE_UNAVAILABLE");
      expect(response.body.error.message).toBe(
        "Docker is not available on this machine: the Docker Engine is not reachable at /nonexistent/docker.sock",
      );
    }
  });

  it("has no enrollment for remote agents without NATS", async () => {
    const serverId = await insertTestServer(platform, owner.user.organizationId);
    await expect(platform.ctx.agents.createEnrollmentToken(serverId)).rejects.toThrow(ApiError);
    expect(platform.ctx.agents.natsUrlForAgents).toBeNull();
    const response = await platform.mutate("agent.enroll", {
      enrollmentToken: "x".repeat(43),
      publicKey: createUser().getPublicKey(),
      hostname: "h",
      agentVersion: "1",
    });
    expect(response.status).toBe(409);
    expect(response.body.error.message).toMatch(/NATS_URL/);
  });
});

describe("heartbeats and activation (in-memory transport, injected timeout)", () => {
  const timeoutMs = 600;
  let platform: TestPlatform;
  let owner: Session;
  let agent: RunningAgent | undefined;

  beforeAll(async () => {
    await requireDocker();
    platform = await startTestPlatform(
      {},
      { agents: { heartbeatTimeoutMs: timeoutMs, heartbeatWriteIntervalMs: 1000, localAgent: false } },
    );
    owner = await platform.registerOwner();
  });
  afterAll(async () => {
    await agent?.stop();
    await platform?.close();
  });

  /** Runs an agent for `serverId` in-process on the hub's own in-memory transport. */
  async function runAgent(serverId: string, mainDirectory: string, heartbeatIntervalMs = 50) {
    await agent?.stop();
    agent = await startAgent({
      serverId,
      transport: platform.ctx.agents.client.transport,
      mainDirectory,
      heartbeatIntervalMs,
    });
  }

  it("calls agent-back listeners on a server's first heartbeat and after a silence longer than the timeout, not in between", async () => {
    const serverId = await insertTestServer(platform, owner.user.organizationId);
    const back: string[] = [];
    platform.ctx.agents.onAgentBack((id) => {
      if (id === serverId) back.push(id);
    });
    const beat = () =>
      platform.ctx.agents.client.transport.publishHeartbeat({
        serverId,
        agentVersion: "test",
        hostname: "h",
        sentAtUnixMs: Date.now(),
        dockerReachable: false,
        dockerVersion: "",
        swarmState: "",
      });
    beat();
    await vi.waitFor(() => expect(back).toHaveLength(1));
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, timeoutMs / 4));
      beat();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(back).toHaveLength(1);
    // Silent for longer than the timeout (the hub has forgotten it meanwhile): back again.
    await new Promise((resolve) => setTimeout(resolve, timeoutMs * 2.5));
    beat();
    await vi.waitFor(() => expect(back).toHaveLength(2));
  });

  it("ignores heartbeats of a server that never enrolled", async () => {
    const serverId = await insertTestServer(platform, owner.user.organizationId);
    await runAgent(serverId, await temporaryDirectory());
    await new Promise((resolve) => setTimeout(resolve, 300));
    const row = await serverRow(platform, serverId);
    expect(row.lastHeartbeatAt).toBeNull();
    expect(row.serverStatus).toBe("inactive");
    expect(platform.ctx.agents.connectionOf(row)).toEqual({ online: false, lastHeartbeatAt: null });
    await expect(markActiveIfValid(platform.ctx, serverId)).resolves.toEqual({
      serverStatus: "inactive",
      missing: ["an enrolled agent"],
      validation: null,
    });
  });

  it("keeps an enrolled server inactive while its validation fails", async () => {
    const serverId = await insertTestServer(platform, owner.user.organizationId);
    await platform.ctx.db
      .updateTable("servers")
      .set({ enrolledAt: new Date().toISOString() })
      .where("serverId", "=", serverId)
      .execute();
    await runAgent(serverId, "/nonexistent/platform-main-dir");
    const activation = await markActiveIfValid(platform.ctx, serverId);
    expect(activation.serverStatus).toBe("inactive");
    expect(activation.missing).toEqual(["the main directory"]);
    expect((await serverRow(platform, serverId)).serverStatus).toBe("inactive");
  });

  it("records heartbeats (throttled), activates a valid server and shows it offline after the timeout", async () => {
    const serverId = await insertTestServer(platform, owner.user.organizationId);
    await platform.ctx.db
      .updateTable("servers")
      .set({ enrolledAt: new Date().toISOString() })
      .where("serverId", "=", serverId)
      .execute();
    await runAgent(serverId, await temporaryDirectory());
    await vi.waitFor(
      async () => {
        const row = await serverRow(platform, serverId);
        expect(row.serverStatus).toBe("active");
        expect(platform.ctx.agents.connectionOf(row).online).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );

    // The agent beats every 50 ms, the row is written at most once a second.
    const seen = new Set<string | null>();
    for (let i = 0; i < 8; i++) {
      seen.add((await serverRow(platform, serverId)).lastHeartbeatAt);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen.size).toBeLessThanOrEqual(2);

    await agent?.stop();
    agent = undefined;
    await vi.waitFor(
      async () =>
        expect(platform.ctx.agents.connectionOf(await serverRow(platform, serverId)).online).toBe(false),
      { timeout: timeoutMs * 3, interval: 50 },
    );
    // Being offline does not make it inactive: that is a state of its setup, not of its link.
    expect((await serverRow(platform, serverId)).serverStatus).toBe("active");
  });
});

describe("the cloud edition", () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform({ PLATFORM_EDITION: "cloud" }, { agents: { localAgent: false } });
  });
  afterAll(() => platform?.close());

  it("does not let tenants reach the control plane's own machine", async () => {
    const owner = await platform.registerOwner();
    for (const input of [{}, { serverId: LOCAL_SERVER_ID }]) {
      const response = await platform.query("docker.getContainers", input, { token: owner.token });
      expect(response.status).toBe(400);
      expect(response.body.error.data.fields).toEqual(["serverId"]);
    }
  });
});

describe("NATS configuration", () => {
  const accountSeed = new TextDecoder().decode(createAccount().getSeed());

  it("accepts an account seed and credentials with NATS_URL", () => {
    const config = loadConfig({
      NATS_URL: "nats://127.0.0.1:4222",
      NATS_CREDS: "/etc/platform/control-plane.creds",
      NATS_ACCOUNT_SEED: accountSeed,
      NATS_AGENT_URL: "tls://nats.example.com:4222",
    });
    expect(config).toMatchObject({
      natsCredsFile: "/etc/platform/control-plane.creds",
      natsAccountSeed: accountSeed,
      natsAgentUrl: "tls://nats.example.com:4222",
    });
  });

  it("refuses a seed that is not an account's and settings without NATS_URL, naming the variable", () => {
    const userSeed = new TextDecoder().decode(createUser().getSeed());
    // A changed character in the middle fails the checksum (the last one may be only padding bits).
    const changed = accountSeed[20] === "A" ? "B" : "A";
    const corrupted = `${accountSeed.slice(0, 20)}${changed}${accountSeed.slice(21)}`;
    for (const seed of [userSeed, "SAnot-a-seed", corrupted]) {
      expect(() => loadConfig({ NATS_URL: "nats://127.0.0.1:4222", NATS_ACCOUNT_SEED: seed })).toThrow(
        /NATS_ACCOUNT_SEED: must be an nkey account seed/,
      );
    }
    expect(() => loadConfig({ NATS_CREDS: "/x.creds", NATS_ACCOUNT_SEED: accountSeed })).toThrow(ConfigError);
    expect(() => loadConfig({ NATS_CREDS: "/x.creds" })).toThrow(/NATS_CREDS: needs NATS_URL/);
    expect(() => loadConfig({ NATS_URL: "nats://x", NATS_AGENT_URL: "http://x" })).toThrow(/NATS_AGENT_URL/);
  });

  it("a control plane whose NATS cannot be reached does not start, and says why", async () => {
    await expect(startTestPlatform({ NATS_URL: "nats://127.0.0.1:1" })).rejects.toThrow(
      /NATS is not reachable at nats:\/\/127.0.0.1:1/,
    );
  });
});
