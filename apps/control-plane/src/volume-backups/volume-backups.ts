/**
 * Volume backups (Dokploy's volume_backup row, issue 32): a named volume of an application, a
 * database service or a compose stack, archived to a destination on a croner schedule (the
 * backups' schedule, backups/schedule.ts) and by hand, with retention (keepLatestCount) and,
 * with turnOff, the service scaled to 0 only while the volume is read (the agent's
 * backupVolume). Runs are deployments of the service of kind volumeBackup or volumeRestore,
 * claimed, leased, logged and settled by the worker like every deployment; their settle leaves
 * the service's status alone and records a volumeBackup event with the outcome. A backup run
 * the control plane left running fails at its next start (never run again); a backup run whose
 * agent was killed fails when the agent no longer knows its job (followAgentJob). A restore
 * writes the same archive into the same volume whenever it runs: left running by a stopped
 * control plane, it runs again once its agent job ended; lost by a restarted agent, it is sent
 * again (the agent writes a volume only from a whole archive, backup/volume.ts).
 *
 * Whose volume: the name must be the service's own (one of its volume mounts, a database's data
 * volume, or a compose stack's `<appName>_<name>` volume) and the agent refuses a volume whose
 * ownership labels name anyone else; a restore may also write into a new volume whose name no
 * other service uses (mounts/mounts.ts checkVolumeName), which the agent creates with the
 * service's labels.
 */

import type { ResourceOwner } from "@platform/agent-protocol";
import { applicationOwner, composeOwner, databaseOwner } from "@platform/ownership";
import { z } from "zod";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { keepLatestCountSchema, prefixSchema, scheduleSchema } from "../backups/backups.ts";
import { destinationSchema, findDestination, idSchema, storageOf } from "../backups/destinations.ts";
import {
  abortLeftUploads,
  applyRetention,
  awaitTakenOverJob,
  deleteUnconfirmedFile,
  failInterrupted,
  followRunJob,
  type OwnFiles,
  queueRun,
  recordFile,
  runLog,
  settleTakenOver,
  uploadRecorded,
} from "../backups/run-steps.ts";
import type { ServiceContext } from "../context.ts";
import { dataVolumeOf } from "../databases/kinds.ts";
import type { Db } from "../db/database.ts";
import { ownedBy, withOwner } from "../db/owned.ts";
import type { VolumeBackup, VolumeBackupServiceType } from "../db/schema.ts";
import { maskSecrets } from "../deployments/deploy-service.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import type { DeploymentResult, DeploymentTargetRef } from "../deployments/repository.ts";
import type { DeploymentKind } from "../deployments/start.ts";
import { type DeploymentTarget, loadDeploymentTarget } from "../deployments/targets.ts";
import { displayNameSchema } from "../display-name.ts";
import { badRequest } from "../errors.ts";
import { recordBackupEvent } from "../notifications/backup-events.ts";
import { agentServerId } from "../servers/repository.ts";

export const VOLUME_RUN_KINDS: readonly DeploymentKind[] = ["volumeBackup", "volumeRestore"];
export const isVolumeRunKind = (kind: string) => (VOLUME_RUN_KINDS as readonly string[]).includes(kind);

export const volumeServiceTypes = [
  "application",
  "postgres",
  "mysql",
  "mariadb",
  "mongo",
  "redis",
  "compose",
] as const satisfies readonly VolumeBackupServiceType[];
export const serviceIdKeys = [
  "applicationId",
  "postgresId",
  "mysqlId",
  "mariadbId",
  "mongoId",
  "redisId",
  "composeId",
] as const;
export type ServiceIdKey = (typeof serviceIdKeys)[number];
export const typeOfIdKey = (key: ServiceIdKey) => key.slice(0, -2) as VolumeBackupServiceType;

/** An archive (or restore) may take this long on the agent. */
const JOB_TIMEOUT_MS = 6 * 60 * 60_000;

/** A Docker volume name as the mounts take it. */
export const volumeNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(
    /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/,
    "must start with a letter or digit and hold only letters, digits, '.', '-' and '_'",
  );

const serviceIdFields = Object.fromEntries(serviceIdKeys.map((key) => [key, idSchema.nullish()])) as Record<
  ServiceIdKey,
  z.ZodOptional<z.ZodNullable<typeof idSchema>>
