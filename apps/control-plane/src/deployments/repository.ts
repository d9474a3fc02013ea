/**
 * Deployment rows. A row is also its queue job: idle = waiting, running = active, done =
 * completed, error = failed. Every read for a caller goes through the organization of the
 * application or database service (another organization's deployment is not found).
 */
import { sql } from "kysely";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type {
  DatabaseKind,
  Deployment,
  DeploymentStatus,
  DeploymentTargetKind,
  NewBackupRun,
} from "../db/schema.ts";
import type { DeploymentKind } from "./start.ts";

export type { Deployment };

/** What a caller sees of a deployment: the row with where its live log is, without the archive. */
export type DeploymentView = {
  deploymentId: string;
  /** Null for a deployment of a database service. */
  applicationId: string | null;
  title: string;
  description: string | null;
  status: DeploymentStatus;
  logPath: string;
  logs: string;
  errorMessage: string | null;
  commitHash: string | null;
  commitMessage: string | null;
  imageName: string | null;
  serverId: string | null;
  /** The build server whose agent built the image; null: built where it runs (or not built). */
  buildServerId: string | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /** The rollback this deployment recorded (or, a rollback run, deployed): rollback.rollback. */
  rollbackId: string | null;
};

/** The live-log address of a deployment (the log itself is in the record: no file). */
export const logPathOf = (deploymentId: string) =>
  `/api/deployment.logs?deploymentId=${encodeURIComponent(deploymentId)}`;

/** The view of a deployment row (a LocatedDeployment's service columns are left out too). */
export function toDeploymentView(row: Deployment): DeploymentView {
  return {
    deploymentId: row.deploymentId,
    applicationId: row.applicationId,
    title: row.title,
    description: row.description,
    status: row.status,
    logPath: logPathOf(row.deploymentId),
    logs: row.logs,
    errorMessage: row.errorMessage,
    commitHash: row.commitHash,
    commitMessage: row.commitMessage,
    imageName: row.imageName,
    serverId: row.serverId,
    buildServerId: row.buildServerId,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    completedAt: row.completedAt,
    rollbackId: row.rollbackId,
  };
}

/**
 * The service a deployment is of: its kind and id. The id is also the key its queue jobs run
 * one at a time under (QueuedJob.applicationId).
 */
export interface DeploymentTargetRef {
  kind: DeploymentTargetKind;
  id: string;
}

/** The foreign key column of each kind (a deleted service takes its deployments with it). */
const TARGET_COLUMNS = {
  application: "applicationId",
  database: "databaseId",
  compose: "composeId",
  schedule: "scheduleId",
  preview: "previewDeploymentId",
  webServer: "webServerBackupId",
} as const satisfies Record<DeploymentTargetKind, keyof Deployment>;

export interface NewDeployment {
  target: DeploymentTargetRef;
  kind: DeploymentKind;
  title: string;
  description: string | null;
  serverId: string | null;
  archive?: { path: string; format: "zip" | "tar.gz" };
  /** A rollback run's rollback (rollbacks/). */
  restoresRollbackId?: string | null;
  /** A compose stack's deploy that first removes the stack's own volumes. */
  freshVolumes?: boolean;
  /**
   * A run of a backup or volume backup, or a restore or verification (backups/, volume-backups/):
   * what it moves, kept in its backup_runs row.
   */
  backupRun?: NewBackupRun;
}

