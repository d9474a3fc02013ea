/**
 * deployment (spec 4.2): deployment records, the queue's jobs, and stopping or removing a
 * deployment, of applications and database services alike. Deployments are read through their
 * service's organization (another organization's ids are a 404) and shown only to callers who
 * may see the service. The live log is GET /api/deployment.logs (deployment-access/log-stream.ts).
 */
import { z } from "zod";
import { serverBelongsTo } from "../applications/repository.ts";
import { idSchema } from "../applications/schemas.ts";
import { loadBackup } from "../backups/access.ts";
import { loadCallerCompose } from "../compose/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { type DatabaseKind, databaseKinds } from "../databases/kinds.ts";
import { findDatabase } from "../databases/repository.ts";
import { ownedService } from "../db/owned.ts";
import type { DeploymentStatus } from "../db/schema.ts";
import { loadCallerDeployment } from "../deployment-access/access.ts";
import {
  deleteDeployment,
  listDeployments,
  listNewestDeployments,
  listQueueJobs,
  listTargetDeployments,
  toDeploymentView,
} from "../deployments/repository.ts";
import { deploymentSchema } from "../deployments/schemas.ts";
import { stopDeployment } from "../deployments/stop.ts";
import { conflict, notFound } from "../errors.ts";
import { logTailSchema, runtimeLogsSchema, tailLines } from "../monitoring/runtime-logs.ts";
import { loadCallerPreview } from "../previews/previews.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import {
  grantsOf,
  onlyVisibleServices,
  requireApplicationAccess,
  requireCanDeleteServices,
  requireServiceAccess,
} from "../projects/permissions.ts";
import { loadSchedule } from "../schedules/schedules.ts";
import { loadVolumeBackup } from "../volume-backups/access.ts";

const centralizedSchema = deploymentSchema.extend({
  /** The application deployed; null for a database service's deployment. */
  application: z.object({ applicationId: z.string(), name: z.string(), appName: z.string() }).nullable(),
  /** The database service deployed; null for an application's deployment. */
  database: z
    .object({ databaseId: z.string(), type: z.enum(databaseKinds), name: z.string(), appName: z.string() })
    .nullable(),
  /** The compose stack deployed; null for the other kinds. */
  compose: z.object({ composeId: z.string(), name: z.string(), appName: z.string() }).nullable(),
});

const jobStates = { idle: "waiting", running: "active", done: "completed", error: "failed" } as const;

export const queueJobSchema = z.object({
  /** The deployment's id. */
  id: z.string(),
  /** deploy or redeploy. */
  name: z.enum([
    "deploy",
    "redeploy",
    "rebuild",
    "backup",
    "restore",
    "verify",
    "rollback",
    "schedule",
    "volumeBackup",
    "volumeRestore",
  ]),
  state: z.enum(["waiting", "active", "completed", "failed"]),
  queuedAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  failedReason: z.string().nullable(),
  deploymentId: z.string(),
  title: z.string(),
  /** application, compose, or the database service's kind. */
  serviceType: z.enum(["application", "compose", "schedule", "preview", ...databaseKinds]),
  /** Null for a database service's job. */
  applicationId: z.string().nullable(),
  /** Null for an application's job. */
  databaseId: z.string().nullable(),
  /** Set for a compose stack's job. */
  composeId: z.string().nullable(),
  /** The service's appName and name (application or database). */
  appName: z.string(),
  applicationName: z.string(),
  environmentId: z.string(),
  projectId: z.string(),
  serverId: z.string().nullable(),
});

/** Finished jobs queueList shows besides every waiting and active one. */
const QUEUE_FINISHED_LIMIT = 100;
/** Deployments allCentralized answers (newest first). */
const CENTRALIZED_LIMIT = 500;

const deploymentIdInput = z.object({ deploymentId: idSchema });
const serviceTypes = [
  "application",
  "compose",
  "server",
  "schedule",
  "previewDeployment",
  "backup",
  "volumeBackup",
  "postgres",
  "mysql",
  "mariadb",
  "mongo",
  "redis",
  "libsql",
] as const;

async function applicationDeployments(ctx: ServiceContext, caller: Caller, applicationId: string) {
  if (!(await ownedService(ctx.db, caller, "application", applicationId))) throw notFound("Application");
  await requireApplicationAccess(ctx.db, caller, applicationId);
  const rows = await listDeployments(ctx.db, caller.organizationId, { applicationId });
  return rows.map(toDeploymentView);
}

