/**
 * HeartbeatRecorder's batching: many agents' heartbeats become one statement, each server keeps
 * its own receive time (so online/offline is decided as before), unenrolled servers are left
 * alone, activation is tried for inactive servers whose Docker is reachable, a failed write
 * lets the next heartbeat through at once, and servers not heard for a while leave its memory.
 */
import type { Heartbeat } from "@platform/agent-protocol";
import type { KyselyPlugin } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { HeartbeatRecorder } from "./heartbeats.ts";
import { insertTestServer, serverRow } from "./testing/agents.ts";

const logger = pino({ level: "silent" });

function heartbeat(serverId: string, dockerReachable = true): Heartbeat {
  return {
    serverId,
    agentVersion: "test",
    hostname: "h",
    sentAtUnixMs: Date.now(),
    dockerReachable,
    dockerVersion: dockerReachable ? "27.0.0" : "",
    swarmState: dockerReachable ? "active" : "",
  };
}

describe("HeartbeatRecorder", () => {
  let platform: TestPlatform;
  let owner: Session;
  beforeAll(async () => {
    platform = await startTestPlatform({}, { agents: { localAgent: false } });
    owner = await platform.registerOwner();
  });
  afterAll(() => platform?.close());

  async function enrolledServer(status: "active" | "inactive" = "active"): Promise<string> {
    const serverId = await insertTestServer(platform, owner.user.organizationId);
    await platform.ctx.db
      .updateTable("servers")
      .set({ enrolledAt: new Date().toISOString(), serverStatus: status })
      .where("serverId", "=", serverId)
      .execute();
    return serverId;
  }

  /** A recorder on a database handle that counts the statements it runs; time is `clock.now`. */
  function recorderWithClock(options: { flushMs?: number; failWrites?: () => boolean } = {}) {
    const clock = { now: Date.parse("2030-01-01T00:00:00.000Z") };
    const statements = { count: 0 };
    const activated: string[] = [];
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        statements.count++;
        if (options.failWrites?.()) throw new Error("database away");
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const recorder = new HeartbeatRecorder({
      db: platform.ctx.db.withPlugin(counting),
      logger,
      now: () => new Date(clock.now),
      writeIntervalMs: 7500,
      flushMs: options.flushMs ?? 60_000,
      tryActivate: async (serverId) => activated.push(serverId),
    });
    return { recorder, clock, statements, activated };
  }

  it("writes the heartbeats of many servers in one statement, each with its own receive time", async () => {
    const servers = await Promise.all(Array.from({ length: 30 }, () => enrolledServer()));
    const unenrolled = await insertTestServer(platform, owner.user.organizationId);
    const { recorder, clock, statements } = recorderWithClock();
    const receivedAt = new Map<string, number>();
    for (const serverId of servers) {
      clock.now += 7;
      receivedAt.set(serverId, clock.now);
      recorder.record(heartbeat(serverId));
    }
    recorder.record(heartbeat(unenrolled));
    expect(statements.count).toBe(0); // nothing written before the flush
    await recorder.flush();
    expect(statements.count).toBe(1);
    for (const serverId of servers) {
      const row = await serverRow(platform, serverId);
      expect(Date.parse(row.lastHeartbeatAt!)).toBe(receivedAt.get(serverId));
    }
    expect((await serverRow(platform, unenrolled)).lastHeartbeatAt).toBeNull();
  });

  it("keeps online/offline as before: online after a beat, offline after the timeout, online again on the next beat", async () => {
    const serverId = await enrolledServer();
    const { recorder, clock } = recorderWithClock();
    const online = async () => {
      const row = await serverRow(platform, serverId);
      // connectionOf with the recorder's clock (the hub's rule: last beat younger than 30 s).
      return row.lastHeartbeatAt !== null && clock.now - Date.parse(row.lastHeartbeatAt) < 30_000;
    };
    recorder.record(heartbeat(serverId));
    await recorder.flush();
    expect(await online()).toBe(true);

    // Beats within the write interval are not written again; the row still says online.
    clock.now += 5000;
    recorder.record(heartbeat(serverId));
    await recorder.flush();
    expect(Date.parse((await serverRow(platform, serverId)).lastHeartbeatAt!)).toBe(clock.now - 5000);

    clock.now += 40_000; // silent for longer than the timeout
    expect(await online()).toBe(false);
    recorder.record(heartbeat(serverId));
    await recorder.flush();
    expect(await online()).toBe(true);
    expect(Date.parse((await serverRow(platform, serverId)).lastHeartbeatAt!)).toBe(clock.now);
  });

  it("writes by itself after flushMs and records nothing once closed", async () => {
    const serverId = await enrolledServer();
    const { recorder, statements } = recorderWithClock({ flushMs: 50 });
    recorder.record(heartbeat(serverId));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(statements.count).toBe(1);
    expect((await serverRow(platform, serverId)).lastHeartbeatAt).not.toBeNull();
    await recorder.close();
    recorder.record(heartbeat(serverId)); // closed: ignored
    await recorder.flush();
    expect(statements.count).toBe(1);
  });

  it("tries to activate only inactive servers whose agent reached Docker", async () => {
    const reachable = await enrolledServer("inactive");
    const unreachable = await enrolledServer("inactive");
    const active = await enrolledServer("active");
    const { recorder, activated } = recorderWithClock();
    recorder.record(heartbeat(reachable, true));
    recorder.record(heartbeat(unreachable, false));
    recorder.record(heartbeat(active, true));
    await recorder.flush();
    expect(activated).toEqual([reachable]);
  });

  it("lets the next heartbeat through at once when a batch could not be written", async () => {
    const serverId = await enrolledServer();
    let failing = true;
    const { recorder, clock, statements } = recorderWithClock({ failWrites: () => failing });
    recorder.record(heartbeat(serverId));
    await recorder.flush();
    expect((await serverRow(platform, serverId)).lastHeartbeatAt).toBeNull();
    failing = false;
    clock.now += 1000; // well within the write interval
    recorder.record(heartbeat(serverId));
    await recorder.flush();
    expect(statements.count).toBe(2);
    expect(Date.parse((await serverRow(platform, serverId)).lastHeartbeatAt!)).toBe(clock.now);
  });
});