/** Inserts the deployment, and its backup run's row with it (one transaction). */
export async function insertDeployment(db: Db, values: NewDeployment): Promise<Deployment> {
  const { archive, target, backupRun, ...rest } = values;
  const insert = async (trx: Db) => {
    const deployment = await trx
      .insertInto("deployments")
      .values({
        deploymentId: newId(),
        targetKind: target.kind,
        targetId: target.id,
        [TARGET_COLUMNS[target.kind]]: target.id,
        ...rest,
        archivePath: archive?.path ?? null,
        archiveFormat: archive?.format ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (backupRun) {
      await trx
        .insertInto("backupRuns")
        .values({ ...backupRun, deploymentId: deployment.deploymentId })
        .execute();
    }
    return deployment;
  };
  return backupRun && !db.isTransaction ? db.transaction().execute(insert) : insert(db);
}

/**
 * Deployments joined to their service and organization, for reads on behalf of a caller; every
 * read selects where the service sits (serviceColumns). A schedule's run sits where the
 * schedule's application or compose stack sits (its serviceId is that service's, for the
 * caller's grants); a preview's deployment sits where the preview's application sits (its
 * serviceId is the application's: a member sees it exactly when they may see the application);
 * runs of server schedules sit in no environment and are read only through the schedule router
 * (instance administrators).
 */
function inOrganization(db: Db, organizationId: string) {
  const located = db
    .selectFrom("deployments")
    .leftJoin("applications", "applications.applicationId", "deployments.applicationId")
    .leftJoin("databaseServices", "databaseServices.databaseId", "deployments.databaseId")
    .leftJoin("compose", "compose.composeId", "deployments.composeId")
    .leftJoin("schedules", "schedules.scheduleId", "deployments.scheduleId")
    .leftJoin(
      "applications as scheduleApplications",
      "scheduleApplications.applicationId",
      "schedules.applicationId",
    )
    .leftJoin("compose as scheduleCompose", "scheduleCompose.composeId", "schedules.composeId")
    .leftJoin(
      "previewDeployments",
      "previewDeployments.previewDeploymentId",
      "deployments.previewDeploymentId",
    )
    .leftJoin("applications as previewApps", "previewApps.applicationId", "previewDeployments.applicationId");
  return ownedBy(
    located,
    sql<string>`coalesce(applications.environment_id, database_services.environment_id, compose.environment_id, schedule_applications.environment_id, schedule_compose.environment_id, preview_apps.environment_id)`,
    organizationId,
  )
    .selectAll("deployments")
    .select([
      sql<string>`coalesce(schedules.application_id, schedules.compose_id, preview_deployments.application_id, deployments.target_id)`.as(
        "serviceId",
      ),
      sql<string>`coalesce(applications.name, database_services.name, compose.name, schedules.name, preview_apps.name)`.as(
        "serviceName",
      ),
      sql<string>`coalesce(applications.app_name, database_services.app_name, compose.app_name, schedules.app_name, preview_deployments.app_name)`.as(
        "serviceAppName",
      ),
      sql<ServiceType>`case deployments.target_kind when 'database' then database_services.kind else deployments.target_kind end`.as(
        "serviceType",
      ),
      "environments.environmentId",
      "projects.projectId",
    ]);
}

/** The kind of service a deployment belongs to. */
export type ServiceType = "application" | DatabaseKind | "compose" | "schedule" | "preview";

/** A deployment read for a caller, with its service and where the service sits. */
export type LocatedDeployment = Deployment & {
  serviceId: string;
  serviceName: string;
  serviceAppName: string;
  serviceType: ServiceType;
  environmentId: string;
  projectId: string;
};

/** The deployments of one service (the caller's access is checked by its router). */
export function listTargetDeployments(
  db: Db,
  id: string,
  /** A service's (targetId), or the runs of one backup or volume backup (their backup_runs rows). */
  column: "targetId" | "backupId" | "volumeBackupId" = "targetId",
): Promise<Deployment[]> {
  const deployments = db.selectFrom("deployments");
  const picked =
    column === "targetId"
      ? deployments.where("deployments.targetId", "=", id)
      : deployments
          .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
          .where(`backupRuns.${column}`, "=", id);
  return picked
    .selectAll("deployments")
    .orderBy("deployments.createdAt", "desc")
    .orderBy("deployments.deploymentId")
    .execute();
}

/** A deployment of the organization's applications or database services. */
export function findDeployment(
  db: Db,
  organizationId: string,
  deploymentId: string,
): Promise<LocatedDeployment | undefined> {
  return inOrganization(db, organizationId)
    .where("deployments.deploymentId", "=", deploymentId)
    .executeTakeFirst();
}

/**
 * A run of one of the organization's server schedules (scheduleType server or dokploy-server).
 * It sits in no environment (environmentId and projectId are ""): only instance administrators
 * reach it (deployment-access/access.ts), never through the organization-wide lists.
 */
export function findHostScheduleRun(
  db: Db,
  organizationId: string,
  deploymentId: string,
): Promise<LocatedDeployment | undefined> {
  return db
    .selectFrom("deployments")
    .innerJoin("schedules", "schedules.scheduleId", "deployments.scheduleId")
    .where("schedules.organizationId", "=", organizationId)
    .where("schedules.scheduleType", "in", ["server", "dokploy-server"])
    .where("deployments.deploymentId", "=", deploymentId)
    .selectAll("deployments")
    .select([
      "schedules.scheduleId as serviceId",
      "schedules.name as serviceName",
      "schedules.appName as serviceAppName",
      sql<ServiceType>`'schedule'`.as("serviceType"),
      sql<string>`''`.as("environmentId"),
      sql<string>`''`.as("projectId"),
    ])
    .executeTakeFirst();
}

export function listDeployments(
  db: Db,
  organizationId: string,
  filter: { applicationId?: string; serverId?: string } = {},
): Promise<LocatedDeployment[]> {
  let query = inOrganization(db, organizationId);
  if (filter.applicationId) query = query.where("deployments.applicationId", "=", filter.applicationId);
  if (filter.serverId) query = query.where("deployments.serverId", "=", filter.serverId);
  return query.orderBy("deployments.createdAt", "desc").orderBy("deployments.deploymentId").execute();
}

/** The organization's newest deployments, with their service. */
export function listNewestDeployments(db: Db, organizationId: string, limit: number) {
  return inOrganization(db, organizationId)
    .orderBy("deployments.createdAt", "desc")
    .orderBy("deployments.deploymentId")
    .limit(limit)
    .execute();
}

/** Waiting and active jobs of the organization, then its latest finished ones. */
export async function listQueueJobs(
  db: Db,
  organizationId: string,
  finishedLimit: number,
): Promise<LocatedDeployment[]> {
  const open = await inOrganization(db, organizationId)
    .where("deployments.status", "in", ["idle", "running"])
    .orderBy("deployments.createdAt")
    .execute();
  const finished = await inOrganization(db, organizationId)
    .where("deployments.status", "in", ["done", "error"])
    .orderBy("deployments.completedAt", "desc")
    .limit(finishedLimit)
    .execute();
  return [...open, ...finished];
}

/** The partial unique index that keeps one running deployment per service (migration 20261203-50). */
const ONE_RUNNING_PER_TARGET = "deployments_one_running_per_target";

/**
 * Moves a waiting deployment to running. Answers "busy" when the job must wait, not be dropped:
 * another deployment of its service is running (whichever copy runs it), or this one is (a
 * message delivered again while the copy that runs it, or takes it over, has not settled it; it
 * may yet be handed back to the queue). Undefined when it ended or is gone. Two claims of one
 * service at once are kept apart by the index ONE_RUNNING_PER_TARGET: the second one's update
 * fails, and is answered "busy" too.
 */
export async function claimDeployment(
  db: Db,
  deploymentId: string,
  now: Date,
): Promise<Deployment | "busy" | undefined> {
  try {
    const claimed = await db
      .updateTable("deployments")
      .set({ status: "running", startedAt: now.toISOString() })
      .where("deploymentId", "=", deploymentId)
      .where("status", "=", "idle")
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("deployments as other")
              .select("other.deploymentId")
              .whereRef("other.targetKind", "=", "deployments.targetKind")
              .whereRef("other.targetId", "=", "deployments.targetId")
              .where("other.status", "=", "running"),
          ),
        ),
      )
      .returningAll()
      .executeTakeFirst();
    if (claimed) return claimed;
  } catch (error) {
    const { code, constraint } = error as { code?: unknown; constraint?: unknown };
    if (code === "23505" && constraint === ONE_RUNNING_PER_TARGET) return "busy";
    throw error;
  }
  const current = await db
    .selectFrom("deployments")
    .select("status")
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirst();
  return current?.status === "idle" || current?.status === "running" ? "busy" : undefined;
}

