/**
 * Runs of backups as rows of the deployment queue: a database service's deployments of kind
 * `backup` (dump to the destination, then retention, then, when the backup asks for it, a
 * verified restore of the new file), `restore` (a file into the database) and `verify` (the
 * newest file, or a given one, restored into a throwaway container and checked). The worker
 * claims, leases, logs and settles them like every deployment (deployments/worker.ts); what is
 * theirs is here: the runner, which leaves the database's own status alone, and the settle,
 * which records a databaseBackup event (backup and verify runs) instead of appDeploy.
 * A run the control plane left running is failed at the next start, never run again (a dump
 * half-uploaded is not resumed; the next scheduled run makes a new one).
 */

import { abortStaleUploads, deleteObject, describeStorageError, listObjects } from "@platform/agent";
import type {
  BackupDatabaseResult,
  DatabaseAccess,
  ObjectStorage,
  RestoreDatabaseResult,
} from "@platform/agent-protocol";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { buildDatabaseSpec } from "../databases/deploy.ts";
import type { OpenedDatabase } from "../databases/kinds.ts";
import { findDatabaseWithOrganization } from "../databases/repository.ts";
import { openDatabase } from "../databases/views.ts";
import type { Db } from "../db/database.ts";
import type { Backup, DatabaseService } from "../db/schema.ts";
import { maskSecrets } from "../deployments/deploy-service.ts";
import { forwardAgentLog } from "../deployments/log-forwarder.ts";
import { followAgentJob } from "../deployments/observe.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import type { DeploymentResult } from "../deployments/repository.ts";
import { insertDeployment, moveDeployments } from "../deployments/repository.ts";
import { type DeploymentKind, enqueueOrFail } from "../deployments/start.ts";
import { type DeploymentTarget, loadDeploymentTarget, settleTarget } from "../deployments/targets.ts";
import { recordBackupEvent } from "../notifications/backup-events.ts";
import { agentServerId } from "../servers/repository.ts";
import { dumpExtension, filePrefixOf, findBackupWithOrganization, objectKeyOf } from "./backups.ts";
import { findDestination, storageOf } from "./destinations.ts";

export const BACKUP_RUN_KINDS: readonly DeploymentKind[] = ["backup", "restore", "verify"];
export const isBackupRunKind = (kind: string) => (BACKUP_RUN_KINDS as readonly string[]).includes(kind);

/** A dump or restore may take this long on the agent (the watchdog fails a job that went away). */
const JOB_TIMEOUT_MS = 6 * 60 * 60_000;

type OwnedDatabase = DatabaseService & { organizationId: string };

/** Queues a backup run (backup or verify) of `backup`; answers at once. */
export async function startBackupRun(
  services: ServiceContext,
  backup: Backup,
  kind: "backup" | "verify",
  options: { title?: string; backupFile?: string } = {},
): Promise<{ deploymentId: string }> {
  if (!backup.databaseId) throw new Error("A web-server backup runs through startWebServerBackupRun");
  const databaseId = backup.databaseId;
  const database = await findDatabaseWithOrganization(services.db, databaseId);
  if (!database) throw new Error("The database of the backup no longer exists");
  const deployment = await insertDeployment(services.db, {
    target: { kind: "database", id: databaseId },
    kind,
    title: options.title ?? (kind === "backup" ? "Manual backup" : "Restore verification"),
    description: null,
    serverId: database.serverId,
    backupId: backup.backupId,
    backupDestinationId: backup.destinationId,
    backupFile: options.backupFile ?? null,
  });
  await enqueueOrFail(services, deployment.deploymentId, databaseId);
  return { deploymentId: deployment.deploymentId };
}

/** Queues a restore of `backupFile` from the destination into the database `databaseName`. */
export async function startRestoreRun(
  services: ServiceContext,
  database: OwnedDatabase,
  input: { destinationId: string; backupFile: string; databaseName: string },
): Promise<{ deploymentId: string }> {
  await agentServerId(services, database.organizationId, database.serverId);
  const deployment = await insertDeployment(services.db, {
    target: { kind: "database", id: database.databaseId },
    kind: "restore",
    title: `Restore ${input.backupFile.split("/").pop()}`.slice(0, 200),
    description: null,
    serverId: database.serverId,
    backupDestinationId: input.destinationId,
    backupFile: input.backupFile,
    backupDatabaseName: input.databaseName,
  });
  await enqueueOrFail(services, deployment.deploymentId, database.databaseId);
  return { deploymentId: deployment.deploymentId };
}

