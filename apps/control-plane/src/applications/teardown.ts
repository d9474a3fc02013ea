/**
 * What an application leaves outside its row: deployments in flight, its Swarm service, its
 * uploads and its Traefik files. application.delete and the removal of its environment or
 * project both go through here before the rows are deleted.
 */
import { isExistingAppName } from "@platform/names";
import type { ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { dropWaitingDeployments, stopRunningDeployment } from "../deployments/stop.ts";
import { ApiError } from "../errors.ts";
import { deleteApplicationPreviews } from "../previews/previews.ts";
import { removeApplicationProxy } from "../proxy/sync.ts";
import { listApplicationRollbacks, removeRollbacks } from "../rollbacks/rollbacks.ts";
import { removeUploads } from "./drop.ts";
import { removeApplicationService } from "./runtime.ts";

export async function teardownApplication(
  ctx: ServiceContext,
  application: Application,
  reason: string,
): Promise<void> {
  // No deployment may go on creating a service for an application that is gone.
  await dropWaitingDeployments(ctx, application.applicationId, reason);
  await deleteApplicationPreviews(ctx, application.applicationId, reason);
  await stopRunningDeployment(ctx, application.applicationId, reason);
  await removeOwnService(ctx, application);
  await removeUploads(ctx, application.applicationId);
  await removeApplicationProxy(ctx, application);
  // Kept rollback images are exempt from image cleanups: untagged here or never.
  await removeRollbacks(ctx, await listApplicationRollbacks(ctx.db, application.applicationId));
}

/**
 * Removes the application's Swarm service. A name of the older appName rule (`platform-x`) may
 * have one and goes through the agent's ownership check like any other; a name valid under
 * neither rule never had one. A service of that name labelled for someone else is not the
 * application's: nothing to remove, so the deletion goes on.
 */
async function removeOwnService(ctx: ServiceContext, application: Application): Promise<void> {
  if (!isExistingAppName(application.appName)) return;
  try {
    await removeApplicationService(ctx, application);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "CONFLICT") throw error;
    ctx.logger.warn(
      { applicationId: application.applicationId, appName: application.appName },
      "the service named after the application belongs to someone else: left in place",
    );
  }
}

/** Tears down every application of the environments (their rows go with the environments). */
export async function teardownApplicationsIn(
  ctx: ServiceContext,
  environmentIds: readonly string[],
): Promise<void> {
  const applications = await ctx.db
    .selectFrom("applications")
    .selectAll()
    .where("environmentId", "in", environmentIds)
    .execute();
  for (const application of applications) {
    await teardownApplication(ctx, application, "The application's environment was deleted");
  }
}