async function serverDeployments(ctx: ServiceContext, caller: Caller, serverId: string) {
  if (!(await serverBelongsTo(ctx.db, caller.organizationId, serverId))) throw notFound("Server");
  const rows = await listDeployments(ctx.db, caller.organizationId, { serverId });
  return (await onlyVisibleServices(ctx.db, caller, rows)).map(toDeploymentView);
}

async function databaseDeployments(
  ctx: ServiceContext,
  caller: Caller,
  kind: DatabaseKind,
  databaseId: string,
) {
  const row = await findDatabase(ctx.db, caller.organizationId, kind, databaseId);
  if (!row) throw notFound("Database");
  const service = { serviceId: row.databaseId, environmentId: row.environmentId, projectId: row.projectId };
  await requireServiceAccess(ctx.db, caller, service, "Database");
  return (await listTargetDeployments(ctx.db, databaseId)).map(toDeploymentView);
}

async function composeDeployments(ctx: ServiceContext, caller: Caller, composeId: string) {
  await loadCallerCompose(ctx.db, caller, composeId);
  return (await listTargetDeployments(ctx.db, composeId)).map(toDeploymentView);
}

/** A schedule's runs (404 unless the caller may reach the schedule: schedules/schedules.ts). */
async function scheduleDeployments(ctx: ServiceContext, caller: Caller, scheduleId: string) {
  const schedule = await loadSchedule(ctx, caller, scheduleId);
  return (await listTargetDeployments(ctx.db, schedule.scheduleId)).map(toDeploymentView);
}

/** A preview deployment's runs (404 unless the caller may reach its application). */
async function previewDeployments(ctx: ServiceContext, caller: Caller, previewDeploymentId: string) {
  await loadCallerPreview(ctx, caller, previewDeploymentId);
  return (await listTargetDeployments(ctx.db, previewDeploymentId)).map(toDeploymentView);
}

/** A backup's runs (404 unless the caller may see its database; the web server's: instance administrators). */
async function backupDeployments(ctx: ServiceContext, caller: Caller, backupId: string) {
  await loadBackup(ctx, caller, backupId);
  return (await listTargetDeployments(ctx.db, backupId, "backupId")).map(toDeploymentView);
}

/** A volume backup's runs (404 unless the caller may reach its service). */
async function volumeBackupDeployments(ctx: ServiceContext, caller: Caller, volumeBackupId: string) {
  await loadVolumeBackup(ctx, caller, volumeBackupId);
  return (await listTargetDeployments(ctx.db, volumeBackupId, "volumeBackupId")).map(toDeploymentView);
}

const isDatabaseKind = (type: string): type is DatabaseKind =>
  (databaseKinds as readonly string[]).includes(type);

/** A deployment of a service the caller may see, or a server schedule's run for an instance administrator (else 404). */
const loadDeployment = loadCallerDeployment;

