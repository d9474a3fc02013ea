/**
 * Scheduled jobs' clock: one croner job per enabled schedule (its cronExpression, in its
 * timezone), each firing queues a run (a deployment, schedules/runs.ts) unless a run of that
 * schedule is still waiting or running. One control plane per database is assumed, as for the
 * scheduled backups (backups/schedule.ts).
 */
import { Cron } from "croner";
import type { ServiceContext } from "../context.ts";
import { startScheduleRun } from "./runs.ts";

export class ScheduleCron {
  private readonly jobs = new Map<string, { key: string; cron: Cron }>();
  private services: ServiceContext | undefined;
  private loading: Promise<void> = Promise.resolve();

  start(services: ServiceContext): Promise<void> {
    this.services = services;
    return this.reschedule();
  }

  /** Reads the enabled schedules again and makes the jobs match them. */
  reschedule(): Promise<void> {
    const services = this.services;
    if (!services) return Promise.resolve();
    this.loading = this.loading
      .catch(() => {})
      .then(async () => {
        const rows = await services.db
          .selectFrom("schedules")
          .select(["scheduleId", "cronExpression", "timezone"])
          .where("enabled", "=", true)
          .execute();
        const wanted = new Map(rows.map((row) => [row.scheduleId, row]));
        const keyOf = (row: (typeof rows)[number]) => `${row.cronExpression}\n${row.timezone ?? ""}`;
        for (const [scheduleId, job] of this.jobs) {
          const row = wanted.get(scheduleId);
          if (!row || keyOf(row) !== job.key) {
            job.cron.stop();
            this.jobs.delete(scheduleId);
          }
        }
        for (const [scheduleId, row] of wanted) {
          if (this.jobs.has(scheduleId)) continue;
          try {
            const cron = new Cron(
              row.cronExpression,
              { protect: true, timezone: row.timezone ?? "UTC" },
              () => this.fire(scheduleId),
            );
            this.jobs.set(scheduleId, { key: keyOf(row), cron });
          } catch (error) {
            services.logger.warn({ err: error, scheduleId }, "schedule not understood: not scheduled");
          }
        }
      });
    return this.loading;
  }

  /** When the schedule next runs; null when it is not scheduled. */
  nextRun(scheduleId: string): Date | null {
    return this.jobs.get(scheduleId)?.cron.nextRun() ?? null;
  }

  /** One firing: a run, unless one of this schedule is waiting or running. */
  async fire(scheduleId: string): Promise<void> {
    const services = this.services;
    if (!services) return;
    try {
      const schedule = await services.db
        .selectFrom("schedules")
        .selectAll()
        .where("scheduleId", "=", scheduleId)
        .executeTakeFirst();
      if (!schedule?.enabled) return;
      const busy = await services.db
        .selectFrom("deployments")
        .select("deploymentId")
        .where("scheduleId", "=", scheduleId)
        .where("status", "in", ["idle", "running"])
        .executeTakeFirst();
      if (busy) {
        services.logger.info(
          { scheduleId, deploymentId: busy.deploymentId },
          "scheduled job skipped: a run is still going",
        );
        return;
      }
      await startScheduleRun(services, schedule, "Scheduled run");
    } catch (error) {
      services.logger.error({ err: error, scheduleId }, "scheduled job not started");
    }
  }

  close(): void {
    for (const job of this.jobs.values()) job.cron.stop();
    this.jobs.clear();
    this.services = undefined;
  }
}