>;

export const createVolumeBackupInput = z.object({
  name: displayNameSchema,
  volumeName: volumeNameSchema,
  prefix: prefixSchema,
  serviceName: z.string().max(100).nullish(),
  turnOff: z.boolean().optional(),
  cronExpression: scheduleSchema,
  keepLatestCount: keepLatestCountSchema.nullish(),
  enabled: z.boolean().nullish(),
  ...serviceIdFields,
  /** Dokploy's: the named service's kind; it must be the kind of the id given (400 naming it). */
  serviceType: z.enum(volumeServiceTypes).optional(),
  destinationId: idSchema,
});

export const updateVolumeBackupInput = z.object({
  volumeBackupId: idSchema,
  name: displayNameSchema.optional(),
  volumeName: volumeNameSchema.optional(),
  prefix: prefixSchema.optional(),
  serviceName: z.string().max(100).nullish(),
  turnOff: z.boolean().optional(),
  cronExpression: scheduleSchema.optional(),
  keepLatestCount: keepLatestCountSchema.nullish(),
  enabled: z.boolean().nullish(),
  ...serviceIdFields,
  serviceType: z.enum(volumeServiceTypes).optional(),
  destinationId: idSchema.optional(),
});

const runSchema = z.object({
  deploymentId: z.string(),
  kind: z.enum(["volumeBackup", "volumeRestore"]),
  status: z.enum(["idle", "running", "done", "error"]),
  backupFile: z.string().nullable(),
  sizeBytes: z.number().nullable(),
  errorMessage: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const volumeBackupSchema = z.object({
  volumeBackupId: z.string(),
  name: z.string(),
  volumeName: z.string(),
  prefix: z.string(),
  appName: z.string(),
  serviceName: z.string().nullable(),
  turnOff: z.boolean(),
  cronExpression: z.string(),
  keepLatestCount: z.number().nullable(),
  enabled: z.boolean(),
  serviceType: z.enum(volumeServiceTypes),
  applicationId: z.string().nullable(),
  postgresId: z.string().nullable(),
  mysqlId: z.string().nullable(),
  mariadbId: z.string().nullable(),
  mongoId: z.string().nullable(),
  redisId: z.string().nullable(),
  libsqlId: z.null(),
  composeId: z.string().nullable(),
  destinationId: z.string(),
  createdAt: z.string(),
  destination: destinationSchema,
  /** The newest run (backup or restore) of this volume backup. */
  lastRun: runSchema.nullable(),
});

/** The service a volume backup (or a restore) belongs to, whatever the caller. */
export interface VolumeService {
  type: VolumeBackupServiceType;
  targetKind: DeploymentTargetRef["kind"];
  serviceId: string;
  organizationId: string;
  serverId: string | null;
  appName: string;
  name: string;
  environmentId: string;
  projectId: string;
}

/** The service of `type` and `id` in `organizationId`; undefined when it is not there. */
export async function locateService(
  db: Db,
  organizationId: string,
  type: VolumeBackupServiceType,
  id: string,
): Promise<VolumeService | undefined> {
  const located =
    type === "application"
      ? await ownedBy(db.selectFrom("applications"), "applications.environmentId", organizationId)
          .select([
            "applications.applicationId as serviceId",
            "applications.serverId",
            "applications.appName",
            "applications.name",
            "environments.environmentId",
            "projects.projectId",
          ])
          .where("applications.applicationId", "=", id)
          .executeTakeFirst()
      : type === "compose"
        ? await ownedBy(db.selectFrom("compose"), "compose.environmentId", organizationId)
            .select([
              "compose.composeId as serviceId",
              "compose.serverId",
              "compose.appName",
              "compose.name",
              "environments.environmentId",
              "projects.projectId",
            ])
            .where("compose.composeId", "=", id)
            .executeTakeFirst()
        : await ownedBy(db.selectFrom("databaseServices"), "databaseServices.environmentId", organizationId)
            .select([
              "databaseServices.databaseId as serviceId",
              "databaseServices.serverId",
              "databaseServices.appName",
              "databaseServices.name",
              "environments.environmentId",
              "projects.projectId",
            ])
            .where("databaseServices.kind", "=", type)
            .where("databaseServices.databaseId", "=", id)
            .executeTakeFirst();
  if (!located) return undefined;
  return {
    ...located,
    type,
    targetKind: type === "application" || type === "compose" ? type : "database",
    organizationId,
  };
}

export function ownerOf(service: VolumeService): ResourceOwner {
  if (service.type === "application") return applicationOwner(service.organizationId, service.serviceId);
  if (service.type === "compose") return composeOwner(service.organizationId, service.serviceId);
  return databaseOwner(service.organizationId, service.serviceId);
}

/**
 * 400 naming `field` unless `volumeName` is one of the service's own volumes: a volume mount of
 * it, a database's data volume, or a compose stack's `<appName>_<name>` volume.
 */
export async function requireOwnVolume(
  db: Db,
  service: VolumeService,
  volumeName: string,
  field = "volumeName",
): Promise<void> {
  if (service.targetKind === "database" && volumeName === dataVolumeOf(service.appName)) return;
  if (service.type === "compose" && volumeName.startsWith(`${service.appName}_`)) return;
  const column =
    service.targetKind === "application"
      ? "applicationId"
      : service.targetKind === "compose"
        ? "composeId"
        : "databaseId";
  const mount = await db
    .selectFrom("mounts")
    .select("mountId")
    .where(column, "=", service.serviceId)
    .where("type", "=", "volume")
    .where("volumeName", "=", volumeName)
    .executeTakeFirst();
  if (!mount) {
    throw badRequest(
      `Invalid input: ${field}: is not a volume of this service (its volume mounts${
        service.targetKind === "database" ? ", its data volume" : ""
      }${service.type === "compose" ? `, or ${service.appName}_<name>` : ""})`,
      { fields: [field] },
    );
  }
}

export function serviceIdOf(row: VolumeBackup): string {
  return row.applicationId ?? row.databaseId ?? row.composeId ?? "";
}

/** `<prefix>/<volumeName>-<UTC time>.tar.gz`: keys of one volume sort by time. */
export function volumeObjectKey(row: Pick<VolumeBackup, "prefix" | "volumeName">, now: Date): string {
  const files = volumeFilesOf(row);
  return `${files.prefix}${now.toISOString().replace(/:/g, "-")}${files.extension}`;
}

/** The volume backup's own files (its prefix and volume's name, .tar.gz): retention touches only those. */
function volumeFilesOf(row: Pick<VolumeBackup, "prefix" | "volumeName">): OwnFiles {
  return { prefix: `${row.prefix}/${row.volumeName}-`, extension: ".tar.gz" };
}

/** The newest run of a volume backup. */
export async function lastVolumeRun(db: Db, volumeBackupId: string) {
  const row = await db
    .selectFrom("deployments")
    .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
    .select([
      "deployments.deploymentId",
      "kind",
      "status",
      "backupFile",
      "backupSizeBytes",
      "errorMessage",
      "createdAt",
      "completedAt",
    ])
    .where("backupRuns.volumeBackupId", "=", volumeBackupId)
    .orderBy("createdAt", "desc")
    .orderBy("deployments.deploymentId", "desc")
    .executeTakeFirst();
  if (!row) return null;
  return {
    deploymentId: row.deploymentId,
    kind: row.kind as "volumeBackup" | "volumeRestore",
    status: row.status,
    backupFile: row.backupFile,
    sizeBytes: row.backupSizeBytes === null ? null : Number(row.backupSizeBytes),
    errorMessage: row.errorMessage,
    createdAt: row.createdAt,
    finishedAt: row.completedAt,
  };
}

/** Queues a volumeBackup run of `row`; answers at once. */
export async function startVolumeBackupRun(
  ctx: ServiceContext,
  row: VolumeBackup,
  title = "Manual volume backup",
  /** Ticks due while no control plane ran: the run is recorded, ended with this reason. */
  skipped?: string,
): Promise<{ deploymentId: string }> {
  const service = await locateService(ctx.db, row.organizationId, row.serviceType, serviceIdOf(row));
  if (!service) throw new Error("The service of the volume backup no longer exists");
  return queueRun(
    ctx,
    {
      target: { kind: service.targetKind, id: service.serviceId },
      kind: "volumeBackup",
      title,
      description: null,
      serverId: service.serverId,
      backupRun: {
        volumeBackupId: row.volumeBackupId,
        backupDestinationId: row.destinationId,
        backupVolumeName: row.volumeName,
      },
    },
    skipped,
  );
}

/** Queues a volumeRestore run: `backupFile` of the destination into `volumeName` of the service. */
export async function startVolumeRestoreRun(
  ctx: ServiceContext,
  service: VolumeService,
  input: { destinationId: string; backupFile: string; volumeName: string },
): Promise<{ deploymentId: string }> {
  await agentServerId(ctx, service.organizationId, service.serverId);
  return queueRun(ctx, {
    target: { kind: service.targetKind, id: service.serviceId },
    kind: "volumeRestore",
    title: `Restore ${input.backupFile.split("/").pop()} into ${input.volumeName}`.slice(0, 200),
    description: null,
    serverId: service.serverId,
    backupRun: {
      backupDestinationId: input.destinationId,
      backupFile: input.backupFile,
      backupVolumeName: input.volumeName,
    },
  });
}

/** A service's target's view of a volume run: its status stays, the event is volumeBackup. */
export function volumeRunTarget(base: DeploymentTarget, kind: DeploymentKind): DeploymentTarget {
  return {
    ...base,
    run: runVolumeRun,
    setStatus: async () => {},
    settle: async (db, deployment, result, now) => {
      const row = await db
        .selectFrom("backupRuns")
        .select(["volumeBackupId", "backupFile", "backupVolumeName"])
        .where("deploymentId", "=", deployment.deploymentId)
        .executeTakeFirst();
      const ok = result.status === "done";
      const what = kind === "volumeRestore" ? "volume restore" : "volume backup";
      await recordBackupEvent(
        db,
        {
          kind: "volumeBackup",
          organizationId: base.organizationId,
          serviceName: base.name,
          eventService: base.eventService,
          ok,
          message: ok
            ? `${deployment.title}: ${what} of ${row?.backupVolumeName ?? ""} done`
            : `${deployment.title}: ${what} of ${row?.backupVolumeName ?? ""} failed: ${result.errorMessage}`,
          details: {
            volumeBackupId: row?.volumeBackupId ?? "",
            volumeName: row?.backupVolumeName ?? "",
            backupFile: row?.backupFile ?? "",
            deploymentId: deployment.deploymentId,
            runKind: kind,
          },
        },
        now,
      );
    },
  };
}

/** Cancels the agent job of a volume run where it still runs (a restore's write is not cut). */
export async function cancelVolumeJob(
  ctx: ServiceContext,
  row: { deploymentId: string; serverId: string | null },
  waitMs = 0,
): Promise<{ ended: boolean }> {
  const serverId = row.serverId ?? LOCAL_SERVER_ID;
  const answer = await ctx.agents.client
    .cancelJob(serverId, `${row.deploymentId}-volume`, 2000 + waitMs, waitMs)
    .catch(() => undefined);
  return { ended: answer?.ended ?? false };
}

/** How long a restarted control plane waits for a cancelled upload to settle (its last requests). */
const CANCELLED_UPLOAD_WAIT_MS = 8000;

/**
 * A volume backup run a stopped control plane left running fails (never run again): its agent job is
 * cancelled where it still runs (the agent scales a stopped service back as the job ends), the
 * object a backup run was writing is deleted once the agent says the job has ended (its upload's
 * requests settled: nothing lands after the delete), and its end is stored with its volumeBackup
 * event. An agent that does not answer leaves the object alone (a delete could come before a
 * completion still in flight): the next run's retention counts it like any other file.
 */
export async function failInterruptedVolumeRun(
  ctx: ServiceContext,
  row: {
    deploymentId: string;
    targetKind: DeploymentTargetRef["kind"];
    targetId: string;
    kind: DeploymentKind;
    title: string;
    serverId: string | null;
  },
): Promise<void> {
  const { ended } = await cancelVolumeJob(
    ctx,
    row,
    row.kind === "volumeBackup" ? CANCELLED_UPLOAD_WAIT_MS : 0,
  );
  const target = await loadDeploymentTarget(ctx, row);
  if (row.kind === "volumeBackup" && ended) {
    await deleteUnconfirmedFile(ctx, row.deploymentId, target?.organizationId);
  }
  await failInterrupted(ctx, row, target);
}

/**
 * Finishes a volume backup run whose control plane died, from its agent job (which goes on; the
 * agent keeps its outcome for a while, awaitJob): waited for to its end, its file and size
 * recorded, retention applied, and the run settled with its volumeBackup event, as the dead copy
 * would have. A job the agent does not know (it restarted, or does not answer) fails the run as
 * before (failInterruptedVolumeRun). `stop` (this control plane closing) leaves it running.
 */
export async function takeOverVolumeRun(
  ctx: ServiceContext,
  row: {
    deploymentId: string;
    targetKind: DeploymentTargetRef["kind"];
    targetId: string;
    kind: DeploymentKind;
    title: string;
    serverId: string | null;
  },
  stop: AbortSignal,
): Promise<void> {
  const serverId = row.serverId ?? LOCAL_SERVER_ID;
  const job = await awaitTakenOverJob(ctx, serverId, `${row.deploymentId}-volume`, stop);
  if (job.state === "stopped") return;
  const recorded = await ctx.db
    .selectFrom("backupRuns")
    .select(["volumeBackupId", "backupDestinationId", "backupFile", "backupSizeBytes", "backupVolumeName"])
    .where("deploymentId", "=", row.deploymentId)
    .executeTakeFirst();
  const uploaded = !!recorded?.backupFile && recorded.backupSizeBytes !== null;
  if (job.state === "unknown" && !uploaded) return failInterruptedVolumeRun(ctx, row);
  const target = await loadDeploymentTarget(ctx, row);
  const lines: string[] = [
    "The control plane running this volume backup stopped; another one took it over: its agent job ended",
  ];
  let result: DeploymentResult;
  try {
    const key = recorded?.backupFile;
    if (!key) throw new Error("The run names no file it was uploading");
    if (job.state === "ended") {
      const outcome = job.outcome;
      if (outcome.error || !outcome.backupVolume) {
        await deleteUnconfirmedFile(ctx, row.deploymentId, target?.organizationId);
        throw new Error(outcome.error?.message ?? "The agent's answer holds no volume backup result");
      }
      await recordFile(ctx.db, row.deploymentId, key, outcome.backupVolume.sizeBytes);
      lines.push(
        `Volume backup stored: ${key} (${outcome.backupVolume.sizeBytes} bytes, ${outcome.backupVolume.archiveBytes} bytes of archive)`,
      );
    }
    const backup = recorded.volumeBackupId
      ? await ctx.db
          .selectFrom("volumeBackups")
          .selectAll()
          .where("volumeBackupId", "=", recorded.volumeBackupId)
          .executeTakeFirst()
      : undefined;
    const destination =
      target && recorded.backupDestinationId
        ? await findDestination(ctx.db, target.organizationId, recorded.backupDestinationId)
        : undefined;
    if (backup && destination) {
      const storage = await storageOf(ctx, destination);
      await applyRetention(storage, volumeFilesOf(backup), backup.keepLatestCount, key, (line) =>
        lines.push(maskSecrets(line, [storage.secretAccessKey])),
      );
    }
    result = { status: "done", imageName: key };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    lines.push(`Error: ${reason}`);
    result = { status: "error", errorMessage: reason };
  }
  await settleTakenOver(ctx, row, target, result, lines);
}

/** Runs one volumeBackup or volumeRestore deployment; throws with the reason (already logged). */
export async function runVolumeRun(ctx: ServiceContext, run: DeploymentRun): Promise<DeploymentOutcome> {
  const { secrets, log, failure } = runLog(run);
  try {
    const deployment = await ctx.db
      .selectFrom("deployments")
      .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
      .select([
        "kind",
        "volumeBackupId",
        "backupDestinationId",
        "backupFile",
        "backupVolumeName",
        "targetKind",
      ])
      .where("deployments.deploymentId", "=", run.deploymentId)
      .executeTakeFirstOrThrow();
    const backup = deployment.volumeBackupId
      ? await ctx.db
          .selectFrom("volumeBackups")
          .selectAll()
          .where("volumeBackupId", "=", deployment.volumeBackupId)
          .executeTakeFirst()
      : undefined;
    if (deployment.kind === "volumeBackup" && !backup) throw new Error("The volume backup no longer exists");
    const organizationId = await organizationOfTarget(ctx.db, deployment.targetKind, run.target.id);
    const type = backup?.serviceType ?? (await serviceTypeOf(ctx.db, deployment.targetKind, run.target.id));
    const service = organizationId
      ? await locateService(ctx.db, organizationId, type, run.target.id)
      : undefined;
    if (!service) throw new Error("The service no longer exists");
    const serverId = await agentServerId(ctx, service.organizationId, service.serverId);
    const destination = deployment.backupDestinationId
      ? await findDestination(ctx.db, service.organizationId, deployment.backupDestinationId)
      : undefined;
    if (!destination) throw new Error("The destination no longer exists");
    const storage = await storageOf(ctx, destination);
    secrets.push(storage.secretAccessKey);
    const volumeName = deployment.backupVolumeName ?? "";
    const owner = ownerOf(service);
    const context = { ctx, run, serverId, log };

    if (deployment.kind === "volumeBackup" && backup) {
      // The volume must still be the service's (a mount may have been removed since).
      await requireOwnVolume(ctx.db, service, volumeName).catch(() => {
        throw new Error(`The volume ${volumeName} is no longer a volume of ${service.name}`);
      });
      const key = volumeObjectKey(backup, ctx.now());
      log(
        `Backing up the volume ${volumeName} to ${destination.name} as ${key}${backup.turnOff ? " (service stopped while the volume is read)" : ""}`,
      );
      const files = volumeFilesOf(backup);
      await abortLeftUploads(storage, files, log);
      const result = await uploadRecorded(ctx.db, run.deploymentId, key, () =>
        followRunJob(context, "volume", (jobId) =>
          ctx.agents.client.backupVolume(
            serverId,
            { jobId, logStreamId: jobId, volumeName, owner, storage, key, stopService: backup.turnOff },
            JOB_TIMEOUT_MS,
          ),
        ),
      );
      log(
        `Volume backup stored: ${key} (${result.sizeBytes} bytes, ${result.archiveBytes} bytes of archive)`,
      );
      await applyRetention(storage, files, backup.keepLatestCount, key, log);
      return { imageName: key };
    }
    const key = deployment.backupFile ?? "";
    log(`Restoring ${key} from ${destination.name} into the volume ${volumeName}`);
    // A restore writes the same archive whenever it runs: a restarted agent that lost it is sent it again.
    const result = await followRunJob(
      context,
      "volume",
      (jobId) =>
        ctx.agents.client.restoreVolume(
          serverId,
          { jobId, logStreamId: jobId, volumeName, owner, storage, key },
          JOB_TIMEOUT_MS,
        ),
      { resend: true, mayRunOn: true },
    );
    await recordFile(ctx.db, run.deploymentId, key, result.sizeBytes);
    log(`Restored ${key} into ${volumeName}${result.created ? " (created)" : ""}`);
    return { imageName: key };
  } catch (error) {
    throw failure(error);
  }
}

async function organizationOfTarget(db: Db, kind: DeploymentTargetRef["kind"], id: string) {
  const table = kind === "application" ? "applications" : kind === "compose" ? "compose" : "databaseServices";
  const column =
    kind === "application"
      ? "applications.applicationId"
      : kind === "compose"
        ? "compose.composeId"
        : "databaseServices.databaseId";
  const row = await withOwner(
    db.selectFrom(table as "applications"),
    `${table}.environmentId` as "applications.environmentId",
  )
    .select("projects.organizationId")
    .where(column as "applications.applicationId", "=", id)
    .executeTakeFirst();
  return row?.organizationId;
}

async function serviceTypeOf(
  db: Db,
  kind: DeploymentTargetRef["kind"],
  id: string,
): Promise<VolumeBackupServiceType> {
  if (kind === "application" || kind === "compose") return kind;
  // Volume runs are of applications, databases and compose stacks only.
  if (kind !== "database") throw new Error(`a ${kind} has no volume runs`);
  const row = await db
    .selectFrom("databaseServices")
    .select("kind")
    .where("databaseId", "=", id)
    .executeTakeFirstOrThrow();
  return row.kind as VolumeBackupServiceType;
}

/** A serviceType given with a volume backup must be its service's kind. */
export function checkServiceTypeClaim(claimed: string | undefined, actual: string): void {
  if (claimed !== undefined && claimed !== actual) {
    throw badRequest(`Invalid input: serviceType: the service named is a ${actual}`, {
      fields: ["serviceType"],
    });
  }
}
