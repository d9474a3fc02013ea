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
  services: ServiceContext,
  application: Application,
  reason: string,
): Promise<void> {
  // No deployment may go on creating a service for an application that is gone.
  await dropWaitingDeployments(services, application.applicationId, reason);
  await deleteApplicationPreviews(services, application.applicationId, reason);
  await stopRunningDeployment(services, application.applicationId, reason);
  await removeOwnService(services, application);
  await removeUploads(services, application.applicationId);
  await removeApplicationProxy(services, application);
  // Kept rollback images are exempt from image cleanups: untagged here or never.
  await removeRollbacks(services, await listApplicationRollbacks(services.db, application.applicationId));
}

/**
 * Removes the application's Swarm service. A name of the older appName rule (`platform-x`) may
 * have one and goes through the agent's ownership check like any other; a name valid under
 * neither rule never had one. A service of that name labelled for someone else is not the
 * application's: nothing to remove, so the deletion goes on.
 */
async function removeOwnService(services: ServiceContext, application: Application): Promise<void> {
  if (!isExistingAppName(application.appName)) return;
  try {
    await removeApplicationService(services, application);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "CONFLICT") throw error;
    services.logger.warn(
      { applicationId: application.applicationId, appName: application.appName },
      "the service named after the application belongs to someone else: left in place",
    );
  }
}

/** Tears down every application of the environments (their rows go with the environments). */
export async function teardownApplicationsIn(
  services: ServiceContext,
  environmentIds: readonly string[],
): Promise<void> {
  const applications = await services.db
    .selectFrom("applications")
    .selectAll()
    .where("environmentId", "in", environmentIds)
    .execute();
  for (const application of applications) {
    await teardownApplication(services, application, "The application's environment was deleted");
  }
}
