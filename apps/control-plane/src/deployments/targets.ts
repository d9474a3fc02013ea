/**
 * The service a deployment belongs to, as the worker and recovery see it, named by its kind and
 * id (DeploymentTargetRef). The worker claims, logs, stores and settles every deployment the same
 * way, and recovery settles every deployment a stopped control plane left running the same way;
 * what differs per kind of service (where its status lives, how it is deployed, how a deployment
 * left running is settled, what its appDeploy events name) is here, one entry per kind
 * (TARGET_KINDS).
 */
import { applicationOwner, type ResourceOwner } from "@platform/agent-protocol";
import { backupRunTarget, isBackupRunKind } from "../backups/runs.ts";
import { loadWebServerTarget } from "../backups/web-server-runs.ts";
import { loadComposeTarget } from "../compose/deploy.ts";
import type { ServiceContext } from "../context.ts";
import { loadDatabaseTarget } from "../databases/deploy.ts";
import type { Db } from "../db/database.ts";
import type { ApplicationStatus, Deployment, DeploymentTargetKind } from "../db/schema.ts";
import { loadPreviewTarget } from "../previews/previews.ts";
import { runComposeRollbackDeployment, runRollbackDeployment } from "../rollbacks/rollbacks.ts";
import { loadScheduleTarget } from "../schedules/runs.ts";
import { isVolumeRunKind, volumeRunTarget } from "../volume-backups/volume-backups.ts";
import { recordEvent } from "./events.ts";
import type { DeploymentOutcome, DeploymentRun } from "./pipeline.ts";
import type { DeploymentResult, DeploymentTargetRef } from "./repository.ts";
import { serverOf } from "./runtime.ts";

export type DeploymentRunner = (services: ServiceContext, run: DeploymentRun) => Promise<DeploymentOutcome>;

export interface DeploymentTarget {
  kind: DeploymentTargetKind;
  /** The service's id (the queue's key, DeploymentTargetRef.id). */
  serviceId: string;
  name: string;
  organizationId: string;
  /** Its status before the deployment: put back when the deployment is cancelled. */
  status: ApplicationStatus;
  /** Stores the service's status (idle | running | done | error), in `db` (the worker's transaction). */
  setStatus(db: Db, status: ApplicationStatus): Promise<void>;
  /** Runs the deployment; undefined: the worker's runner (the application pipeline). */
  run?: DeploymentRunner;
  /** A database service's or stack's event names it in its payload (its applicationId is null). */
  eventService?: Record<string, string>;
  /**
   * How a deployment a stopped control plane left running is settled (recovery.ts): followed
   * on its Swarm service until the service shows its outcome (a job no agent works on and no
   * service runs is run again), or run again from the start (its steps are idempotent).
   */
  recovery: { follow: { serverId: string; name: string; owner: ResourceOwner } } | "runAgain";
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
      "applications.appName",
      "applications.serverId",
      "applications.applicationStatus",
      "projects.organizationId",
    ])
    .where("applications.applicationId", "=", applicationId)
    .executeTakeFirst();
  if (!application) return undefined;
  return {
    kind: "application",
    serviceId: application.applicationId,
    name: application.name,
    organizationId: application.organizationId,
    status: application.applicationStatus,
    recovery: {
      follow: {
        serverId: serverOf(application),
        name: application.appName,
        owner: applicationOwner(application.organizationId, application.applicationId),
      },
    },
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

/** Each kind's loader of its targets: the one place a new service kind is registered. */
const TARGET_KINDS: Record<
  DeploymentTargetKind,
  (services: ServiceContext, id: string) => Promise<DeploymentTarget | undefined>
> = {
  application: loadApplicationTarget,
  database: loadDatabaseTarget,
  compose: loadComposeTarget,
  schedule: loadScheduleTarget,
  preview: loadPreviewTarget,
  webServer: loadWebServerTarget,
};

/** The service of a deployment; undefined when it was deleted meanwhile. */
export function loadDeploymentTarget(
  services: ServiceContext,
  deployment: { targetKind: DeploymentTargetKind; targetId: string; kind?: Deployment["kind"] },
): Promise<DeploymentTarget | undefined> {
  const kind = deployment.kind;
  // Runs of a backup are deployments of its database that leave the database's status alone.
  if (deployment.targetKind === "database" && kind && isBackupRunKind(kind)) {
    return loadDatabaseTarget(services, deployment.targetId).then(
      (target) => target && backupRunTarget(target, kind),
    );
  }
  // Runs of a volume backup are deployments of its service that leave its status alone.
  if (kind && isVolumeRunKind(kind)) {
    return TARGET_KINDS[deployment.targetKind](services, deployment.targetId).then(
      (target) => target && volumeRunTarget(target, kind),
    );
  }
  // A rollback deploys a kept spec and image instead of building (rollbacks/).
  if (deployment.targetKind === "application" && kind === "rollback") {
    return loadApplicationTarget(services, deployment.targetId).then(
      (target) => target && { ...target, run: runRollbackDeployment },
    );
  }
  // A stack's rollback deploys its kept file and images again (rollbacks/), run again from the
  // start after a restart like every stack deployment (recovery runAgain).
  if (deployment.targetKind === "compose" && kind === "rollback") {
    return loadComposeTarget(services, deployment.targetId).then(
      (target) => target && { ...target, run: runComposeRollbackDeployment },
    );
  }
  return TARGET_KINDS[deployment.targetKind](services, deployment.targetId);
}

/** The reference of a deployment's target, as runs carry it. */
export const targetRefOf = (deployment: {
  targetKind: DeploymentTargetKind;
  targetId: string;
}): DeploymentTargetRef => ({ kind: deployment.targetKind, id: deployment.targetId });

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