/**
 * A backup, restore or verify run a stopped control plane left running fails (its upload was
 * never completed, so no object looks complete): its agent job is cancelled where it still
 * runs, and its end is stored with its databaseBackup event. It is not run again; the next
 * scheduled run makes a new file.
 */
export async function failInterruptedBackupRun(
  services: ServiceContext,
  row: {
    deploymentId: string;
    databaseId: string;
    kind: DeploymentKind;
    title: string;
    serverId: string | null;
  },
): Promise<void> {
  const serverId = row.serverId ?? LOCAL_SERVER_ID;
  for (const step of ["backup", "restore", "verify"]) {
    await services.agents.client.cancelJob(serverId, `${row.deploymentId}-${step}`, 2000).catch(() => {});
  }
  if (row.kind === "backup") await deleteUnconfirmedFile(services, row.deploymentId);
  const reason = "Interrupted: the control plane stopped during this run; nothing was completed";
  const result: DeploymentResult = { status: "error", errorMessage: reason };
  const target = await loadDeploymentTarget(services, {
    targetKind: "database",
    targetId: row.databaseId,
    kind: row.kind,
  });
  await services.db.transaction().execute(async (trx) => {
    const moved = await moveDeployments(
      trx,
      { deploymentId: row.deploymentId },
      ["running"],
      result,
      { line: reason },
      services.now(),
    );
    if (moved.length > 0 && target) await settleTarget(trx, target, row, result, services.now());
  });
}

/**
 * The file an interrupted backup run was writing: the agent may have completed its upload after
 * the control plane stopped (its job was cancelled above otherwise), but nothing confirmed it,
 * so it is deleted and the run names no file.
 */
async function deleteUnconfirmedFile(services: ServiceContext, deploymentId: string): Promise<void> {
  const row = await services.db
    .selectFrom("deployments")
    .select(["backupFile", "backupSizeBytes", "backupDestinationId", "targetId"])
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirst();
  if (!row?.backupFile || row.backupSizeBytes !== null || !row.backupDestinationId) return;
  const database = await findDatabaseWithOrganization(services.db, row.targetId);
  const destination = database
    ? await findDestination(services.db, database.organizationId, row.backupDestinationId)
    : undefined;
  if (destination) {
    try {
      await deleteObject(await storageOf(services, destination), row.backupFile);
    } catch (error) {
      services.logger.warn(
        { err: error, deploymentId, key: row.backupFile },
        "the file of an interrupted backup run could not be deleted",
      );
    }
  }
  await services.db
    .updateTable("deployments")
    .set({ backupFile: null })
    .where("deploymentId", "=", deploymentId)
    .execute();
}

/** How the dump and restore tools reach the database (root for the MySQL family). */
function accessOf(row: OwnedDatabase, opened: OpenedDatabase, databaseName: string): DatabaseAccess {
  const rootish = row.kind === "mysql" || row.kind === "mariadb";
  return {
    kind: row.kind,
    databaseName: row.kind === "redis" ? "" : databaseName || (opened.databaseName ?? ""),
    user: rootish ? "root" : (opened.databaseUser ?? ""),
    password: rootish ? (opened.databaseRootPassword ?? opened.databasePassword) : opened.databasePassword,
  };
}

/** The database target's view of a backup run: its status stays, the event is databaseBackup. */
export function backupRunTarget(base: DeploymentTarget, kind: DeploymentKind): DeploymentTarget {
  return {
    ...base,
    run: runBackupRun,
    setStatus: async () => {},
    settle: (db, deployment, result, now) => settleBackupRun(db, base, { ...deployment, kind }, result, now),
  };
}

