/**
 * Stopping deployments: a running one is aborted (the pipeline cancels the agent's job and the
 * worker stores it as error with the reason), a waiting one is dropped from the queue (stored
 * as error with the reason; its job is skipped when the queue reaches it).
 */
import type { ServiceContext } from "../context.ts";
import type { Deployment } from "../db/schema.ts";
import { type DeploymentFilter, failDeployments } from "./repository.ts";

/** How long a stop waits for the aborted deployment to store its end before answering. */
const ABORT_WAIT_MS = 30_000;

export type StopResult = "aborted" | "dropped" | "not-running";

async function dropWaiting(ctx: ServiceContext, filter: DeploymentFilter, reason: string): Promise<string[]> {
  const now = ctx.now();
  const ids = await failDeployments(ctx.db, filter, ["idle"], reason, now);
  for (const id of ids) ctx.deployments.worker.logs.dropped(id, `${now.toISOString()} ${reason}`, reason);
  return ids;
}

async function abortRunning(ctx: ServiceContext, deployment: Deployment, reason: string): Promise<void> {
  const finished = ctx.deployments.worker.abort(deployment.deploymentId, reason);
  if (finished) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise((resolve) => (timer = setTimeout(resolve, ABORT_WAIT_MS)))]);
    clearTimeout(timer);
    return;
  }
  // Marked running but not running here: left by a control plane that stopped.
  await failDeployments(ctx.db, { deploymentId: deployment.deploymentId }, ["running"], reason, ctx.now());
}

/** Stops one deployment, running or waiting. */
export async function stopDeployment(
  ctx: ServiceContext,
  deployment: Deployment,
  reason: string,
): Promise<StopResult> {
  if (deployment.status === "running") {
    await abortRunning(ctx, deployment, reason);
    return "aborted";
  }
  if (deployment.status === "idle") {
    const dropped = await dropWaiting(ctx, { deploymentId: deployment.deploymentId }, reason);
    // It may have started in between.
    if (dropped.length === 0) return stopRunningDeployment(ctx, deployment.targetId, reason);
    return "dropped";
  }
  return "not-running";
}

/** Aborts the running deployment of the service (of any kind), if any. */
export async function stopRunningDeployment(
  ctx: ServiceContext,
  serviceId: string,
  reason: string,
): Promise<StopResult> {
  const running = await ctx.db
    .selectFrom("deployments")
    .selectAll()
    .where("targetId", "=", serviceId)
    .where("status", "=", "running")
    .execute();
  for (const deployment of running) await abortRunning(ctx, deployment, reason);
  return running.length > 0 ? "aborted" : "not-running";
}

/**
 * cancelDeployment of an application or a compose stack: aborts its running deployment and says
 * whether there was one (`success: false` when none ran).
 */
export async function cancelServiceDeployment(
  ctx: ServiceContext,
  serviceId: string,
  kind: "application" | "compose",
): Promise<{ success: boolean; message: string }> {
  const result = await stopRunningDeployment(ctx, serviceId, `Cancelled by ${kind}.cancelDeployment`);
  return result === "aborted"
    ? { success: true, message: "Deployment cancelled" }
    : {
        success: false,
        message: `No deployment is running for this ${kind === "compose" ? "compose stack" : kind}`,
      };
}

/** Drops every waiting deployment of the service (of any kind); answers how many. */
export async function dropWaitingDeployments(
  ctx: ServiceContext,
  serviceId: string,
  reason: string,
): Promise<number> {
  return (await dropWaiting(ctx, { targetId: serviceId }, reason)).length;
}

/** Drops the waiting deployments of `deploymentIds` (one that started meanwhile goes on); answers how many. */
export async function dropWaitingDeploymentsById(
  ctx: ServiceContext,
  deploymentIds: string[],
  reason: string,
): Promise<number> {
  let dropped = 0;
  for (const deploymentId of deploymentIds)
    dropped += (await dropWaiting(ctx, { deploymentId }, reason)).length;
  return dropped;
}

/**
 * The teardown of a service of any kind (a database's, a compose stack's): its waiting
 * deployments dropped, its running one aborted, then `remove` (its Docker objects, its proxy
 * files), in that order so that no deployment recreates what is being removed.
 */
export async function teardownTarget(
  ctx: ServiceContext,
  serviceId: string,
  reason: string,
  remove: () => Promise<void>,
): Promise<void> {
  await dropWaitingDeployments(ctx, serviceId, reason);
  await stopRunningDeployment(ctx, serviceId, reason);
  await remove();
}
