/** An application as the deployment worker and recovery see it (deployments/targets.ts). */
import { applicationOwner } from "@platform/ownership";
import type { ServiceContext } from "../context.ts";
import { withOwner } from "../db/owned.ts";
import { serverOf } from "../deployments/runtime.ts";
import type { DeploymentTarget } from "../deployments/targets.ts";
import { runApplicationDeployment } from "./pipeline.ts";

export async function loadApplicationTarget(
  ctx: ServiceContext,
  applicationId: string,
): Promise<DeploymentTarget | undefined> {
  const application = await withOwner(ctx.db.selectFrom("applications"), "applications.environmentId")
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
    run: runApplicationDeployment,
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
