/**
 * Starting a deployment: the record (status idle = queued) and its queue job. Answers at once;
 * the worker runs the job when the service has no other deployment running and a slot of
 * the global concurrency is free. An application's start is applications/start-deployment.ts.
 */
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";
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

/**
 * Checks that the organization's service may run on `serverId` (null: this machine), throwing
 * the API error that says why not. Registered by the servers feature from the composition root
 * (features.ts): deployments/ knows no server.
 */
export type PlacementCheck = (
  ctx: ServiceContext,
  organizationId: string,
  serverId: string | null,
) => Promise<unknown>;

let placementCheck: PlacementCheck | undefined;

export function registerPlacementCheck(check: PlacementCheck): void {
  placementCheck = check;
}

function checkPlacement(ctx: ServiceContext, organizationId: string, serverId: string | null) {
  if (!placementCheck) throw new Error("no placement check is registered (features.ts registers it)");
  return placementCheck(ctx, organizationId, serverId);
}

/**
 * Records a deployment of a database service (deploy, reload or rebuild: status idle =
 * queued) and enqueues it; its jobs run one at a time like an application's.
 */
export function startDatabaseDeployment(
  ctx: ServiceContext,
  input: {
    databaseId: string;
    organizationId: string;
    serverId: string | null;
    kind: "deploy" | "rebuild";
    title?: string;
  },
): Promise<{ deploymentId: string }> {
  return startTargetDeployment(ctx, { ...input, target: { kind: "database", id: input.databaseId } });
}

/**
 * Records a deployment of a service of any kind but applications (their checks are
 * startApplicationDeployment's) and enqueues it; its jobs run one at a time per service.
 */
export async function startTargetDeployment(
  ctx: ServiceContext,
  input: {
    target: DeploymentTargetRef;
    organizationId: string;
    serverId: string | null;
    kind: DeploymentKind;
    title?: string;
    description?: string;
    /** kind rollback: the rollback to deploy. */
    restoresRollbackId?: string;
    /** A compose stack's deploy that first removes the stack's own volumes. */
    freshVolumes?: boolean;
  },
): Promise<{ deploymentId: string }> {
  // This machine runs only the instance organization's services (a 400 naming serverId).
  await checkPlacement(ctx, input.organizationId, input.serverId);
  const deployment = await insertDeployment(ctx.db, {
    target: input.target,
    kind: input.kind,
    title: input.title || DEFAULT_TITLES[input.kind],
    description: input.description ?? null,
    serverId: input.serverId,
    restoresRollbackId: input.restoresRollbackId ?? null,
    freshVolumes: input.freshVolumes ?? false,
  });
  await enqueueOrFail(ctx, deployment.deploymentId, input.target.id);
  return { deploymentId: deployment.deploymentId };
}

/** Enqueues the job; a queue that refuses it fails the deployment and answers a 503. */
export async function enqueueOrFail(
  ctx: ServiceContext,
  deploymentId: string,
  serviceId: string,
): Promise<void> {
  try {
    await ctx.deployments.enqueue({ deploymentId, applicationId: serviceId });
  } catch (error) {
    ctx.logger.error({ err: error, deploymentId }, "deployment not queued");
    await failDeployments(
      ctx.db,
      { deploymentId },
      ["idle"],
      "The deployment queue is unavailable",
      ctx.now(),
    );
    throw new ApiError("SERVICE_UNAVAILABLE", "The deployment queue is unavailable; try again");
  }
}
