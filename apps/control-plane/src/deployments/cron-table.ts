/**
 * A table of croner jobs kept in step with rows of the database: one job per enabled row (keyed
 * by its id, with its cron pattern and timezone), made again from the rows at every reload, so a
 * restart of the control plane loses no schedule. A firing queues a run through the deployment
 * queue unless a run of that row is still waiting or running (fireUnlessBusy). Several control
 * planes on one database each fire: one of them claims the tick (db/cron-ticks.ts) and runs it,
 * the others skip it. Used by the scheduled backups (backups/schedule.ts) and the scheduled jobs
 * (schedules/cron.ts).
 */
import { Cron } from "croner";
import type { ServiceContext } from "../context.ts";
import { claimTick, cronDowntime, releaseCronBeat, tickOf, unclaimedTicks } from "../db/cron-ticks.ts";
import { insertDeployment, moveDeployments, type NewDeployment } from "./repository.ts";

/** Ticks of one job due while no control plane ran (issue 40 item 6d). */
export interface SkippedTicks {
  count: number;
  first: Date;
  last: Date;
  /** More were due than were counted (MAX_COUNTED_TICKS). */
  more: boolean;
}

/** At most this many ticks of a job are counted after a downtime. */
const MAX_COUNTED_TICKS = 10_000;

/** The message of a skipped run, which is never caught up (docs/decisions.md). */
export function skippedMessage(skipped: SkippedTicks): string {
  const runs = `${skipped.more ? "more than " : ""}${skipped.count} run${skipped.count === 1 && !skipped.more ? "" : "s"}`;
  const span =
    skipped.count === 1
      ? `at ${skipped.first.toISOString()}`
      : `from ${skipped.first.toISOString()} to ${skipped.last.toISOString()}`;
  return `Skipped: ${runs} due ${span}, while no control plane was running; not caught up (the next run is at its schedule)`;
}

/**
 * Records a run that never ran: its row, inserted already ended with status error and the
 * reason (one transaction: no queue ever sees it waiting).
 */
export async function recordSkippedRun(
  ctx: ServiceContext,
  run: NewDeployment,
  reason: string,
): Promise<{ deploymentId: string }> {
  return ctx.db.transaction().execute(async (trx) => {
    const deployment = await insertDeployment(trx, run);
    await moveDeployments(
      trx,
      { deploymentId: deployment.deploymentId },
      ["idle"],
      { status: "error", errorMessage: reason },
      { line: reason },
      ctx.now(),
    );
    return { deploymentId: deployment.deploymentId };
  });
}

/** One scheduled row: its id, its cron pattern and the timezone it is read in (none: the machine's). */
export interface CronRow {
  id: string;
  pattern: string;
  timezone?: string;
}

export abstract class CronTable {
  private readonly jobs = new Map<string, { key: string; cron: Cron }>();
  private ctx: ServiceContext | undefined;
  private loading: Promise<void> = Promise.resolve();

  /** What is scheduled, for the log ("backup schedule", "schedule"). */
  protected abstract readonly what: string;
  /** The rows that must have a job now. */
  protected abstract rows(ctx: ServiceContext): Promise<CronRow[]>;
  /** One firing of the row `id`; logs its failures, never throws. */
  protected abstract run(ctx: ServiceContext, id: string): Promise<void>;
  /** Records the ticks of row `id` no control plane ran (a run row saying so); may throw. */
  protected abstract recordSkipped(ctx: ServiceContext, id: string, skipped: SkippedTicks): Promise<void>;

  /** This control plane's instance id, recorded with the ticks it claims. */
  private owner = "";

  /** Schedules every enabled row; later changes call reschedule(). `owner`: this control plane's id. */
  async start(ctx: ServiceContext, owner: string): Promise<void> {
    this.ctx = ctx;
    this.owner = owner;
    const downtime = cronDowntime(ctx.db, owner);
    await this.reschedule();
    this.recording = downtime
      .then((span) => (span ? this.recordDowntime(ctx, span) : undefined))
      .catch((error) => ctx.logger.error({ err: error }, `${this.what}: ticks due while down not recorded`));
  }

  /** The recording of ticks skipped before this start (for tests and close). */
  recording: Promise<void> = Promise.resolve();

