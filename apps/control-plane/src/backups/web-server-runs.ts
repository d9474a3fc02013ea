/**
 * Runs of the control plane's own backup (a backup row of databaseType `web-server`, Dokploy's
 * runWebServerBackup) as rows of the deployment queue: deployments of target kind `webServer`
 * (its id the backup's: one run at a time, apart from every service's deployments), kind
 * `backup`. The worker claims, leases, logs and settles them like every deployment; the run
 * itself is the control plane's: it streams a consistent dump of its own database
 * (backupWebServer, the format `npm run web-server-backup -- restore` reads) into a multipart
 * upload of the destination, with no copy on its disk, then applies keepLatestCount. Its settle
 * records a platformBackup event (Dokploy's dokployBackup) of the backup's organization (the instance organization, whose
 * administrators alone manage it). A run the control plane left running is failed at the next
 * start, never run again: its upload was never completed, so no object looks whole, and the
 * next run aborts the parts it left.
 */
import type { Caller, ServiceContext } from "../context.ts";
import type { Backup, Deployment } from "../db/schema.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import type { DeploymentTarget } from "../deployments/targets.ts";
import { forbidden } from "../errors.ts";
import { recordBackupEvent } from "../notifications/backup-events.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { findBackupWithOrganization, objectKeyOf, ownFilesOf } from "./backups.ts";
import { findDestination, storageOf } from "./destinations.ts";
import {
  abortLeftUploads,
  applyRetention,
  deleteUnconfirmedFile,
  failInterrupted,
  queueRun,
  runLog,
  uploadRecorded,
} from "./run-steps.ts";
import { backupWebServer } from "./web-server.ts";

export const WEB_SERVER = "web-server";
const SERVICE_NAME = "Web server";

/**
 * A run of the organization's web-server backup, for an instance administrator (403 for others
 * of the organization); undefined when it is no such run of the caller's organization.
 */
export async function findWebServerRun(
  ctx: ServiceContext,
  caller: Caller,
  deploymentId: string,
): Promise<Deployment | undefined> {
  const row = await ctx.db
    .selectFrom("deployments")
    .innerJoin("backups", "backups.backupId", "deployments.webServerBackupId")
    .innerJoin("destinations", "destinations.destinationId", "backups.destinationId")
    .selectAll("deployments")
    .where("deployments.deploymentId", "=", deploymentId)
    .where("deployments.targetKind", "=", "webServer")
    .where("destinations.organizationId", "=", caller.organizationId)
    .executeTakeFirst();
  if (!row) return undefined;
  if (!(await isInstanceAdmin(ctx.db, caller))) {
    throw forbidden("Only instance administrators read the web-server backup's runs");
  }
  return row;
}

/** Queues a run of the control plane's own backup; answers at once. */
export async function startWebServerBackupRun(
  ctx: ServiceContext,
  backup: Backup,
  title = "Web Server Backup",
  /** Ticks due while no control plane ran: the run is recorded, ended with this reason. */
  skipped?: string,
): Promise<{ deploymentId: string }> {
  return queueRun(
    ctx,
    {
      target: { kind: "webServer", id: backup.backupId },
      kind: "backup",
      title,
      description: null,
      serverId: null,
      backupRun: { backupId: backup.backupId, backupDestinationId: backup.destinationId },
    },
    skipped,
  );
}

/** The worker's view of a web-server backup (deployments/targets.ts): no status, a backup event. */
export async function loadWebServerTarget(
  ctx: ServiceContext,
  backupId: string,
): Promise<DeploymentTarget | undefined> {
  const backup = await findBackupWithOrganization(ctx.db, backupId);
  if (!backup) return undefined;
  return {
    kind: "webServer",
    serviceId: backup.backupId,
    name: SERVICE_NAME,
    organizationId: backup.organizationId,
    status: "idle",
    run: runWebServerBackupRun,
    // Never reached: recovery fails a web-server run first (failInterruptedWebServerRun).
    recovery: "runAgain",
    eventService: { backupId: backup.backupId },
    setStatus: async () => {},
    settle: async (db, deployment, result, now) => {
      const row = await db
        .selectFrom("backupRuns")
        .select(["backupFile"])
        .where("deploymentId", "=", deployment.deploymentId)
        .executeTakeFirst();
      const ok = result.status === "done";
      await recordBackupEvent(
        db,
        {
          kind: "platformBackup",
          organizationId: backup.organizationId,
          serviceName: SERVICE_NAME,
          eventService: { backupId: backup.backupId },
          ok,
          message: ok
            ? `${deployment.title}: backup done`
            : `${deployment.title}: backup failed: ${result.errorMessage}`,
          details: {
            backupId: backup.backupId,
            backupFile: row?.backupFile ?? "",
            verification: "",
            deploymentId: deployment.deploymentId,
          },
        },
        now,
      );
    },
  };
}

/** Dumps the control plane's database into the destination; throws with the reason (logged). */
export async function runWebServerBackupRun(
  ctx: ServiceContext,
  run: DeploymentRun,
): Promise<DeploymentOutcome> {
  const { secrets, log, failure } = runLog(run);
  try {
    const backup = await findBackupWithOrganization(ctx.db, run.target.id);
    if (!backup) throw new Error("The backup no longer exists");
    const destination = await findDestination(ctx.db, backup.organizationId, backup.destinationId);
    if (!destination) throw new Error("The destination no longer exists");
    const storage = await storageOf(ctx, destination);
    secrets.push(storage.secretAccessKey);
    const key = objectKeyOf(backup, ctx.now());
    log(`Backing up the control plane's database to ${destination.name} as ${key}`);
    const files = ownFilesOf(backup);
    await abortLeftUploads(storage, files, log);
    const result = await uploadRecorded(ctx.db, run.deploymentId, key, () =>
      backupWebServer(ctx.db, storage, key, run.signal),
    );
    log(`Backup stored: ${key} (${result.rows} rows of ${result.tables} tables, ${result.sizeBytes} bytes)`);
    await applyRetention(storage, files, backup.keepLatestCount, key, log);
    return { imageName: key };
  } catch (error) {
    throw failure(error);
  }
}

/**
 * A web-server run a stopped control plane left running fails: the upload it was writing was
 * never confirmed (the process that wrote it is gone), so its object is deleted if it was still
 * completed and the run names no file; it is not run again.
 */
export async function failInterruptedWebServerRun(
  ctx: ServiceContext,
  row: { deploymentId: string; title: string },
): Promise<void> {
  const deployment = await ctx.db
    .selectFrom("deployments")
    .select(["targetId"])
    .where("deploymentId", "=", row.deploymentId)
    .executeTakeFirst();
  const target = deployment ? await loadWebServerTarget(ctx, deployment.targetId) : undefined;
  await deleteUnconfirmedFile(ctx, row.deploymentId, target?.organizationId);
  await failInterrupted(ctx, row, target);
}