export interface DeploymentResult {
  status: "done" | "error";
  errorMessage?: string | null;
  imageName?: string | null;
  commitHash?: string | null;
  commitMessage?: string | null;
}

/** Which deployments a write picks: one, or those of one service. */
export interface DeploymentFilter {
  deploymentId?: string;
  /** The service's id (DeploymentTargetRef.id), whatever its kind. */
  targetId?: string;
}

/**
 * Moves the deployments picked by `filter` that are in one of `from` to `to` (a result: done |
 * error, completed now; or "idle": handed back to the queue), and either appends `line` to their
 * log or replaces the log with `logs` (the full log of the process that ran it). Conditional on
 * the status read (`from`): a deployment someone else moved meanwhile is left alone. Answers
 * the ids it changed.
 */
export async function moveDeployments(
  db: Db,
  filter: DeploymentFilter,
  from: DeploymentStatus[],
  to: DeploymentResult | "idle",
  log: { line: string } | { logs: string },
  now: Date,
): Promise<string[]> {
  const logs = "logs" in log ? log.logs : sql<string>`logs || ${`${now.toISOString()} ${log.line}\n`}`;
  const change =
    to === "idle" ? { status: "idle" as const, startedAt: null } : { ...to, completedAt: now.toISOString() };
  let query = db
    .updateTable("deployments")
    .set({ ...change, logs })
    .where("status", "in", from);
  if (filter.deploymentId) query = query.where("deploymentId", "=", filter.deploymentId);
  if (filter.targetId) query = query.where("targetId", "=", filter.targetId);
  const rows = await query.returning("deploymentId").execute();
  return rows.map((row) => row.deploymentId);
}

/**
 * Marks the deployments picked by `filter` that are in one of `statuses` as failed with
 * `reason`, appending it to their log (waiting ones dropped from the queue, or ones a stopped
 * control plane left running). Answers the ids it changed.
 */