  /**
   * For every enabled row: its ticks due in the downtime that no copy claimed, recorded as one
   * skipped run by the copy whose claim of (`skipped:<job>`, the downtime's start) lands
   * (several copies starting together record it once).
   */
  private async recordDowntime(ctx: ServiceContext, span: { from: Date; to: Date }): Promise<void> {
    for (const row of await this.rows(ctx)) {
      if (this.ctx !== ctx) return;
      try {
        const options = row.timezone ? { paused: true, timezone: row.timezone } : { paused: true };
        const cron = new Cron(row.pattern, options);
        const due = cron.nextRuns(MAX_COUNTED_TICKS + 1, span.from).filter((tick) => tick <= span.to);
        cron.stop();
        const more = due.length > MAX_COUNTED_TICKS;
        const missed = await unclaimedTicks(
          ctx.db,
          `${this.what}:${row.id}`,
          due.slice(0, MAX_COUNTED_TICKS),
        );
        if (missed.length === 0) continue;
        // Keyed by the downtime's start, which every copy starting after it read alike.
        if (!(await claimTick(ctx.db, `skipped:${this.what}:${row.id}`, span.from, this.owner))) continue;
        const skipped = { count: missed.length, first: missed[0]!, last: missed[missed.length - 1]!, more };
        ctx.logger.warn({ id: row.id, ...skipped }, `${this.what}: ${skippedMessage(skipped)}`);
        await this.recordSkipped(ctx, row.id, skipped);
      } catch (error) {
        ctx.logger.error({ err: error, id: row.id }, `${this.what}: ticks due while down not recorded`);
      }
    }
  }

  /** Reads the enabled rows again and makes the jobs match them. */
  reschedule(): Promise<void> {
    const ctx = this.ctx;
    if (!ctx) return Promise.resolve();
    this.loading = this.loading
      .catch(() => {})
      .then(async () => {
        const wanted = new Map((await this.rows(ctx)).map((row) => [row.id, row]));
        const keyOf = (row: CronRow) => `${row.pattern}\n${row.timezone ?? ""}`;
        for (const [id, job] of this.jobs) {
          const row = wanted.get(id);
          if (!row || keyOf(row) !== job.key) {
            job.cron.stop();
            this.jobs.delete(id);
          }
        }
        for (const [id, row] of wanted) {
          if (this.jobs.has(id)) continue;
          try {
            const options = row.timezone ? { protect: true, timezone: row.timezone } : { protect: true };
            const cron = new Cron(row.pattern, options, () => this.fire(id));
            this.jobs.set(id, { key: keyOf(row), cron });
          } catch (error) {
            ctx.logger.warn({ err: error, id }, `${this.what} not understood: not scheduled`);
          }
        }
      });
    return this.loading;
  }

  /** When the row's job next fires; null when it has none. */
  nextRun(id: string): Date | null {
    return this.jobs.get(id)?.cron.nextRun() ?? null;
  }

  /** One scheduled firing of the row `id`: run here unless another control plane claimed its tick. */
  async fire(id: string): Promise<void> {
    const ctx = this.ctx;
    if (!ctx) return;
    const job = `${this.what}:${id}`;
    try {
      if (!(await claimTick(ctx.db, job, tickOf(ctx.now()), this.owner))) return;
    } catch (error) {
      ctx.logger.error({ err: error, id }, `${this.what} tick not claimed: not run`);
      return;
    }
    await this.run(ctx, id);
  }

  close(): void {
    for (const job of this.jobs.values()) job.cron.stop();
    this.jobs.clear();
    if (this.ctx) releaseCronBeat(this.ctx.db);
    this.ctx = undefined;
  }
}

/** The column that ties a run to what it runs (a schedule's in deployments, the others in backup_runs). */
type RunOf = "backupId" | "scheduleId" | "volumeBackupId";

const RUN_OF_COLUMNS = {
  backupId: "backupRuns.backupId",
  scheduleId: "deployments.scheduleId",
  volumeBackupId: "backupRuns.volumeBackupId",
} as const satisfies Record<RunOf, string>;

/**
 * One firing: loads the row, does nothing when it is gone or disabled, skips while a run of it
 * (<column> = id) is waiting or running, else starts a run. Failures are logged as
 * "<what> not started", never thrown (a croner callback has no one to throw to).
 */
export async function fireUnlessBusy<Row extends { enabled: boolean }>(
  ctx: ServiceContext,
  firing: {
    what: string;
    column: RunOf;
    id: string;
    load: () => Promise<Row | undefined>;
    start: (row: Row) => Promise<unknown>;
  },
): Promise<void> {
  const { what, column, id } = firing;
  try {
    const row = await firing.load();
    if (!row?.enabled) return;
    const busy = await ctx.db
      .selectFrom("deployments")
      .leftJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
      .select("deployments.deploymentId")
      .where(RUN_OF_COLUMNS[column], "=", id)
      .where("status", "in", ["idle", "running"])
      .executeTakeFirst();
    if (busy) {
      ctx.logger.info(
        { [column]: id, deploymentId: busy.deploymentId },
        `${what} skipped: a run is still going`,
      );
      return;
    }
    await firing.start(row);
  } catch (error) {
    ctx.logger.error({ err: error, [column]: id }, `${what} not started`);
  }
}
