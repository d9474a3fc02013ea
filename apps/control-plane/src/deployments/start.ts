/**
 * Starting a deployment: the record (status idle = queued) and its queue job. Answers at once;
 * the worker runs the job when the application has no other deployment running and a slot of
 * the global concurrency is free.
 */
import { ownerOfApplication } from "../applications/ownership.ts";
import type { ServiceContext } from "../context.ts";
import { ApiError, notFound } from "../errors.ts";
import { agentServerId } from "../servers/repository.ts";
import { type DeploymentTargetRef, failDeployments, insertDeployment } from "./repository.ts";

/**
 * rebuild: database services only (their data volume is deleted first); backup, restore and
 * verify: runs of a backup (backups/runs.ts); rollback: an application's or a compose stack's
 * kept rollback deployed again (rollbacks/); schedule: a schedule's run (schedules/runs.ts).
 */
export type DeploymentKind =
  | "deploy"
  | "redeploy"
  | "rebuild"
  | "backup"
  | "restore"
  | "verify"
  | "rollback"
  | "schedule"
  | "volumeBackup"
  | "volumeRestore";

export interface StartDeploymentInput {
  applicationId: string;
  kind: DeploymentKind;
  /** Default "Manual deployment" (deploy) / "Rebuild deployment" (redeploy). */
  title?: string;
  description?: string;
  /** A drop upload: the archive stored on the control plane's disk (absolute path) and its format. */
  archive?: { path: string; format: "zip" | "tar.gz" };
  /** kind rollback: the rollback to deploy. */
  restoresRollbackId?: string;
}

export const DEFAULT_TITLES: Record<DeploymentKind, string> = {
  deploy: "Manual deployment",
  redeploy: "Rebuild deployment",
  rebuild: "Rebuild: data deleted, started fresh",
  backup: "Backup",
  restore: "Restore",
  verify: "Restore verification",
  rollback: "Rollback",
  schedule: "Schedule",
  volumeBackup: "Volume backup",
  volumeRestore: "Volume restore",
};

/** Records the deployment (status idle = queued), enqueues its job, returns at once. */
export async function startApplicationDeployment(
  services: ServiceContext,
  input: StartDeploymentInput,
): Promise<{ deploymentId: string }> {
  const application = await services.db
    .selectFrom("applications")
    .select(["applicationId", "serverId", "environmentId"])
    .where("applicationId", "=", input.applicationId)
    .executeTakeFirst();
  if (!application) throw notFound("Application");
  // This machine runs only the instance organization's applications (a 400 naming serverId).
  if (application.serverId === null && services.config.edition !== "cloud") {
    const { organizationId } = await ownerOfApplication(services.db, application);
    await agentServerId(services, organizationId, null);
  }
  const deployment = await insertDeployment(services.db, {
    target: { kind: "application", id: application.applicationId },
    kind: input.kind,
    title: input.title || DEFAULT_TITLES[input.kind],
    description: input.description ?? null,
    serverId: application.serverId,
    archive: input.archive,
    restoresRollbackId: input.restoresRollbackId ?? null,
  });
  await enqueueOrFail(services, deployment.deploymentId, application.applicationId);
  return { deploymentId: deployment.deploymentId };
}

/**
 * Records a deployment of a database service (deploy, reload or rebuild: status idle =
 * queued) and enqueues it; its jobs run one at a time like an application's.
 */
export function startDatabaseDeployment(
  services: ServiceContext,
  input: {
    databaseId: string;
    organizationId: string;
    serverId: string | null;
    kind: "deploy" | "rebuild";
    title?: string;
  },
): Promise<{ deploymentId: string }> {
  return startTargetDeployment(services, { ...input, target: { kind: "database", id: input.databaseId } });
}

/**
 * Records a deployment of a service of any kind but applications (their checks are
 * startApplicationDeployment's) and enqueues it; its jobs run one at a time per service.
 */
export async function startTargetDeployment(
  services: ServiceContext,
  input: {
    target: DeploymentTargetRef;
    organizationId: string;
    serverId: string | null;
    kind: DeploymentKind;
    title?: string;
    description?: string;
    /** kind rollback: the rollback to deploy. */
    restoresRollbackId?: string;
  },
): Promise<{ deploymentId: string }> {
  // This machine runs only the instance organization's services (a 400 naming serverId).
  await agentServerId(services, input.organizationId, input.serverId);
  const deployment = await insertDeployment(services.db, {
    target: input.target,
    kind: input.kind,
    title: input.title || DEFAULT_TITLES[input.kind],
    description: input.description ?? null,
    serverId: input.serverId,
    restoresRollbackId: input.restoresRollbackId ?? null,
  });
  await enqueueOrFail(services, deployment.deploymentId, input.target.id);
  return { deploymentId: deployment.deploymentId };
}

/** Enqueues the job; a queue that refuses it fails the deployment and answers a 503. */
export async function enqueueOrFail(
  services: ServiceContext,
  deploymentId: string,
  serviceId: string,
): Promise<void> {
  try {
    await services.deployments.enqueue({ deploymentId, applicationId: serviceId });
  } catch (error) {
    services.logger.error({ err: error, deploymentId }, "deployment not queued");
    await failDeployments(
      services.db,
      { deploymentId },
      ["idle"],
      "The deployment queue is unavailable",
      services.now(),
    );
    throw new ApiError("SERVICE_UNAVAILABLE", "The deployment queue is unavailable; try again");
  }
}
