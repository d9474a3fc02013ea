/**
 * mounts.allNamedByApplicationId (Dokploy's): the named volumes Docker mounted into the
 * application's running container, as Docker's inspect data lists them (`Mounts` of type volume
 * with a source). The container is the first running task of the application's Swarm service on
 * its server, asked through the server's agent, scoped to the organization; an application with
 * no running container has none.
 */
import { ORGANIZATION_LABEL, RESOURCE_LABEL, resourceLabel } from "@platform/ownership";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { agentServerId } from "../servers/repository.ts";

export const dockerMountSchema = z.object({
  Type: z.string(),
  Name: z.string(),
  Source: z.string(),
  Destination: z.string(),
  Driver: z.string(),
  Mode: z.string(),
  RW: z.boolean(),
  Propagation: z.string(),
});

type DockerMount = z.infer<typeof dockerMountSchema>;

export async function namedVolumesOf(
  ctx: ServiceContext,
  application: Pick<Application, "applicationId" | "appName" | "serverId">,
  organizationId: string,
): Promise<DockerMount[]> {
  const serverId = await agentServerId(ctx, organizationId, application.serverId);
  const client = ctx.agents.client;
  const containers = await callAgent(
    serverId,
    () => client.listContainers(serverId, { swarmServiceName: application.appName }),
    ctx.logger,
  );
  const running = containers.find(
    (container) =>
      container.state === "running" &&
      container.labels[ORGANIZATION_LABEL] === organizationId &&
      container.labels[RESOURCE_LABEL] === resourceLabel("application", application.applicationId),
  );
  if (!running) return [];
  const inspected = await callAgent(
    serverId,
    () => client.inspectContainer(serverId, running.id, { organizationId, includeUnmanaged: false }),
    ctx.logger,
  );
  const mounts =
    (JSON.parse(inspected.inspectJson) as { Mounts?: Partial<DockerMount>[] | null }).Mounts ?? [];
  return mounts
    .filter((mount) => mount.Type === "volume" && mount.Source)
    .map((mount) => ({
      Type: "volume",
      Name: mount.Name ?? "",
      Source: mount.Source ?? "",
      Destination: mount.Destination ?? "",
      Driver: mount.Driver ?? "",
      Mode: mount.Mode ?? "",
      RW: mount.RW ?? false,
      Propagation: mount.Propagation ?? "",
    }));
}
