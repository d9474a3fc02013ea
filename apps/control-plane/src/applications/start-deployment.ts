/** Starting an application's deployment: its checks, then the record and queue job (deployments/start.ts). */
import type { ServiceContext } from "../context.ts";
import { insertDeployment } from "../deployments/repository.ts";
import { DEFAULT_TITLES, type DeploymentKind, enqueueOrFail } from "../deployments/start.ts";
import { notFound } from "../errors.ts";
import { deploymentServerId } from "../servers/placement.ts";
import { ownerOfApplication } from "./ownership.ts";

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

/** Records the deployment (status idle = queued), enqueues its job, returns at once. */
export async function startApplicationDeployment(
  ctx: ServiceContext,
  input: StartDeploymentInput,
): Promise<{ deploymentId: string }> {
  const application = await ctx.db
    .selectFrom("applications")
    .select(["applicationId", "serverId", "environmentId"])
    .where("applicationId", "=", input.applicationId)
    .executeTakeFirst();
  if (!application) throw notFound("Application");
  // This machine runs only the instance organization's applications, and none when it is
  // remote-servers-only (a 400 naming serverId).
  if (application.serverId === null && ctx.config.edition !== "cloud") {
    const { organizationId } = await ownerOfApplication(ctx.db, application);
    await deploymentServerId(ctx, organizationId, null);
  }
  const deployment = await insertDeployment(ctx.db, {
    target: { kind: "application", id: application.applicationId },
    kind: input.kind,
    title: input.title || DEFAULT_TITLES[input.kind],
    description: input.description ?? null,
    serverId: application.serverId,
    archive: input.archive,
    restoresRollbackId: input.restoresRollbackId ?? null,
  });
  await enqueueOrFail(ctx, deployment.deploymentId, application.applicationId);
  return { deploymentId: deployment.deploymentId };
}
