/**
 * A deployment read on behalf of a caller (deployment.killProcess, removeDeployment, the live
 * log): a deployment of a service the caller may see, or a run of a server schedule for an
 * instance administrator (the schedules they alone manage: schedules/schedules.ts). Anything
 * else, another organization's included, is a 404. It joins the permissions of projects/, the
 * instance administrators of organizations/ and (the live log) the web-server runs of backups/,
 * so it lives here rather than in deployments/, which knows no feature.
 */
import type { Caller, ServiceContext } from "../context.ts";
import { findDeployment, findHostScheduleRun, type LocatedDeployment } from "../deployments/repository.ts";
import { notFound } from "../errors.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { requireServiceAccess } from "../projects/permissions.ts";

export async function loadCallerDeployment(
  ctx: ServiceContext,
  caller: Caller,
  deploymentId: string,
): Promise<LocatedDeployment> {
  const deployment = await findDeployment(ctx.db, caller.organizationId, deploymentId);
  if (deployment) {
    await requireServiceAccess(ctx.db, caller, deployment, "Deployment");
    return deployment;
  }
  const hostRun = await findHostScheduleRun(ctx.db, caller.organizationId, deploymentId);
  if (hostRun && ctx.config.edition !== "cloud" && (await isInstanceAdmin(ctx.db, caller))) {
    return hostRun;
  }
  throw notFound("Deployment");
}

/** The row again, once the caller's access was checked (a server schedule's run included). */
export async function rereadDeployment(
  ctx: ServiceContext,
  organizationId: string,
  deploymentId: string,
): Promise<LocatedDeployment | undefined> {
  return (
    (await findDeployment(ctx.db, organizationId, deploymentId)) ??
    (await findHostScheduleRun(ctx.db, organizationId, deploymentId))
  );
}
