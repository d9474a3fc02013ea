/**
 * Runs of backups as rows of the deployment queue: a database service's deployments of kind
 * `backup` (dump to the destination, then retention, then, when the backup asks for it, a
 * verified restore of the new file), `restore` (a file into the database) and `verify` (the
 * newest file, or a given one, restored into a throwaway container and checked). The worker
 * claims, leases, logs and settles them like every deployment (deployments/worker.ts); what is
 * theirs is here: the runner, which leaves the database's own status alone, and the settle,
 * which records a databaseBackup event (backup and verify runs) instead of appDeploy.
 * A run whose control plane died is taken over by another copy (or the same at its next start):
 * its agent job is followed to its end and its outcome recorded (takeOverBackupRun); only a job
 * the agent no longer knows fails it, never run again (a dump half-uploaded is not resumed; the
 * next scheduled run makes a new one).
 */

import type {
  AwaitJobResult,
  BackupDatabaseResult,
  DatabaseAccess,
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
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import type { DeploymentResult } from "../deployments/repository.ts";
import type { DeploymentKind } from "../deployments/start.ts";
import { type DeploymentTarget, loadDeploymentTarget } from "../deployments/targets.ts";
import { recordBackupEvent } from "../notifications/backup-events.ts";
import { agentServerId } from "../servers/repository.ts";
import { findBackupWithOrganization, objectKeyOf, ownFilesOf } from "./backups.ts";
import { findDestination, storageOf } from "./destinations.ts";
import {
  abortLeftUploads,
  applyRetention,
  awaitTakenOverJob,
  deleteUnconfirmedFile,
  failInterrupted,
  followRunJob,
  listOwnFiles,
  queueRun,
  reasonOf,
  recordFile,
  runLog,
  settleTakenOver,
  type TakenOverJob,
  uploadRecorded,
} from "./run-steps.ts";

export const BACKUP_RUN_KINDS: readonly DeploymentKind[] = ["backup", "restore", "verify"];
export const isBackupRunKind = (kind: string) => (BACKUP_RUN_KINDS as readonly string[]).includes(kind);

/** How long a control plane failing an interrupted backup run waits for its cancelled upload. */
const CANCELLED_UPLOAD_WAIT_MS = 8000;

/** A dump or restore may take this long on the agent (the watchdog fails a job that went away). */
const JOB_TIMEOUT_MS = 6 * 60 * 60_000;

type OwnedDatabase = DatabaseService & { organizationId: string };

/** Queues a backup run (backup or verify) of `backup`; answers at once. */
export async function startBackupRun(
  ctx: ServiceContext,
  backup: Backup,
  kind: "backup" | "verify",
  options: { title?: string; backupFile?: string; skipped?: string } = {},
): Promise<{ deploymentId: string }> {
  if (!backup.databaseId) throw new Error("A web-server backup runs through startWebServerBackupRun");
  const databaseId = backup.databaseId;
  const database = await findDatabaseWithOrganization(ctx.db, databaseId);
  if (!database) throw new Error("The database of the backup no longer exists");
  return queueRun(
    ctx,
    {
      target: { kind: "database", id: databaseId },
      kind,
      title: options.title ?? (kind === "backup" ? "Manual backup" : "Restore verification"),
      description: null,
      serverId: database.serverId,
      backupRun: {
        backupId: backup.backupId,
        backupDestinationId: backup.destinationId,
        backupFile: options.backupFile ?? null,
      },
    },
    options.skipped,
  );
}

/** Queues a restore of `backupFile` from the destination into the database `databaseName`. */
export async function startRestoreRun(
  ctx: ServiceContext,
  database: OwnedDatabase,
  input: { destinationId: string; backupFile: string; databaseName: string },
): Promise<{ deploymentId: string }> {
  await agentServerId(ctx, database.organizationId, database.serverId);
  return queueRun(ctx, {
    target: { kind: "database", id: database.databaseId },
    kind: "restore",
    title: `Restore ${input.backupFile.split("/").pop()}`.slice(0, 200),
    description: null,
    serverId: database.serverId,
    backupRun: {
      backupDestinationId: input.destinationId,
      backupFile: input.backupFile,
      backupDatabaseName: input.databaseName,
    },
  });
}

/**
 * A backup, restore or verify run a stopped control plane left running fails (its upload was
 * never completed, so no object looks complete): its agent job is cancelled where it still
 * runs, the file a backup run was writing is deleted if the agent still completed it (nothing
 * confirmed it) once the agent says the job has ended (its upload's requests settled, issue 40
 * item 6a: nothing lands after the delete), and its end is stored with its databaseBackup event.
 * An agent that does not answer leaves the object alone (the next run's retention counts it).
 * It is not run again; the next scheduled run makes a new file.
 */
export async function failInterruptedBackupRun(
  ctx: ServiceContext,
  row: {
    deploymentId: string;
    databaseId: string;
    kind: DeploymentKind;
    title: string;
    serverId: string | null;
  },
): Promise<void> {
  const serverId = row.serverId ?? LOCAL_SERVER_ID;
  let uploadEnded = false;
  for (const step of ["backup", "restore", "verify"]) {
    // The backup's upload is waited for: a delete before its last request could be undone by it.
    const waitMs = step === "backup" && row.kind === "backup" ? CANCELLED_UPLOAD_WAIT_MS : 0;
    const answer = await ctx.agents.client
      .cancelJob(serverId, `${row.deploymentId}-${step}`, 2000 + waitMs, waitMs)
      .catch(() => undefined);
    if (step === "backup") uploadEnded = answer?.ended ?? false;
  }
  const target = await loadDeploymentTarget(ctx, {
    targetKind: "database",
    targetId: row.databaseId,
    kind: row.kind,
  });
  if (row.kind === "backup" && uploadEnded) {
    await deleteUnconfirmedFile(ctx, row.deploymentId, target?.organizationId);
  }
  await failInterrupted(ctx, row, target);
}

/** How the dump and restore tools reach the database (root for the MySQL family). */
function accessOf(row: OwnedDatabase, opened: OpenedDatabase, databaseName: string): DatabaseAccess {
  const rootish = row.kind === "mysql" || row.kind === "mariadb";
  return {
    kind: row.kind,
    // redis's snapshot and libsql's archive hold every database.
    databaseName:
      row.kind === "redis" || row.kind === "libsql" ? "" : databaseName || (opened.databaseName ?? ""),
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

export async function settleBackupRun(
  db: Db,
  target: DeploymentTarget,
  deployment: { deploymentId: string; title: string; kind: DeploymentKind },
  result: DeploymentResult,
  now: Date,
): Promise<void> {
  if (deployment.kind === "restore") return;
  const row = await db
    .selectFrom("backupRuns")
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
export async function runBackupRun(ctx: ServiceContext, run: DeploymentRun): Promise<DeploymentOutcome> {
  const { secrets, log, failure } = runLog(run);
  try {
    const { deployment, backup, context } = await openRun(ctx, run, secrets, log);
    const { database, opened, serverId, storage } = context;
    if (deployment.kind === "backup" && backup) {
      const key = objectKeyOf({ ...backup, databaseType: database.kind }, ctx.now());
      const access = accessOf(database, opened, backup.database);
      log(
        `Backing up ${database.kind} ${access.databaseName || database.appName} to ${context.destinationName} as ${key}`,
      );
      await abortLeftUploads(storage, ownFilesOf({ ...backup, databaseType: database.kind }), log);
      const result = await uploadRecorded(ctx.db, run.deploymentId, key, () =>
        followRunJob<BackupDatabaseResult>(context, "backup", (jobId) =>
          ctx.agents.client.backupDatabase(serverId, transferOf(context, access, key, jobId), JOB_TIMEOUT_MS),
        ),
      );
      await finishBackup(context, backup, key, result.sizeBytes);
      return { imageName: key };
    }
    if (deployment.kind === "restore") {
      const key = deployment.backupFile ?? "";
      const access = accessOf(database, opened, deployment.backupDatabaseName ?? "");
      const result = await followRunJob<RestoreDatabaseResult>(context, "restore", (jobId) =>
        ctx.agents.client.restoreDatabase(serverId, transferOf(context, access, key, jobId), JOB_TIMEOUT_MS),
      );
      await recordFile(ctx.db, run.deploymentId, key, result.sizeBytes);
      log(`Restored ${key} into ${access.databaseName || database.appName}`);
      return { imageName: key };
    }
    if (!backup) throw new Error("The backup no longer exists");
    const key = deployment.backupFile ?? (await newestFile(context, backup));
    await verify(context, backup, key);
    return { imageName: key };
  } catch (error) {
    throw failure(error);
  }
}

/** The run's row, its database, backup and destination, and the agent's server it runs on. */
async function openRun(
  ctx: ServiceContext,
  run: DeploymentRun,
  secrets: string[],
  log: (line: string) => void,
) {
  const deployment = await ctx.db
    .selectFrom("deployments")
    .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
    .select([
      "kind",
      "backupId",
      "backupDestinationId",
      "backupFile",
      "backupSizeBytes",
      "backupDatabaseName",
    ])
    .where("deployments.deploymentId", "=", run.deploymentId)
    .executeTakeFirstOrThrow();
  const database = await findDatabaseWithOrganization(ctx.db, run.target.id);
  if (!database) throw new Error("The database service no longer exists");
  const serverId = await agentServerId(ctx, database.organizationId, database.serverId);
  const opened = openDatabase(ctx.secrets, database);
  secrets.push(
    opened.databasePassword,
    ...(opened.databaseRootPassword ? [opened.databaseRootPassword] : []),
  );
  const backup = deployment.backupId
    ? await findBackupWithOrganization(ctx.db, deployment.backupId)
    : undefined;
  if (deployment.kind !== "restore" && !backup) throw new Error("The backup no longer exists");
  const destinationId = deployment.backupDestinationId ?? backup?.destinationId;
  const destination = destinationId
    ? await findDestination(ctx.db, database.organizationId, destinationId)
    : undefined;
  if (!destination) throw new Error("The destination no longer exists");
  const storage = await storageOf(ctx, destination);
  secrets.push(storage.secretAccessKey);
  const context: RunContext = {
    ctx,
    run,
    log,
    serverId,
    database,
    opened,
    storage,
    destinationName: destination.name,
  };
  return { deployment, backup, context };
}

/** What follows a stored backup file: the log line, retention, and the verification it asks for. */
async function finishBackup(
  context: RunContext,
  backup: Backup,
  key: string,
  sizeBytes: number | string,
  verifyJob?: TakenOverJob,
): Promise<void> {
  const { log, storage, database } = context;
  log(`Backup stored: ${key} (${sizeBytes} bytes)`);
  const files = ownFilesOf({ ...backup, databaseType: database.kind });
  await applyRetention(storage, files, backup.keepLatestCount, key, log);
  if (backup.verifyRestore) await verify(context, backup, key, verifyJob);
}

/**
 * Finishes a backup, restore or verify run whose control plane died, from its agent job: the
 * agent goes on with a job whose reply went nowhere, and keeps its outcome for a while
 * (awaitJob). The job is waited for to its end and its outcome recorded on the run exactly as
 * the dead copy would have (the file and its size, retention, the verification, the event and
 * notification). Only a job the agent does not know (it restarted, its outcome expired, or it
 * does not answer) fails the run as before (failInterruptedBackupRun): never run twice.
 * `stop` (this control plane closing) leaves the run running for the next copy.
 */
export async function takeOverBackupRun(
  ctx: ServiceContext,
  row: {
    deploymentId: string;
    databaseId: string;
    kind: DeploymentKind;
    title: string;
    serverId: string | null;
  },
  stop: AbortSignal,
): Promise<void> {
  const serverId = row.serverId ?? LOCAL_SERVER_ID;
  const job = await awaitTakenOverJob(ctx, serverId, `${row.deploymentId}-${row.kind}`, stop);
  if (job.state === "stopped") return;
  const recorded = await ctx.db
    .selectFrom("backupRuns")
    .select(["backupFile", "backupSizeBytes"])
    .where("deploymentId", "=", row.deploymentId)
    .executeTakeFirst();
  // A backup whose upload the dead copy recorded only has its later steps left to do.
  const uploaded = row.kind === "backup" && !!recorded?.backupFile && recorded.backupSizeBytes !== null;
  if (job.state === "unknown" && !uploaded) return failInterruptedBackupRun(ctx, row);
  const lines: string[] = [];
  const run: DeploymentRun = {
    deploymentId: row.deploymentId,
    target: { kind: "database", id: row.databaseId },
    kind: row.kind,
    log: (line) => lines.push(line),
    signal: stop,
  };
  const { secrets, log, failure } = runLog(run);
  log(
    job.state === "ended"
      ? `The control plane running this ${row.kind} stopped; another one took it over: its agent job ended`
      : `The control plane running this ${row.kind} stopped after its upload; another one took it over`,
  );
  let result: DeploymentResult;
  try {
    const { deployment, backup, context } = await openRun(ctx, run, secrets, log);
    const outcome = job.state === "ended" ? job.outcome : undefined;
    if (row.kind === "backup") {
      if (!backup || !deployment.backupFile) throw new Error("The run names no file it was uploading");
      const key = deployment.backupFile;
      let size = deployment.backupSizeBytes ?? "0";
      if (outcome) {
        try {
          size = String(endedResult(outcome, "backupDatabase").sizeBytes);
        } catch (error) {
          if (!uploaded) await deleteUnconfirmedFile(ctx, row.deploymentId, context.database.organizationId);
          throw error;
        }
        await recordFile(ctx.db, row.deploymentId, key, Number(size));
      }
      const verifyJob = backup.verifyRestore
        ? await awaitTakenOverJob(ctx, serverId, `${row.deploymentId}-verify`, stop)
        : undefined;
      if (verifyJob?.state === "stopped") return;
      await finishBackup(context, backup, key, size, verifyJob);
      result = { status: "done", imageName: key };
    } else if (row.kind === "restore" && outcome) {
      const key = deployment.backupFile ?? "";
      await recordFile(ctx.db, row.deploymentId, key, endedResult(outcome, "restoreDatabase").sizeBytes);
      log(`Restored ${key}`);
      result = { status: "done", imageName: key };
    } else {
      if (!backup) throw new Error("The backup no longer exists");
      const key = deployment.backupFile ?? (await newestFile(context, backup));
      await verify(context, backup, key, job);
      result = { status: "done", imageName: key };
    }
  } catch (error) {
    if (stop.aborted) return;
    result = { status: "error", errorMessage: failure(error).message };
  }
  const target = await loadDeploymentTarget(ctx, {
    targetKind: "database",
    targetId: row.databaseId,
    kind: row.kind,
  });
  await settleTakenOver(ctx, row, target, result, lines);
}

/** The result an ended job answered, or its error thrown (masked by the agent already). */
function endedResult<K extends "backupDatabase" | "restoreDatabase">(
  outcome: AwaitJobResult,
  member: K,
): NonNullable<AwaitJobResult[K]> {
  if (outcome.error) throw new Error(outcome.error.message);
  const value = outcome[member];
  if (!value) throw new Error(`The agent's answer holds no ${member} result`);
  return value as NonNullable<AwaitJobResult[K]>;
}

interface RunContext {
  ctx: ServiceContext;
  run: DeploymentRun;
  log: (line: string) => void;
  serverId: string;
  database: OwnedDatabase;
  opened: OpenedDatabase;
  storage: Awaited<ReturnType<typeof storageOf>>;
  destinationName: string;
}

const owner = (database: OwnedDatabase) => ({
  organizationId: database.organizationId,
  resource: `database:${database.databaseId}`,
});

/** What the agent's backup and restore commands share: the job, the database service, the object. */
function transferOf(context: RunContext, access: ReturnType<typeof accessOf>, key: string, jobId: string) {
  const { database, storage } = context;
  return {
    jobId,
    logStreamId: jobId,
    serviceName: database.appName,
    owner: owner(database),
    database: access,
    storage,
    key,
  };
}

async function newestFile(context: RunContext, backup: Backup): Promise<string> {
  const files = await listOwnFiles(
    context.storage,
    ownFilesOf({ ...backup, databaseType: context.database.kind }),
  );
  const newest = files.at(-1);
  if (!newest) throw new Error("The backup has no file to verify yet");
  return newest.key;
}

/**
 * Restores `key` into a throwaway container of the database's image and stores the check; with
 * `taken` (a run taken over from a control plane that died) an ended verify job's outcome is
 * recorded instead of running it again.
 */
async function verify(context: RunContext, backup: Backup, key: string, taken?: TakenOverJob): Promise<void> {
  const { ctx, run, serverId, database, opened, log } = context;
  const spec = buildDatabaseSpec(database, opened, ctx.config.defaultDatabaseImages);
  const access = accessOf(database, opened, backup.database);
  if (taken?.state !== "ended")
    log(`Verifying ${key}: restoring it into a throwaway ${spec.image} container`);
  try {
    const result =
      taken?.state === "ended"
        ? endedResult(taken.outcome, "restoreDatabase")
        : await followRunJob<RestoreDatabaseResult>(context, "verify", (jobId) =>
            ctx.agents.client.restoreDatabase(
              serverId,
              {
                ...transferOf(context, access, key, jobId),
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
    await ctx.db
      .updateTable("backupRuns")
      .set({ backupFile: key, backupCheck: result.check })
      .where("deploymentId", "=", run.deploymentId)
      .execute();
    log(`Restore verified: ${result.check}`);
  } catch (error) {
    const reason = reasonOf(error, run.signal);
    await ctx.db
      .updateTable("backupRuns")
      .set({ backupFile: key, backupCheck: `failed: ${reason}`.slice(0, 1000) })
      .where("deploymentId", "=", run.deploymentId)
      .execute();
    throw new Error(`The restore verification of ${key} failed: ${reason}`);
  }
}
