/**
 * Records agents' heartbeats as servers.last_heartbeat_at, at most once per write interval per
 * server (an agent beats every ~10 s; the row need not change that often), and tries to
 * activate an inactive enrolled server when its agent reports a reachable Docker Engine.
 *
 * Heartbeats are written in batches: those received within flushMs (or up to MAX_BATCH) become
 * one UPDATE … FROM (VALUES …), so 1,000 agents cost about four statements a second instead of
 * a hundred. Each row gets its own receive time, so batching delays a write by at most flushMs
 * and never changes what online/offline means.
 */
import type { Heartbeat } from "@platform/agent-protocol";
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../db/database.ts";
import type { ServerStatus } from "../db/schema.ts";
import { LOCAL_SERVER_ID } from "./hub.ts";

/** Default wait before a batch of heartbeats is written. */
export const DEFAULT_HEARTBEAT_FLUSH_MS = 250;
/** A batch this large is written at once. */
const MAX_BATCH = 500;

export interface HeartbeatRecorderOptions {
  db: Db;
  logger: Logger;
  now(): Date;
  writeIntervalMs: number;
  /** Longest wait before a received heartbeat is written (default DEFAULT_HEARTBEAT_FLUSH_MS). */
  flushMs?: number;
  /** Called (not awaited) for an inactive enrolled server whose agent reached Docker. */
  tryActivate(serverId: string): Promise<unknown>;
}

interface ReceivedHeartbeat {
  receivedAt: string;
  dockerReachable: boolean;
}

export class HeartbeatRecorder {
  /** Servers written within the write interval (older entries are dropped: they decide nothing). */
  private readonly lastWrittenAt = new Map<string, number>();
  private lastPrunedAt = 0;
  private readonly activating = new Set<string>();
  private pending = new Map<string, ReceivedHeartbeat>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: HeartbeatRecorderOptions) {}

  /** Queues `heartbeat` for the next batch (unless its server was written within the interval). */
  record(heartbeat: Heartbeat): void {
    const { serverId } = heartbeat;
    if (serverId === LOCAL_SERVER_ID || this.closed) return;
    const now = this.options.now().getTime();
    this.prune(now);
    const last = this.lastWrittenAt.get(serverId);
    if (last !== undefined && now - last < this.options.writeIntervalMs) return;
    this.lastWrittenAt.set(serverId, now);
    // The receive time, not the agent's clock: agents' clocks may be off.
    this.pending.set(serverId, {
      receivedAt: new Date(now).toISOString(),
      dockerReachable: heartbeat.dockerReachable,
    });
    if (this.pending.size >= MAX_BATCH) void this.flush();
    else
      this.timer ??= setTimeout(() => void this.flush(), this.options.flushMs ?? DEFAULT_HEARTBEAT_FLUSH_MS);
  }

  /** Writes the queued heartbeats now; resolves once they (and earlier batches) are written. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.writeBatch());
    return this.writing;
  }

  /** Writes what is queued and records nothing more. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async writeBatch(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const values = sql.join(
      [...batch].map(([serverId, beat]) => sql`(${serverId}, ${beat.receivedAt}::timestamptz)`),
    );
    try {
      const { rows } = await sql<{ serverId: string; serverStatus: ServerStatus }>`
        update servers set last_heartbeat_at = beat.received_at
        from (values ${values}) as beat(server_id, received_at)
        where servers.server_id = beat.server_id and servers.enrolled_at is not null
        returning servers.server_id, servers.server_status`.execute(this.options.db);
      for (const { serverId, serverStatus } of rows) {
        if (serverStatus === "inactive" && batch.get(serverId)?.dockerReachable) this.activate(serverId);
      }
    } catch (error) {
      // Not written: let these servers' next heartbeats be written without waiting the interval.
      for (const serverId of batch.keys()) this.lastWrittenAt.delete(serverId);
      this.options.logger.warn({ err: error, heartbeats: batch.size }, "heartbeats not recorded");
    }
  }

  /** Drops servers not written within the interval (deleted servers would otherwise stay forever). */
  private prune(now: number): void {
    if (now - this.lastPrunedAt < this.options.writeIntervalMs) return;
    this.lastPrunedAt = now;
    for (const [serverId, writtenAt] of this.lastWrittenAt) {
      if (now - writtenAt >= this.options.writeIntervalMs) this.lastWrittenAt.delete(serverId);
    }
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
