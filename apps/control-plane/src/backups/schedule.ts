/**
 * Scheduled backups: one croner job per enabled database backup (its `schedule`; the control
 * plane's own backup, databaseType web-server, among them) and per
 * enabled volume backup (its `cronExpression`, keyed `volume:<id>`), each firing queues a run (a
 * deployment row, backups/runs.ts or volume-backups/), unless a run of that backup is still
 * waiting or running. The table of jobs and the busy check are deployments/cron-table.ts's.
 */
import type { ServiceContext } from "../context.ts";
import {
  type CronRow,
  CronTable,
  fireUnlessBusy,
  type SkippedTicks,
  skippedMessage,
} from "../deployments/cron-table.ts";
import { startVolumeBackupRun } from "../volume-backups/volume-backups.ts";
import { startComposeBackupRun } from "./compose-runs.ts";
import { startBackupRun } from "./runs.ts";
import { startWebServerBackupRun, WEB_SERVER } from "./web-server-runs.ts";

const VOLUME = "volume:";

export class BackupSchedule extends CronTable {
  protected readonly what = "backup schedule";

  /** The enabled backups: database backups by their id, volume backups as `volume:<id>`. */
  protected async rows(ctx: ServiceContext): Promise<CronRow[]> {
    const rows = await ctx.db
      .selectFrom("backups")
      .select(["backupId", "schedule"])
      .where("enabled", "=", true)
      .where("backupType", "=", "database")
      .execute();
    const volumes = await ctx.db
      .selectFrom("volumeBackups")
      .select(["volumeBackupId", "cronExpression"])
      .where("enabled", "=", true)
      .execute();
    return [
      ...rows.map((row) => ({ id: row.backupId, pattern: row.schedule })),
      ...volumes.map((row) => ({ id: `${VOLUME}${row.volumeBackupId}`, pattern: row.cronExpression })),
    ];
  }

  /** One scheduled firing: a backup run, unless one of this backup is waiting or running. */
  protected run(ctx: ServiceContext, backupId: string): Promise<void> {
    if (backupId.startsWith(VOLUME)) {
      const volumeBackupId = backupId.slice(VOLUME.length);
      return fireUnlessBusy(ctx, {
        what: "scheduled volume backup",
        column: "volumeBackupId",
        id: volumeBackupId,
        load: () =>
          ctx.db
            .selectFrom("volumeBackups")
            .selectAll()
            .where("volumeBackupId", "=", volumeBackupId)
            .executeTakeFirst(),
        start: (row) => startVolumeBackupRun(ctx, row, "Scheduled volume backup"),
      });
    }
    return fireUnlessBusy(ctx, {
      what: "scheduled backup",
      column: "backupId",
      id: backupId,
      load: () =>
        ctx.db.selectFrom("backups").selectAll().where("backupId", "=", backupId).executeTakeFirst(),
      start: (backup) =>
        backup.databaseType === WEB_SERVER
          ? startWebServerBackupRun(ctx, backup, "Scheduled backup")
          : backup.composeId
            ? startComposeBackupRun(ctx, backup, { title: "Scheduled backup" })
            : startBackupRun(ctx, backup, "backup", { title: "Scheduled backup" }),
    });
  }

  /** Ticks due while no control plane ran: one run row of the backup saying so. */
  protected async recordSkipped(ctx: ServiceContext, id: string, skipped: SkippedTicks): Promise<void> {
    const reason = skippedMessage(skipped);
    if (id.startsWith(VOLUME)) {
      const row = await ctx.db
        .selectFrom("volumeBackups")
        .selectAll()
        .where("volumeBackupId", "=", id.slice(VOLUME.length))
        .executeTakeFirst();
      if (row) await startVolumeBackupRun(ctx, row, "Skipped volume backup", reason);
      return;
    }
    const backup = await ctx.db
      .selectFrom("backups")
      .selectAll()
      .where("backupId", "=", id)
      .executeTakeFirst();
    if (!backup) return;
    if (backup.databaseType === WEB_SERVER)
      await startWebServerBackupRun(ctx, backup, "Skipped backup", reason);
    else if (backup.composeId)
      await startComposeBackupRun(ctx, backup, { title: "Skipped backup", skipped: reason });
    else await startBackupRun(ctx, backup, "backup", { title: "Skipped backup", skipped: reason });
  }
}
