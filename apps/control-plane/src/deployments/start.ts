/**
 * Starting a deployment: the record (status idle = queued) and its queue job. Answers at once;
 * the worker runs the job when the application has no other deployment running and a slot of
 * the global concurrency is free.
 */
import { ownerOfApplication } from "../applications/ownership.ts";
import type { ServiceContext } from "../context.ts";
import { ApiError, notFound } from "../errors.ts";
import { agentServerId } from "../servers/repository.ts";
import { failDeployments, insertDeployment } from "./repository.ts";

export type DeploymentKind = "deploy" | "redeploy";

export interface StartDeploymentInput {
  applicationId: string;
  kind: DeploymentKind;
  /** Default "Manual deployment" (deploy) / "Rebuild deployment" (redeploy). */
  title?: string;
  description?: string;
  /** A drop upload: the archive stored on the control plane's disk (absolute path) and its format. */
  archive?: { path: string; format: "zip" | "tar.gz" };
}

export const DEFAULT_TITLES: Record<DeploymentKind, string> = {
  deploy: "Manual deployment",
  redeploy: "Rebuild deployment",
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
    applicationId: application.applicationId,
    kind: input.kind,
    title: input.title || DEFAULT_TITLES[input.kind],
    description: input.description ?? null,
    serverId: application.serverId,
    archive: input.archive,
  });
  try {
    await services.deployments.enqueue({
      deploymentId: deployment.deploymentId,
      applicationId: application.applicationId,
    });
  } catch (error) {
    services.logger.error({ err: error, deploymentId: deployment.deploymentId }, "deployment not queued");
    await failDeployments(
      services.db,
      { deploymentId: deployment.deploymentId },
      ["idle"],
      "The deployment queue is unavailable",
      services.now(),
    );
    throw new ApiError("SERVICE_UNAVAILABLE", "The deployment queue is unavailable; try again");
  }
  return { deploymentId: deployment.deploymentId };
}
