/**
 * A deployment read on behalf of a caller (deployment.killProcess, removeDeployment, the live
 * log): a deployment of a service the caller may see, or a run of a server schedule for an
 * instance administrator (the schedules they alone manage: schedules/schedules.ts). Anything
 * else, another organization's included, is a 404.
 */
import type { Caller, ServiceContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { requireServiceAccess } from "../projects/permissions.ts";
import { findDeployment, findHostScheduleRun, type LocatedDeployment } from "./repository.ts";

export async function loadCallerDeployment(
  services: ServiceContext,
  caller: Caller,
  deploymentId: string,
): Promise<LocatedDeployment> {
  const deployment = await findDeployment(services.db, caller.organizationId, deploymentId);
  if (deployment) {
    await requireServiceAccess(services.db, caller, deployment, "Deployment");
    return deployment;
  }
  const hostRun = await findHostScheduleRun(services.db, caller.organizationId, deploymentId);
  if (hostRun && services.config.edition !== "cloud" && (await isInstanceAdmin(services.db, caller))) {
    return hostRun;
  }
  throw notFound("Deployment");
}

/** The row again, once the caller's access was checked (a server schedule's run included). */
export async function rereadDeployment(
  services: ServiceContext,
  organizationId: string,
  deploymentId: string,
): Promise<LocatedDeployment | undefined> {
  return (
    (await findDeployment(services.db, organizationId, deploymentId)) ??
    (await findHostScheduleRun(services.db, organizationId, deploymentId))
  );
}
