/**
 * Scheduled jobs' clock: one croner job per enabled schedule (its cronExpression, in its
 * timezone, UTC when it has none), each firing queues a run (a deployment, schedules/runs.ts)
 * unless a run of that schedule is still waiting or running. The table of jobs and the busy
 * check are deployments/cron-table.ts's, as for the scheduled backups (backups/schedule.ts).
 */
import type { ServiceContext } from "../context.ts";
import {
  type CronRow,
  CronTable,
  fireUnlessBusy,
  type SkippedTicks,
  skippedMessage,
} from "../deployments/cron-table.ts";
import { recordSkippedScheduleRun, startScheduleRun } from "./runs.ts";

export class ScheduleCron extends CronTable {
  protected readonly what = "schedule";

  protected async rows(ctx: ServiceContext): Promise<CronRow[]> {
    const rows = await ctx.db
      .selectFrom("schedules")
      .select(["scheduleId", "cronExpression", "timezone"])
      .where("enabled", "=", true)
      .execute();
    return rows.map((row) => ({
      id: row.scheduleId,
      pattern: row.cronExpression,
      timezone: row.timezone ?? "UTC",
    }));
  }

  /** One firing: a run, unless one of this schedule is waiting or running. */
  protected run(ctx: ServiceContext, scheduleId: string): Promise<void> {
    return fireUnlessBusy(ctx, {
      what: "scheduled job",
      column: "scheduleId",
      id: scheduleId,
      load: () =>
        ctx.db.selectFrom("schedules").selectAll().where("scheduleId", "=", scheduleId).executeTakeFirst(),
      start: (schedule) => startScheduleRun(ctx, schedule, "Scheduled run"),
    });
  }

  /** Ticks due while no control plane ran: one run row saying so. */
  protected async recordSkipped(
    ctx: ServiceContext,
    scheduleId: string,
    skipped: SkippedTicks,
  ): Promise<void> {
    const schedule = await ctx.db
      .selectFrom("schedules")
      .selectAll()
      .where("scheduleId", "=", scheduleId)
      .executeTakeFirst();
    if (schedule) await recordSkippedScheduleRun(ctx, schedule, skippedMessage(skipped));
  }
}