export function failDeployments(
  db: Db,
  filter: DeploymentFilter,
  statuses: DeploymentStatus[],
  reason: string,
  now: Date,
): Promise<string[]> {
  return moveDeployments(
    db,
    filter,
    statuses,
    { status: "error", errorMessage: reason },
    { line: reason },
    now,
  );
}

/** Services (of every kind) with waiting deployments (resumed at start). */
export async function applicationsWithWaitingDeployments(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("deployments")
    .select("targetId")
    .where("status", "=", "idle")
    .groupBy("targetId")
    .orderBy(sql`min(created_at)`)
    .execute();
  return rows.map((row) => row.targetId);
}

/** Whether the service has a waiting deployment. */
export async function hasWaitingDeployments(db: Db, serviceId: string): Promise<boolean> {
  const row = await db
    .selectFrom("deployments")
    .select("deploymentId")
    .where("targetId", "=", serviceId)
    .where("status", "=", "idle")
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Waiting jobs, oldest first, keyed by their service (see serviceKeyOf). */
export function waitingDeployments(db: Db): Promise<{ deploymentId: string; applicationId: string }[]> {
  return db
    .selectFrom("deployments")
    .select(["deploymentId", "targetId as applicationId"])
    .where("status", "=", "idle")
    .orderBy("createdAt")
    .orderBy("deploymentId")
    .execute();
}

/** Deletes one deployment unless it is running; answers whether it was deleted. */
export async function deleteDeployment(db: Db, deploymentId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("deployments")
    .where("deploymentId", "=", deploymentId)
    .where("status", "!=", "running")
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Deletes the finished deployments of an application or a compose stack except its newest
 * successful one (the version that serves); waiting and running ones stay. Answers the deleted rows.
 */
export async function deleteFinishedDeployments(
  db: Db,
  service: { applicationId: string } | { composeId: string },
): Promise<Deployment[]> {
  const [column, id] =
    "applicationId" in service
      ? (["applicationId", service.applicationId] as const)
      : (["composeId", service.composeId] as const);
  const serving = await db
    .selectFrom("deployments")
    .select("deploymentId")
    .where(column, "=", id)
    .where("status", "=", "done")
    .orderBy("completedAt", "desc")
    .limit(1)
    .executeTakeFirst();
  let query = db.deleteFrom("deployments").where(column, "=", id).where("status", "in", ["done", "error"]);
  if (serving) query = query.where("deploymentId", "!=", serving.deploymentId);
  return query.returningAll().execute();
}

/**
 * Running deployments whose control plane stopped renewing their lease (it died), or that have
 * no lease though they started before `startedBefore` (it died between the claim and the lease):
 * what a live control plane takes over (recovery.ts's sweep). Oldest first.
 */
export function orphanedDeployments(db: Db, now: Date, startedBefore: Date) {
  return db
    .selectFrom("deployments")
    .leftJoin("deploymentLeases", "deploymentLeases.deploymentId", "deployments.deploymentId")
    .select([
      "deployments.deploymentId",
      "deployments.targetKind",
      "deployments.targetId",
      "deployments.title",
      "deployments.kind",
      "deployments.serverId",
    ])
    .where("deployments.status", "=", "running")
    .where((eb) =>
      eb.or([
        eb("deploymentLeases.until", "<", now.toISOString()),
        eb.and([
          eb("deploymentLeases.deploymentId", "is", null),
          eb("deployments.startedAt", "<", startedBefore.toISOString()),
        ]),
      ]),
    )
    .orderBy("deployments.createdAt")
    .execute();
}

/**
 * Waiting deployments made before `createdBefore` of services with no running deployment: ones a
 * control plane that died had queued in its memory (no NATS), taken up by a live one. Oldest first.
 */
export function orphanedWaitingDeployments(
  db: Db,
  createdBefore: Date,
): Promise<{ deploymentId: string; applicationId: string }[]> {
  return db
    .selectFrom("deployments as waiting")
    .select(["waiting.deploymentId", "waiting.targetId as applicationId"])
    .where("waiting.status", "=", "idle")
    .where("waiting.createdAt", "<", createdBefore.toISOString())
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("deployments as running")
            .select("running.deploymentId")
            .whereRef("running.targetId", "=", "waiting.targetId")
            .where("running.status", "=", "running"),
        ),
      ),
    )
    .orderBy("waiting.createdAt")
    .orderBy("waiting.deploymentId")
    .execute();
}

/** Deployments left running (by a control plane that stopped), of every kind, oldest first. */
export function runningDeployments(db: Db) {
  return db
    .selectFrom("deployments")
    .select(["deploymentId", "targetKind", "targetId", "title", "kind", "serverId"])
    .where("status", "=", "running")
    .orderBy("createdAt")
    .execute();
}