export const deploymentRouter = defineRouter("deployment", {
  all: query({
    summary: "The application's deployments, newest first",
    access: "member",
    input: z.object({ applicationId: idSchema }),
    output: z.array(deploymentSchema),
    handler: ({ ctx, caller, input }) => applicationDeployments(ctx, caller, input.applicationId),
  }),

  allByCompose: query({
    summary: "A compose stack's deployments, newest first",
    access: "member",
    input: z.object({ composeId: idSchema }),
    output: z.array(deploymentSchema),
    handler: ({ ctx, caller, input }) => composeDeployments(ctx, caller, input.composeId),
  }),

  allByServer: query({
    summary: "The deployments that ran on a server, newest first",
    access: "member",
    input: z.object({ serverId: idSchema }),
    output: z.array(deploymentSchema),
    handler: ({ ctx, caller, input }) => serverDeployments(ctx, caller, input.serverId),
  }),

  allByType: query({
    summary:
      "The deployments of one service of a type (application, compose, previewDeployment, server, schedule, backup, volumeBackup and the six database kinds)",
    access: "member",
    input: z.object({ id: idSchema, type: z.enum(serviceTypes) }),
    output: z.array(deploymentSchema),
    handler: ({ ctx, caller, input }) => {
      if (input.type === "application") return applicationDeployments(ctx, caller, input.id);
      if (input.type === "server") return serverDeployments(ctx, caller, input.id);
      if (isDatabaseKind(input.type)) return databaseDeployments(ctx, caller, input.type, input.id);
      if (input.type === "compose") return composeDeployments(ctx, caller, input.id);
      if (input.type === "schedule") return scheduleDeployments(ctx, caller, input.id);
      if (input.type === "previewDeployment") return previewDeployments(ctx, caller, input.id);
      if (input.type === "backup") return backupDeployments(ctx, caller, input.id);
      return volumeBackupDeployments(ctx, caller, input.id);
    },
  }),

  allCentralized: query({
    summary: "The organization's deployments, newest first (at most 500)",
    access: "member",
    input: noInput,
    output: z.array(centralizedSchema),
    handler: async ({ ctx, caller }) => {
      const rows = await listNewestDeployments(ctx.db, caller.organizationId, CENTRALIZED_LIMIT);
      return (await onlyVisibleServices(ctx.db, caller, rows)).map((row) => {
        const service = { name: row.serviceName, appName: row.serviceAppName };
        return {
          ...toDeploymentView(row),
          application: row.applicationId ? { applicationId: row.applicationId, ...service } : null,
          database: isDatabaseKind(row.serviceType)
            ? { databaseId: row.serviceId, type: row.serviceType, ...service }
            : null,
          compose: row.composeId ? { composeId: row.composeId, ...service } : null,
        };
      });
    },
  }),

  queueList: query({
    summary: "The deployment queue: waiting and active jobs, then the latest 100 finished ones",
    access: "member",
    input: noInput,
    output: z.array(queueJobSchema),
    handler: async ({ ctx, caller }) => {
      const rows = await listQueueJobs(ctx.db, caller.organizationId, QUEUE_FINISHED_LIMIT);
      return (await onlyVisibleServices(ctx.db, caller, rows)).map((row) => ({
        id: row.deploymentId,
        name: row.kind,
        state: jobStates[row.status as DeploymentStatus],
        queuedAt: row.createdAt,
        startedAt: row.startedAt,
        finishedAt: row.completedAt,
        failedReason: row.status === "error" ? row.errorMessage : null,
        deploymentId: row.deploymentId,
        title: row.title,
        serviceType: row.serviceType,
        applicationId: row.applicationId,
        databaseId: row.databaseId,
        composeId: row.composeId,
        appName: row.serviceAppName,
        applicationName: row.serviceName,
        environmentId: row.environmentId,
        projectId: row.projectId,
        serverId: row.serverId,
      }));
    },
  }),

  killProcess: mutation({
    summary: "Stop a deployment: abort it if running, drop it from the queue if waiting",
    access: "member",
    input: deploymentIdInput,
    output: z.object({ success: z.boolean(), message: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const deployment = await loadDeployment(ctx, caller, input.deploymentId);
      const result = await stopDeployment(ctx, deployment, "Killed by deployment.killProcess");
      if (result === "aborted") return { success: true, message: "Deployment killed" };
      if (result === "dropped") return { success: true, message: "Deployment removed from the queue" };
      return { success: false, message: `The deployment is not running (status ${deployment.status})` };
    },
  }),

  readLogs: query({
    summary:
      "The last `tail` lines of a deployment's log, each `<time> <line>` (the whole log is also in `logs`; GET /api/deployment.logs follows it live)",
    access: "member",
    input: deploymentIdInput.extend({ tail: logTailSchema }),
    output: runtimeLogsSchema,
    handler: async ({ ctx, caller, input }) => {
      const deployment = await loadDeployment(ctx, caller, input.deploymentId);
      return tailLines(deployment.logs, input.tail);
    },
  }),

  removeDeployment: mutation({
    summary: "Remove a deployment from the history (a running one cannot be removed)",
    access: "member",
    input: deploymentIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const deployment = await loadDeployment(ctx, caller, input.deploymentId);
      // The same right as application.clearDeployments: history belongs to the service.
      requireCanDeleteServices(await grantsOf(ctx.db, caller));
      if (!(await deleteDeployment(ctx.db, deployment.deploymentId))) {
        throw conflict("The deployment is running; kill it first (deployment.killProcess)");
      }
      return success;
    },
  }),
});
