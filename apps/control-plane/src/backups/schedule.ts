/**
 * Scheduled backups: one croner job per enabled database backup (its `schedule`; the control
 * plane's own backup, databaseType web-server, among them) and per
 * enabled volume backup (its `cronExpression`, keyed `volume:<id>`), each firing queues a run (a
 * deployment row, backups/runs.ts or volume-backups/), unless a run of that backup is still
 * waiting or running. Several control planes on one database would each queue one: the later one
 * finds the first waiting and skips (the check and the insert are not atomic across
 * processes; one control plane per database is assumed, as for deployments).
 */
import { Cron } from "croner";
import type { ServiceContext } from "../context.ts";
import { startVolumeBackupRun } from "../volume-backups/volume-backups.ts";
import { startBackupRun } from "./runs.ts";
import { startWebServerBackupRun, WEB_SERVER } from "./web-server-runs.ts";

const VOLUME = "volume:";

export class BackupSchedule {
  private readonly jobs = new Map<string, { pattern: string; cron: Cron }>();
  private services: ServiceContext | undefined;
  private loading: Promise<void> = Promise.resolve();

  /** Schedules every enabled backup; later changes call reschedule(). */
  start(services: ServiceContext): Promise<void> {
    this.services = services;
    return this.reschedule();
  }

  /** Reads the enabled backups again and makes the jobs match them. */
  reschedule(): Promise<void> {
    const services = this.services;
    if (!services) return Promise.resolve();
    this.loading = this.loading
      .catch(() => {})
      .then(async () => {
        const rows = await services.db
          .selectFrom("backups")
          .select(["backupId", "schedule"])
          .where("enabled", "=", true)
          .where("backupType", "=", "database")
          .execute();
        const volumes = await services.db
          .selectFrom("volumeBackups")
          .select(["volumeBackupId", "cronExpression"])
          .where("enabled", "=", true)
          .execute();
        const wanted = new Map([
          ...rows.map((row) => [row.backupId, row.schedule] as const),
          ...volumes.map((row) => [`${VOLUME}${row.volumeBackupId}`, row.cronExpression] as const),
        ]);
        for (const [backupId, job] of this.jobs) {
          if (wanted.get(backupId) !== job.pattern) {
            job.cron.stop();
            this.jobs.delete(backupId);
          }
        }
        for (const [backupId, pattern] of wanted) {
          if (this.jobs.has(backupId)) continue;
          try {
            const cron = new Cron(pattern, { protect: true }, () => this.fire(backupId));
            this.jobs.set(backupId, { pattern, cron });
          } catch (error) {
            services.logger.warn({ err: error, backupId }, "backup schedule not understood: not scheduled");
          }
        }
      });
    return this.loading;
  }

  /** When the backup's next scheduled run is; null when it has none. */
  nextRun(backupId: string): Date | null {
    return this.jobs.get(backupId)?.cron.nextRun() ?? null;
  }

  /** One scheduled firing: a backup run, unless one of this backup is waiting or running. */
  async fire(backupId: string): Promise<void> {
    const services = this.services;
    if (!services) return;
    if (backupId.startsWith(VOLUME)) return this.fireVolume(services, backupId.slice(VOLUME.length));
    try {
      const backup = await services.db
        .selectFrom("backups")
        .selectAll()
        .where("backupId", "=", backupId)
        .executeTakeFirst();
      if (!backup?.enabled) return;
      const busy = await services.db
        .selectFrom("deployments")
        .select("deploymentId")
        .where("backupId", "=", backupId)
        .where("status", "in", ["idle", "running"])
        .executeTakeFirst();
      if (busy) {
        services.logger.info(
          { backupId, deploymentId: busy.deploymentId },
          "scheduled backup skipped: a run is still going",
        );
        return;
      }
      if (backup.databaseType === WEB_SERVER)
        await startWebServerBackupRun(services, backup, "Scheduled backup");
      else await startBackupRun(services, backup, "backup", { title: "Scheduled backup" });
    } catch (error) {
      services.logger.error({ err: error, backupId }, "scheduled backup not started");
    }
  }

  /** One scheduled firing of a volume backup: a volumeBackup run, unless one is waiting or running. */
  private async fireVolume(services: ServiceContext, volumeBackupId: string): Promise<void> {
    try {
      const row = await services.db
        .selectFrom("volumeBackups")
        .selectAll()
        .where("volumeBackupId", "=", volumeBackupId)
        .executeTakeFirst();
      if (!row?.enabled) return;
      const busy = await services.db
        .selectFrom("deployments")
        .select("deploymentId")
        .where("volumeBackupId", "=", volumeBackupId)
        .where("status", "in", ["idle", "running"])
        .executeTakeFirst();
      if (busy) {
        services.logger.info({ volumeBackupId }, "scheduled volume backup skipped: a run is still going");
        return;
      }
      await startVolumeBackupRun(services, row, "Scheduled volume backup");
    } catch (error) {
      services.logger.error({ err: error, volumeBackupId }, "scheduled volume backup not started");
    }
  }

  close(): void {
    for (const job of this.jobs.values()) job.cron.stop();
    this.jobs.clear();
    this.services = undefined;
  }
}
