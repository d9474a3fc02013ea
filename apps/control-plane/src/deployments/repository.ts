/**
 * Deployment rows. A row is also its queue job: idle = waiting, running = active, done =
 * completed, error = failed. Every read for a caller goes through the organization of the
 * application (another organization's deployment is not found).
 */
import { sql } from "kysely";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { Deployment, DeploymentStatus } from "../db/schema.ts";
import type { DeploymentKind } from "./start.ts";

export type { Deployment };

/** What a caller sees of a deployment: the row with where its live log is, without the archive. */
export type DeploymentView = {
  deploymentId: string;
  applicationId: string;
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
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
};

/** The live-log address of a deployment (the log itself is in the record: no file). */
export const logPathOf = (deploymentId: string) =>
  `/api/deployment.logs?deploymentId=${encodeURIComponent(deploymentId)}`;

/** Fields listed, not spread: deployment lists build one per row. */
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
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    completedAt: row.completedAt,
  };
}

export interface NewDeployment {
  applicationId: string;
  kind: DeploymentKind;
  title: string;
  description: string | null;
  serverId: string | null;
  archive?: { path: string; format: "zip" | "tar.gz" };
}

export function insertDeployment(db: Db, values: NewDeployment): Promise<Deployment> {
  const { archive, ...rest } = values;
  return db
    .insertInto("deployments")
    .values({
      deploymentId: newId(),
      ...rest,
      archivePath: archive?.path ?? null,
      archiveFormat: archive?.format ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deployments joined to their organization, for reads on behalf of a caller. */
function inOrganization(db: Db, organizationId: string) {
  return db
    .selectFrom("deployments")
    .innerJoin("applications", "applications.applicationId", "deployments.applicationId")
    .innerJoin("environments", "environments.environmentId", "applications.environmentId")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .where("projects.organizationId", "=", organizationId);
}

export function findDeployment(
  db: Db,
  organizationId: string,
  deploymentId: string,
): Promise<Deployment | undefined> {
  return inOrganization(db, organizationId)
    .selectAll("deployments")
    .where("deployments.deploymentId", "=", deploymentId)
    .executeTakeFirst();
}

/** The application of a deployment of the organization (undefined: none of its deployments). */
export async function applicationOfDeployment(
  db: Db,
  organizationId: string,
  deploymentId: string,
): Promise<string | undefined> {
  const row = await inOrganization(db, organizationId)
    .select("deployments.applicationId")
    .where("deployments.deploymentId", "=", deploymentId)
    .executeTakeFirst();
  return row?.applicationId;
}

export function listDeployments(
  db: Db,
  organizationId: string,
  filter: { applicationId?: string; serverId?: string } = {},
): Promise<Deployment[]> {
  let query = inOrganization(db, organizationId).selectAll("deployments");
  if (filter.applicationId) query = query.where("deployments.applicationId", "=", filter.applicationId);
  if (filter.serverId) query = query.where("deployments.serverId", "=", filter.serverId);
  return query.orderBy("deployments.createdAt", "desc").orderBy("deployments.deploymentId").execute();
}

/** The organization's newest deployments with the name and appName of their application. */
export function listNewestDeploymentsWithApplication(db: Db, organizationId: string, limit: number) {
  return inOrganization(db, organizationId)
    .selectAll("deployments")
    .select(["applications.name as applicationName", "applications.appName"])
    .orderBy("deployments.createdAt", "desc")
    .orderBy("deployments.deploymentId")
    .limit(limit)
    .execute();
}

export interface QueueRow extends Deployment {
  appName: string;
  applicationName: string;
  environmentId: string;
  projectId: string;
}

/** Waiting and active jobs of the organization, then its latest finished ones. */
export async function listQueueJobs(
  db: Db,
  organizationId: string,
  finishedLimit: number,
): Promise<QueueRow[]> {
  const base = () =>
    inOrganization(db, organizationId)
      .selectAll("deployments")
      .select([
        "applications.appName",
        "applications.name as applicationName",
        "applications.environmentId",
        "projects.projectId",
      ]);
  const open = await base()
    .where("deployments.status", "in", ["idle", "running"])
    .orderBy("deployments.createdAt")
    .execute();
  const finished = await base()
    .where("deployments.status", "in", ["done", "error"])
    .orderBy("deployments.completedAt", "desc")
    .limit(finishedLimit)
    .execute();
  return [...open, ...finished];
}

/** Moves a waiting deployment to running; undefined when it is no longer waiting. */
export function claimDeployment(db: Db, deploymentId: string, now: Date): Promise<Deployment | undefined> {
  return db
    .updateTable("deployments")
    .set({ status: "running", startedAt: now.toISOString() })
    .where("deploymentId", "=", deploymentId)
    .where("status", "=", "idle")
    .returningAll()
    .executeTakeFirst();
}

export interface DeploymentResult {
  status: "done" | "error";
  errorMessage?: string | null;
  imageName?: string | null;
  commitHash?: string | null;
  commitMessage?: string | null;
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
  filter: { deploymentId?: string; applicationId?: string },
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
  if (filter.applicationId) query = query.where("applicationId", "=", filter.applicationId);
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
  filter: { deploymentId?: string; applicationId?: string },
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

/** Applications with waiting deployments (resumed when the control plane starts). */
export async function applicationsWithWaitingDeployments(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("deployments")
    .select("applicationId")
    .where("status", "=", "idle")
    .groupBy("applicationId")
    .orderBy(sql`min(created_at)`)
    .execute();
  return rows.map((row) => row.applicationId);
}

export async function hasWaitingDeployments(db: Db, applicationId: string): Promise<boolean> {
  const row = await db
    .selectFrom("deployments")
    .select("deploymentId")
    .where("applicationId", "=", applicationId)
    .where("status", "=", "idle")
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export function waitingDeployments(db: Db): Promise<Pick<Deployment, "deploymentId" | "applicationId">[]> {
  return db
    .selectFrom("deployments")
    .select(["deploymentId", "applicationId"])
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
 * Deletes the application's finished deployments except its newest successful one (the version
 * that serves); waiting and running ones stay. Answers the deleted rows.
 */
export async function deleteFinishedDeployments(db: Db, applicationId: string): Promise<Deployment[]> {
  const serving = await db
    .selectFrom("deployments")
    .select("deploymentId")
    .where("applicationId", "=", applicationId)
    .where("status", "=", "done")
    .orderBy("completedAt", "desc")
    .limit(1)
    .executeTakeFirst();
  let query = db
    .deleteFrom("deployments")
    .where("applicationId", "=", applicationId)
    .where("status", "in", ["done", "error"]);
  if (serving) query = query.where("deploymentId", "!=", serving.deploymentId);
  return query.returningAll().execute();
}

/** Deployments left running (by a control plane that stopped), with what recovery needs. */
export function runningDeployments(db: Db) {
  return db
    .selectFrom("deployments")
    .innerJoin("applications", "applications.applicationId", "deployments.applicationId")
    .select([
      "deployments.deploymentId",
      "deployments.applicationId",
      "deployments.title",
      "applications.appName",
      "applications.serverId",
    ])
    .where("deployments.status", "=", "running")
    .orderBy("deployments.createdAt")
    .execute();
}
