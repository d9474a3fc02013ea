/**
 * The scheduled cleanup of this machine's proxy access log (settings.updateLogCleanup,
 * getLogCleanupStatus): the cron is a column of the settings row (null: none), so every start
 * schedules it again from there; a change through any control plane reaches the others through
 * platform_cron (migration 20261202-10). Of several control planes on one database, the one
 * whose cron_ticks insert lands runs a tick. A run asks this machine's agent to empty
 * <main directory>/traefik/access.log in place (Traefik keeps appending to it).
 */
import { Cron } from "croner";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { claimTick, tickOf } from "../db/cron-ticks.ts";

/** A cron expression croner accepts (5 fields, or 6 with seconds first), or null for none. */
export const logCleanupCronSchema = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .refine((expression) => {
    try {
      new Cron(expression, { paused: true }).stop();
      return true;
    } catch {
      return false;
    }
  }, "must be a cron expression such as 0 0 * * * (minute hour day month weekday)")
  .nullable();

type LogCleanupContext = Pick<ServiceContext, "db" | "agents" | "logger" | "now">;

export interface LogCleanupStatus {
  enabled: boolean;
  cronExpression: string | null;
}

export class LogCleanupSchedule {
  private job: Cron | undefined;
  private pattern: string | null = null;
  private readonly running = new Set<Promise<void>>();
  /** Outcome of the last run in this process (tests and the log read it). */
  lastRun: { at: Date; bytesRemoved: number; exists: boolean } | { at: Date; error: string } | undefined;

  constructor(
    private readonly ctx: LogCleanupContext,
    /** This control plane's instance id: of several on one database, one claims each tick. */
    private readonly owner = "",
  ) {}

  /** Schedules the stored cron, if any. */
  async start(): Promise<void> {
    const row = await this.ctx.db.selectFrom("webServerSettings").select("logCleanupCron").executeTakeFirst();
    this.set(row?.logCleanupCron ?? null);
  }

  /** Schedules again from the row (changed through another control plane). */
  async reload(): Promise<void> {
    await this.start().catch((error) =>
      this.ctx.logger.warn({ err: error }, "the access log cleanup was not rescheduled"),
    );
  }

  /** Stores the cron (null: none) and schedules it. */
  async update(cronExpression: string | null): Promise<void> {
    await this.ctx.db
      .updateTable("webServerSettings")
      .set({ logCleanupCron: cronExpression, updatedAt: new Date().toISOString() })
      .where("id", "=", 1)
      .execute();
    this.set(cronExpression);
  }

  status(): LogCleanupStatus {
    return { enabled: this.pattern !== null, cronExpression: this.pattern };
  }

  /** When the cleanup runs next; null when none is scheduled. */
  nextRun(): Date | null {
    return this.job?.nextRun() ?? null;
  }

  private set(pattern: string | null): void {
    if (pattern === this.pattern && (pattern === null || this.job)) return;
    this.job?.stop();
    this.job = undefined;
    this.pattern = pattern;
    if (pattern === null) return;
    this.job = new Cron(pattern, { protect: true, unref: true }, () => {
      const run: Promise<void> = claimTick(this.ctx.db, "log cleanup", tickOf(this.ctx.now()), this.owner)
        .then(async (mine) => {
          if (mine) await this.run();
        })
        .catch((error) => this.ctx.logger.error({ err: error }, "access log cleanup tick not run"))
        .finally(() => this.running.delete(run));
      this.running.add(run);
      return run;
    });
  }

  /** One cleanup; a failure is logged and kept in lastRun, never thrown. */
  async run(): Promise<void> {
    const { agents, logger } = this.ctx;
    try {
      const cleaned = await callAgent(
        LOCAL_SERVER_ID,
        () => agents.client.cleanAccessLog(LOCAL_SERVER_ID),
        logger,
      );
      this.lastRun = { at: this.ctx.now(), bytesRemoved: cleaned.bytesRemoved, exists: cleaned.exists };
      logger.info({ bytesRemoved: cleaned.bytesRemoved }, "the proxy's access log was cleaned");
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.lastRun = { at: this.ctx.now(), error: reason };
      logger.warn({ reason }, "the scheduled access log cleanup failed");
    }
  }

  async close(): Promise<void> {
    this.job?.stop();
    this.job = undefined;
    await Promise.allSettled([...this.running]);
  }
}
