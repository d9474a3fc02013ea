/**
 * compose.loadMountsByService (Dokploy's getComposeContainer, then the container's `Mounts` of
 * type volume with a source): the named volumes Docker mounted into a running container of one
 * service of the stack. The container is found through the stack's server's agent among the
 * stack's own (Compose project or Swarm stack named after the appName, labelled for the stack's
 * organization and resource) and inspected scoped to that organization; a service with no running
 * container has none.
 */
import { ORGANIZATION_LABEL, RESOURCE_LABEL } from "@platform/ownership";
import { callAgent } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";
import type { dockerMountSchema } from "../mounts/named-volumes.ts";
import { agentServerId } from "../servers/repository.ts";
import { ownerOfCompose } from "./deploy.ts";
import type { LocatedCompose } from "./repository.ts";

type DockerMount = import("zod").infer<typeof dockerMountSchema>;

const COMPOSE_SERVICE_LABEL = "com.docker.compose.service";
const SWARM_SERVICE_LABEL = "com.docker.swarm.service.name";

export async function composeServiceVolumes(
  ctx: ServiceContext,
  row: LocatedCompose,
  serviceName: string,
): Promise<DockerMount[]> {
  const serverId = await agentServerId(ctx, row.organizationId, row.serverId);
  const client = ctx.agents.client;
  const owner = ownerOfCompose(row);
  const stack = row.composeType === "stack";
  const containers = await callAgent(
    serverId,
    () =>
      client.listContainers(
        serverId,
        stack ? { stackNamespace: row.appName } : { composeProject: row.appName },
      ),
    ctx.logger,
  );
  const running = containers.find(
    (container) =>
      container.state === "running" &&
      container.labels[ORGANIZATION_LABEL] === owner.organizationId &&
      container.labels[RESOURCE_LABEL] === owner.resource &&
      (stack
        ? container.labels[SWARM_SERVICE_LABEL] === `${row.appName}_${serviceName}`
        : container.labels[COMPOSE_SERVICE_LABEL] === serviceName),
  );
  if (!running) return [];
  const inspected = await callAgent(
    serverId,
    () =>
      client.inspectContainer(serverId, running.id, {
        organizationId: owner.organizationId,
        includeUnmanaged: false,
      }),
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