async function settleBackupRun(
  db: Db,
  target: DeploymentTarget,
  deployment: { deploymentId: string; title: string; kind: DeploymentKind },
  result: DeploymentResult,
  now: Date,
): Promise<void> {
  if (deployment.kind === "restore") return;
  const row = await db
    .selectFrom("deployments")
    .select(["backupId", "backupFile", "backupCheck"])
    .where("deploymentId", "=", deployment.deploymentId)
    .executeTakeFirst();
  const ok = result.status === "done";
  const what = deployment.kind === "verify" ? "restore verification" : "backup";
  await recordBackupEvent(
    db,
    {
      kind: "databaseBackup",
      organizationId: target.organizationId,
      serviceName: target.name,
      eventService: target.eventService,
      ok,
      message: ok
        ? `${deployment.title}: ${what} done${row?.backupCheck ? ` (verified: ${row.backupCheck})` : ""}`
        : `${deployment.title}: ${what} failed: ${result.errorMessage}`,
      details: {
        backupId: row?.backupId ?? "",
        backupFile: row?.backupFile ?? "",
        verification: row?.backupCheck ?? "",
        deploymentId: deployment.deploymentId,
      },
    },
    now,
  );
}

/** Runs one backup, restore or verify deployment; throws with the reason (already logged). */
export async function runBackupRun(services: ServiceContext, run: DeploymentRun): Promise<DeploymentOutcome> {
  const secrets: string[] = [];
  const log = (line: string) => run.log(maskSecrets(line, secrets));
  try {
    const deployment = await services.db
      .selectFrom("deployments")
      .select(["kind", "backupId", "backupDestinationId", "backupFile", "backupDatabaseName"])
      .where("deploymentId", "=", run.deploymentId)
      .executeTakeFirstOrThrow();
    const database = await findDatabaseWithOrganization(services.db, run.target.id);
    if (!database) throw new Error("The database service no longer exists");
    const serverId = await agentServerId(services, database.organizationId, database.serverId);
    const opened = openDatabase(services.secrets, database);
    secrets.push(
      opened.databasePassword,
      ...(opened.databaseRootPassword ? [opened.databaseRootPassword] : []),
    );
    const backup = deployment.backupId
      ? await findBackupWithOrganization(services.db, deployment.backupId)
      : undefined;
    if (deployment.kind !== "restore" && !backup) throw new Error("The backup no longer exists");
    const destinationId = deployment.backupDestinationId ?? backup?.destinationId;
    const destination = destinationId
      ? await findDestination(services.db, database.organizationId, destinationId)
      : undefined;
    if (!destination) throw new Error("The destination no longer exists");
    const storage = await storageOf(services, destination);
    secrets.push(storage.secretAccessKey);
    const context: RunContext = { services, run, log, serverId, database, opened, storage };

    if (deployment.kind === "backup" && backup) {
      const key = objectKeyOf({ ...backup, databaseType: database.kind }, services.now());
      const access = accessOf(database, opened, backup.database);
      log(
        `Backing up ${database.kind} ${access.databaseName || database.appName} to ${destination.name} as ${key}`,
      );
      await abortLeftUploads(context, backup);
      // The key is stored before the upload (no size yet): a run the control plane leaves
      // running is failed at its next start, which deletes that key if the agent still
      // completed it (failInterruptedBackupRun).
      await services.db
        .updateTable("deployments")
        .set({ backupFile: key, backupSizeBytes: null })
        .where("deploymentId", "=", run.deploymentId)
        .execute();
      let result: BackupDatabaseResult;
      try {
        result = await agentJob<BackupDatabaseResult>(context, "backup", (jobId, logStreamId) =>
          services.agents.client.backupDatabase(
            serverId,
            transferOf(context, access, key, jobId, logStreamId),
            JOB_TIMEOUT_MS,
          ),
        );
      } catch (error) {
        // The upload was aborted or never completed: the run names no file.
        await services.db
          .updateTable("deployments")
          .set({ backupFile: null })
          .where("deploymentId", "=", run.deploymentId)
          .execute();
        throw error;
      }
      await recordFile(services.db, run.deploymentId, key, result.sizeBytes);
      log(`Backup stored: ${key} (${result.sizeBytes} bytes)`);
      await applyRetention(context, backup, key);
      if (backup.verifyRestore) await verify(context, backup, key);
      return { imageName: key };
    }
    if (deployment.kind === "restore") {
      const key = deployment.backupFile ?? "";
      const access = accessOf(database, opened, deployment.backupDatabaseName ?? "");
      const result = await agentJob<RestoreDatabaseResult>(context, "restore", (jobId, logStreamId) =>
        services.agents.client.restoreDatabase(
          serverId,
          transferOf(context, access, key, jobId, logStreamId),
          JOB_TIMEOUT_MS,
        ),
      );
      await recordFile(services.db, run.deploymentId, key, result.sizeBytes);
      log(`Restored ${key} into ${access.databaseName || database.appName}`);
      return { imageName: key };
    }
    if (!backup) throw new Error("The backup no longer exists");
    const key = deployment.backupFile ?? (await newestFile(context, backup));
    await verify(context, backup, key);
    return { imageName: key };
  } catch (error) {
    const reason = maskSecrets(reasonOf(error, run.signal), secrets);
    log(`Error: ${reason}`);
    throw new Error(reason);
  }
}

