/**
 * The service a deployment belongs to, as the worker sees it: an application or a database
 * service. The worker claims, logs, stores and settles every deployment the same way; what
 * differs per kind of service (where its status lives, how it is deployed, what its appDeploy
 * events name) is here, one entry per kind.
 */
import { backupRunTarget, isBackupRunKind } from "../backups/runs.ts";
import type { ServiceContext } from "../context.ts";
import { loadDatabaseTarget } from "../databases/deploy.ts";
import type { Db } from "../db/database.ts";
import type { ApplicationStatus, Deployment } from "../db/schema.ts";
import { recordEvent } from "./events.ts";
import type { DeploymentOutcome, DeploymentRun } from "./pipeline.ts";
import type { DeploymentResult } from "./repository.ts";

export type DeploymentRunner = (services: ServiceContext, run: DeploymentRun) => Promise<DeploymentOutcome>;

export interface DeploymentTarget {
  /** The application or database service id (the queue's key, serviceKeyOf). */
  serviceId: string;
  name: string;
  organizationId: string;
  /** Its status before the deployment: put back when the deployment is cancelled. */
  status: ApplicationStatus;
  /** Stores the service's status (idle | running | done | error), in `db` (the worker's transaction). */
  setStatus(db: Db, status: ApplicationStatus): Promise<void>;
  /** Runs the deployment; undefined: the worker's runner (the application pipeline). */
  run?: DeploymentRunner;
  /** A database service's event names it in its payload (its applicationId is null). */
  eventService?: { databaseId: string; type: string };
  /**
   * Records a finished deployment's mark in `db` instead of the service's status and appDeploy
   * event (backup runs: a databaseBackup event, backups/runs.ts).
   */
  settle?(
    db: Db,
    deployment: { deploymentId: string; title: string },
    result: DeploymentResult,
    now: Date,
  ): Promise<void>;
}

async function loadApplicationTarget(
  services: ServiceContext,
  applicationId: string,
): Promise<DeploymentTarget | undefined> {
  const application = await services.db
    .selectFrom("applications")
    .innerJoin("environments", "environments.environmentId", "applications.environmentId")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .select([
      "applications.applicationId",
      "applications.name",
      "applications.applicationStatus",
      "projects.organizationId",
    ])
    .where("applications.applicationId", "=", applicationId)
    .executeTakeFirst();
  if (!application) return undefined;
  return {
    serviceId: application.applicationId,
    name: application.name,
    organizationId: application.organizationId,
    status: application.applicationStatus,
    setStatus: async (db, status) => {
      // A deployment's outcome replaces what reconciliation said about the service.
      await db
        .updateTable("applications")
        .set({ applicationStatus: status, applicationStatusMessage: null })
        .where("applicationId", "=", applicationId)
        .execute();
    },
  };
}

/** The service of a deployment; undefined when it was deleted meanwhile. */
export function loadDeploymentTarget(
  services: ServiceContext,
  deployment: Pick<Deployment, "applicationId" | "databaseId"> & { kind?: Deployment["kind"] },
): Promise<DeploymentTarget | undefined> {
  if (deployment.databaseId) {
    const kind = deployment.kind;
    // Runs of a backup are deployments of its database that leave the database's status alone.
    if (kind && isBackupRunKind(kind)) {
      return loadDatabaseTarget(services, deployment.databaseId).then(
        (target) => target && backupRunTarget(target, kind),
      );
    }
    return loadDatabaseTarget(services, deployment.databaseId);
  }
  return loadApplicationTarget(services, deployment.applicationId as string);
}

/**
 * A finished deployment's mark on its service: the service's status and an appDeploy |
 * appBuildError event. Written in the transaction (`db`) that stores the deployment's outcome,
 * so neither is seen, or lost, without the other.
 */
export async function settleTarget(
  db: Db,
  target: DeploymentTarget,
  deployment: { deploymentId: string; title: string },
  result: DeploymentResult,
  now: Date,
): Promise<void> {
  if (target.settle) return target.settle(db, deployment, result, now);
  const title = deployment.title;
  await target.setStatus(db, result.status);
  await recordEvent(
    db,
    {
      organizationId: target.organizationId,
      kind: result.status === "done" ? "appDeploy" : "appBuildError",
      applicationId: target.eventService ? null : target.serviceId,
      payload: {
        ...target.eventService,
        applicationName: target.name,
        status: result.status === "done" ? "success" : "error",
        message: result.status === "done" ? `${title}: deployed` : `${title}: ${result.errorMessage}`,
      },
    },
    now,
  );
}
