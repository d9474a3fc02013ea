/**
 * Runs of a backup of a database inside a compose stack (backupType compose, Dokploy's
 * manualBackupCompose): deployments of the stack of kind `backup` that leave its status alone.
 * The dump runs on the stack's server, in a running container of the backup's stack service
 * (the agent finds it by the stack's labels and checks the stack's ownership labels on it), and
 * is uploaded, its retention applied and its databaseBackup event recorded as the database
 * services' backups are (backups/runs.ts). Restores and verified restores are the database
 * services' only. A run whose control plane died fails (its upload never completed).
 */
import type { BackupDatabaseResult } from "@platform/agent-protocol";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { convertedComposeOf, ownerOfCompose } from "../compose/deploy.ts";
import { findComposeWithOrganization, type LocatedCompose } from "../compose/repository.ts";
import type { ServiceContext } from "../context.ts";
import type { Backup } from "../db/schema.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import type { DeploymentKind } from "../deployments/start.ts";
import { type DeploymentTarget, loadDeploymentTarget } from "../deployments/targets.ts";
import { badRequest } from "../errors.ts";
import { agentServerId } from "../servers/repository.ts";
import { findBackupWithOrganization, objectKeyOf, ownFilesOf } from "./backups.ts";
import { composeAccess, credentialsContext } from "./compose-credentials.ts";
import { findDestination, storageOf } from "./destinations.ts";
import {
  abortLeftUploads,
  applyRetention,
  deleteUnconfirmedFile,
  failInterrupted,
  followRunJob,
  queueRun,
  runLog,
  uploadRecorded,
} from "./run-steps.ts";
import { settleBackupRun } from "./runs.ts";

const JOB_TIMEOUT_MS = 6 * 60 * 60_000;
const CANCELLED_UPLOAD_WAIT_MS = 8000;

export const isComposeBackupRunKind = (kind: string) => kind === "backup";

/** `serviceName` must be a service of the stack's file as deployed; 400 naming serviceName otherwise. */
export async function checkStackService(
  ctx: ServiceContext,
  stack: LocatedCompose,
  serviceName: string,
): Promise<void> {
  const services = stack.composeFile.trim() ? (await convertedComposeOf(ctx, stack)).services : [];
  if (!services.includes(serviceName)) {
    throw badRequest(
      `serviceName ${serviceName} is not a service of the stack's file (${services.join(", ") || "it has none"})`,
      { fields: ["serviceName"] },
    );
  }
}

/** Queues a backup run of a stack's database; answers at once. */
export async function startComposeBackupRun(
  ctx: ServiceContext,
  backup: Backup,
  options: { title?: string; skipped?: string } = {},
): Promise<{ deploymentId: string }> {
  if (!backup.composeId) throw new Error("The backup is not of a database inside a stack");
  const stack = await findComposeWithOrganization(ctx.db, backup.composeId);
  if (!stack) throw new Error("The stack of the backup no longer exists");
  return queueRun(
    ctx,
    {
      target: { kind: "compose", id: stack.composeId },
      kind: "backup",
      title: options.title ?? "Manual backup",
      description: null,
      serverId: stack.serverId,
      backupRun: {
        backupId: backup.backupId,
        backupDestinationId: backup.destinationId,
        backupFile: null,
      },
    },
    options.skipped,
  );
}

/** The stack target's view of a backup run: its status stays, the event is databaseBackup. */
export function composeBackupRunTarget(base: DeploymentTarget, kind: DeploymentKind): DeploymentTarget {
  return {
    ...base,
    run: runComposeBackupRun,
    setStatus: async () => {},
    settle: (db, deployment, result, now) => settleBackupRun(db, base, { ...deployment, kind }, result, now),
  };
}

async function runComposeBackupRun(ctx: ServiceContext, run: DeploymentRun): Promise<DeploymentOutcome> {
  const { secrets, log, failure } = runLog(run);
  try {
    const row = await ctx.db
      .selectFrom("backupRuns")
      .select(["backupId"])
      .where("deploymentId", "=", run.deploymentId)
      .executeTakeFirstOrThrow();
    const backup = row.backupId ? await findBackupWithOrganization(ctx.db, row.backupId) : undefined;
    if (!backup?.serviceName || backup.databaseType === "web-server") {
      throw new Error("The backup no longer exists");
    }
    const stack = await findComposeWithOrganization(ctx.db, run.target.id);
    if (!stack || stack.organizationId !== backup.organizationId) {
      throw new Error("The stack of the backup no longer exists");
    }
    const serverId = await agentServerId(ctx, stack.organizationId, stack.serverId);
    const destination = await findDestination(ctx.db, stack.organizationId, backup.destinationId);
    if (!destination) throw new Error("The destination no longer exists");
    const storage = await storageOf(ctx, destination);
    secrets.push(storage.secretAccessKey);
    const kind = backup.databaseType;
    const access = composeAccess(
      ctx.secrets,
      credentialsContext(backup),
      kind,
      backup.database,
      backup.metadata as Record<string, unknown> | null,
    );
    if (access.password) secrets.push(access.password);
    const key = objectKeyOf(backup, ctx.now());
    log(
      `Backing up ${kind} ${access.databaseName || ""} of service ${backup.serviceName} of stack ${stack.appName} to ${destination.name} as ${key}`,
    );
    const files = ownFilesOf(backup);
    await abortLeftUploads(storage, files, log);
    const context = { ctx, run, serverId, log };
    const result = await uploadRecorded(ctx.db, run.deploymentId, key, () =>
      followRunJob<BackupDatabaseResult>(context, "backup", (jobId) =>
        ctx.agents.client.backupDatabase(
          serverId,
          {
            jobId,
            logStreamId: jobId,
            serviceName: stack.appName,
            stackService: {
              appName: stack.appName,
              serviceName: backup.serviceName!,
              composeType: stack.composeType,
            },
            owner: ownerOfCompose(stack),
            database: access,
            storage,
            key,
          },
          JOB_TIMEOUT_MS,
        ),
      ),
    );
    log(`Backup stored: ${key} (${result.sizeBytes} bytes)`);
    await applyRetention(storage, files, backup.keepLatestCount, key, log);
    return { imageName: key };
  } catch (error) {
    throw failure(error);
  }
}

/** A stack backup run a stopped control plane left running fails, its agent job cancelled. */
export async function failInterruptedComposeBackupRun(
  ctx: ServiceContext,
  row: {
    deploymentId: string;
    targetId: string;
    kind: DeploymentKind;
    title: string;
    serverId: string | null;
  },
): Promise<void> {
  const serverId = row.serverId ?? LOCAL_SERVER_ID;
  const answer = await ctx.agents.client
    .cancelJob(
      serverId,
      `${row.deploymentId}-backup`,
      2000 + CANCELLED_UPLOAD_WAIT_MS,
      CANCELLED_UPLOAD_WAIT_MS,
    )
    .catch(() => undefined);
  const target = await loadDeploymentTarget(ctx, {
    targetKind: "compose",
    targetId: row.targetId,
    kind: row.kind,
  });
  if (answer?.ended) await deleteUnconfirmedFile(ctx, row.deploymentId, target?.organizationId);
  await failInterrupted(ctx, row, target);
}