interface RunContext {
  services: ServiceContext;
  run: DeploymentRun;
  log: (line: string) => void;
  serverId: string;
  database: OwnedDatabase;
  opened: OpenedDatabase;
  storage: Awaited<ReturnType<typeof storageOf>>;
}

const owner = (database: OwnedDatabase) => ({
  organizationId: database.organizationId,
  resource: `database:${database.databaseId}`,
});

/** What the agent's backup and restore commands share: the job, the database service, the object. */
function transferOf(
  context: RunContext,
  access: ReturnType<typeof accessOf>,
  key: string,
  jobId: string,
  logStreamId: string,
) {
  const { database, storage } = context;
  return {
    jobId,
    logStreamId,
    serviceName: database.appName,
    owner: owner(database),
    database: access,
    storage,
    key,
  };
}

async function recordFile(db: Db, deploymentId: string, key: string, size: number): Promise<void> {
  await db
    .updateTable("deployments")
    .set({ backupFile: key, backupSizeBytes: String(size) })
    .where("deploymentId", "=", deploymentId)
    .execute();
}

/**
 * Runs one agent job of the run, its log forwarded, followed by observation: a job the agent
 * no longer knows (it restarted mid-dump) fails the run rather than running twice, since its
 * upload was never completed.
 */
async function agentJob<T>(
  context: RunContext,
  step: "backup" | "restore" | "verify",
  send: (jobId: string, logStreamId: string) => Promise<T>,
): Promise<T> {
  const { services, run, serverId, log } = context;
  const jobId = `${run.deploymentId}-${step}`;
  const cancel = () => {
    services.agents.client.cancelJob(serverId, jobId).catch(() => {});
  };
  run.signal.addEventListener("abort", cancel, { once: true });
  try {
    return await forwardAgentLog(services, serverId, jobId, log, () =>
      followAgentJob(services, {
        serverId,
        jobId,
        send: (attempt) =>
          attempt === 0
            ? send(jobId, jobId)
            : Promise.reject(
                new Error(
                  `The agent of server ${serverId} lost the ${step} job (it restarted?): nothing was completed`,
                ),
              ),
        log,
        signal: run.signal,
        onWaiting: () => run.slot?.giveBack(),
        onResumed: async () => run.slot?.take(),
      }),
    );
  } finally {
    run.signal.removeEventListener("abort", cancel);
  }
}

/** The backup's own files (its prefix, name and kind's extension), oldest first. */
export async function ownFilesIn(storage: ObjectStorage, backup: Backup) {
  const extension = `.${dumpExtension[backup.databaseType]}.gz`;
  const prefix = `${backup.prefix}/${filePrefixOf(backup)}`;
  const objects = await listObjects(storage, prefix).catch((error: unknown) => {
    throw new Error(`The destination could not be listed: ${describeStorageError(error)}`);
  });
  return objects
    .filter((object) => object.key.endsWith(extension))
    .sort((a, b) => a.key.localeCompare(b.key));
}

const ownFiles = (context: RunContext, backup: Backup) =>
  ownFilesIn(context.storage, { ...backup, databaseType: context.database.kind });

