/**
 * Records agents' heartbeats as servers.last_heartbeat_at, at most once per write interval per
 * server (an agent beats every ~10 s; the row need not change that often), and tries to
 * activate an inactive enrolled server when its agent reports a reachable Docker Engine.
 */
import type { Heartbeat } from "@platform/agent-protocol";
import type { Logger } from "pino";
import type { Db } from "../db/database.ts";
import { LOCAL_SERVER_ID } from "./hub.ts";

export interface HeartbeatRecorderOptions {
  db: Db;
  logger: Logger;
  now(): Date;
  writeIntervalMs: number;
  /** Called (not awaited) for an inactive enrolled server whose agent reached Docker. */
  tryActivate(serverId: string): Promise<unknown>;
}

export class HeartbeatRecorder {
  private readonly lastWrittenAt = new Map<string, number>();
  private readonly activating = new Set<string>();

  constructor(private readonly options: HeartbeatRecorderOptions) {}

  async record(heartbeat: Heartbeat): Promise<void> {
    const { serverId } = heartbeat;
    if (serverId === LOCAL_SERVER_ID) return;
    const now = this.options.now();
    const last = this.lastWrittenAt.get(serverId);
    if (last !== undefined && now.getTime() - last < this.options.writeIntervalMs) return;
    this.lastWrittenAt.set(serverId, now.getTime());
    // The receive time, not the agent's clock: agents' clocks may be off.
    const server = await this.options.db
      .updateTable("servers")
      .set({ lastHeartbeatAt: now.toISOString() })
      .where("serverId", "=", serverId)
      .where("enrolledAt", "is not", null)
      .returning("serverStatus")
      .executeTakeFirst();
    if (server?.serverStatus === "inactive" && heartbeat.dockerReachable) this.activate(serverId);
  }

  private activate(serverId: string): void {
    if (this.activating.has(serverId)) return;
    this.activating.add(serverId);
    this.options
      .tryActivate(serverId)
      .catch((error) => this.options.logger.warn({ err: error, serverId }, "activation check failed"))
      .finally(() => this.activating.delete(serverId));
  }
}
