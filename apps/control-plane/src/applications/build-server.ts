/**
 * Build servers (issue 27 item 4): an application's `buildServerId` names a server of its
 * organization whose `serverType` is `build`. Its agent builds the image and pushes it to the
 * application's build registry (`buildRegistryId`, required with a build server); the
 * application's own server then pulls the pushed image and runs it (pipeline.ts). The
 * deployment's record names the build server (`deployments.buildServerId`), the build log
 * streams from that agent into the deployment's log, and a failure there (agent unreachable,
 * push refused) fails the deployment before anything is deployed. The save-time checks are in
 * applications/build-settings.ts; these repeat them at deploy time, as the server or the
 * registry may have changed since.
 */
import { AgentUnavailableError } from "@platform/agent-protocol";
import type { ServiceContext } from "../context.ts";
import { fail } from "../deployments/deploy-service.ts";
import { findServer } from "../servers/repository.ts";

export interface BuildServer {
  serverId: string;
  name: string;
}

/** The application's build server, checked; undefined when it builds where it runs. */
export async function buildServerOf(
  ctx: ServiceContext,
  app: { organizationId: string; buildServerId: string | null; buildRegistryId: string | null },
): Promise<BuildServer | undefined> {
  if (!app.buildServerId) return undefined;
  const server = await findServer(ctx.db, app.organizationId, app.buildServerId);
  if (!server)
    return fail("The application's build server no longer exists: set buildServerId again or clear it");
  if (server.serverType !== "build") {
    return fail(
      `The server ${server.name} (buildServerId) is a ${server.serverType} server: set its serverType to build, or clear buildServerId`,
    );
  }
  if (!app.buildRegistryId) {
    return fail(
      `The build server ${server.name} pushes the image to the application's build registry, and none is set: set buildRegistryId, or clear buildServerId`,
    );
  }
  return { serverId: server.serverId, name: server.name };
}

/** Records on the deployment which build server builds its image. */
export async function recordBuildServer(
  ctx: ServiceContext,
  deploymentId: string,
  buildServerId: string,
): Promise<void> {
  await ctx.db
    .updateTable("deployments")
    .set({ buildServerId })
    .where("deploymentId", "=", deploymentId)
    .execute();
}

/** Runs the build on `builder`; its agent's absence fails the deployment naming the build server. */
export async function runOnBuildServer<T>(builder: BuildServer, build: () => Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (error) {
    if (error instanceof AgentUnavailableError) {
      return fail(
        `The agent of the build server ${builder.name} (${builder.serverId}) is not connected: the image was not built and nothing was deployed`,
      );
    }
    throw error;
  }
}
