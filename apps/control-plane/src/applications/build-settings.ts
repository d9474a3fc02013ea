/**
 * application.update's build-server fields, checked at save (issue 27 item 4): `buildServerId`
 * must name a server of the caller's organization (404 otherwise, checked by the caller) whose
 * `serverType` is `build`, and needs a `buildRegistryId`: the build server pushes the image there
 * and the application's server pulls it (applications/pipeline.ts); a multi-architecture build (`buildArchitecture` other than `host`,
 * or a `buildxBuilder`) needs the docker CLI's buildx plugin on the server that builds, which its
 * agent reports through validateServer. Multi-architecture builds are not run yet: the fields are
 * refused with a 400 naming them rather than stored and ignored (docs/decisions.md).
 */
import { callAgent } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";
import { badRequest } from "../errors.ts";
import { agentServerId } from "../servers/repository.ts";

interface BuildFields {
  buildServerId?: string | null | undefined;
  buildRegistryId?: string | null | undefined;
  buildArchitecture?: string | undefined;
  buildxBuilder?: string | null | undefined;
}

export async function checkBuildSettings(
  ctx: ServiceContext,
  organizationId: string,
  application: { serverId: string | null; buildServerId: string | null; buildRegistryId: string | null },
  input: BuildFields,
): Promise<void> {
  const buildServerId = input.buildServerId !== undefined ? input.buildServerId : application.buildServerId;
  const buildRegistryId =
    input.buildRegistryId !== undefined ? input.buildRegistryId : application.buildRegistryId;
  if ((input.buildServerId !== undefined || input.buildRegistryId !== undefined) && buildServerId) {
    if (!buildRegistryId) {
      const field =
        input.buildRegistryId === null && !input.buildServerId ? "buildRegistryId" : "buildServerId";
      throw badRequest(
        `${field}: a build server pushes the image it builds to the application's build registry, which the application's server pulls it from: set buildRegistryId with buildServerId (or clear buildServerId to build where the application runs)`,
        { fields: [field] },
      );
    }
  }
  if (input.buildServerId) {
    const server = await ctx.db
      .selectFrom("servers")
      .select(["serverType", "name"])
      .where("serverId", "=", input.buildServerId)
      .where("organizationId", "=", organizationId)
      .executeTakeFirst();
    if (server && server.serverType !== "build") {
      throw badRequest(
        `buildServerId: the server ${server.name} is a ${server.serverType} server; a build server has serverType build`,
        { fields: ["buildServerId"] },
      );
    }
  }
  const field =
    input.buildArchitecture !== undefined && input.buildArchitecture !== "host"
      ? "buildArchitecture"
      : input.buildxBuilder
        ? "buildxBuilder"
        : undefined;
  if (!field) return;
  const builder = input.buildServerId ?? application.buildServerId ?? application.serverId;
  const serverId = await agentServerId(ctx, organizationId, builder);
  const validation = await callAgent(serverId, () => ctx.agents.client.validateServer(serverId, 15_000));
  if (!validation.buildx?.enabled) {
    throw badRequest(
      `${field}: the server that builds this application has no docker buildx, which multi-architecture builds need: install the docker-buildx plugin there, or keep buildArchitecture host and no buildxBuilder`,
      { fields: [field] },
    );
  }
  throw badRequest(
    `${field}: multi-architecture builds through buildx are not supported yet: keep buildArchitecture host and no buildxBuilder`,
    { fields: [field] },
  );
}