async function newestFile(context: RunContext, backup: Backup): Promise<string> {
  const files = await ownFiles(context, backup);
  const newest = files.at(-1);
  if (!newest) throw new Error("The backup has no file to verify yet");
  return newest.key;
}

/**
 * Aborts the multipart uploads under the backup's own files that a killed agent left (their
 * parts stay in the bucket until aborted). Runs of one database run one at a time, so none of
 * them is live when a run starts.
 */
async function abortLeftUploads(context: RunContext, backup: Backup): Promise<void> {
  await abortLeftUploadsIn(context.storage, backup, context.log);
}

/** abortLeftUploads for any backup: its own unfinished uploads in `storage`. */
export async function abortLeftUploadsIn(
  storage: ObjectStorage,
  backup: Backup,
  log: (line: string) => void,
): Promise<void> {
  const prefix = `${backup.prefix}/${filePrefixOf(backup)}`;
  try {
    const aborted = await abortStaleUploads(storage, prefix);
    for (const key of aborted) log(`Aborted the unfinished upload of ${key} an earlier run left`);
  } catch (error) {
    // Some S3-compatible stores do not list uploads: the backup itself does not depend on it.
    log(`Unfinished uploads could not be listed: ${describeStorageError(error)}`);
  }
}

/** keepLatestCount: deletes the backup's own oldest files beyond the newest N. */
async function applyRetention(context: RunContext, backup: Backup, written: string): Promise<void> {
  await applyRetentionIn(
    context.storage,
    { ...backup, databaseType: context.database.kind },
    written,
    context.log,
  );
}

/** applyRetention for any backup: its own files in `storage` beyond the newest keepLatestCount. */
export async function applyRetentionIn(
  storage: ObjectStorage,
  backup: Backup,
  written: string,
  log: (line: string) => void,
): Promise<void> {
  if (!backup.keepLatestCount) return;
  const files = await ownFilesIn(storage, backup);
  const excess = files
    .filter((file) => file.key !== written)
    .slice(0, Math.max(0, files.length - backup.keepLatestCount));
  for (const file of excess) {
    await deleteObject(storage, file.key).catch((error: unknown) => {
      throw new Error(`Retention could not delete ${file.key}: ${describeStorageError(error)}`);
    });
    log(`Retention: deleted ${file.key} (keeping the newest ${backup.keepLatestCount})`);
  }
}

/** Restores `key` into a throwaway container of the database's image and stores the check. */
async function verify(context: RunContext, backup: Backup, key: string): Promise<void> {
  const { services, run, serverId, database, opened, log } = context;
  const spec = buildDatabaseSpec(database, opened, services.config.defaultDatabaseImages);
  const access = accessOf(database, opened, backup.database);
  log(`Verifying ${key}: restoring it into a throwaway ${spec.image} container`);
  try {
    const result = await agentJob<RestoreDatabaseResult>(context, "verify", (jobId, logStreamId) =>
      services.agents.client.restoreDatabase(
        serverId,
        {
          ...transferOf(context, access, key, jobId, logStreamId),
          throwaway: {
            image: spec.image,
            env: spec.env ?? [],
            command: spec.command ?? [],
            args: spec.args ?? [],
            checkTable: backup.verifyTable ?? "",
          },
        },
        JOB_TIMEOUT_MS,
      ),
    );
    await services.db
      .updateTable("deployments")
      .set({ backupFile: key, backupCheck: result.check })
      .where("deploymentId", "=", run.deploymentId)
      .execute();
    log(`Restore verified: ${result.check}`);
  } catch (error) {
    const reason = reasonOf(error, run.signal);
    await services.db
      .updateTable("deployments")
      .set({ backupFile: key, backupCheck: `failed: ${reason}`.slice(0, 1000) })
      .where("deploymentId", "=", run.deploymentId)
      .execute();
    throw new Error(`The restore verification of ${key} failed: ${reason}`);
  }
}

function reasonOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return (signal.reason as Error | undefined)?.message ?? "Cancelled";
  const agentMessage = (error as { agentMessage?: string })?.agentMessage;
  if (agentMessage) return agentMessage;
  return error instanceof Error ? error.message : String(error);
}
