/**
 * Which containers a caller may see and act on through a server's agent (docker.*, uploads):
 * the server must be the caller's organization's, and a container must carry its organization's
 * label (unmanaged ones for owners and admins only, the platform's own never; a member
 * restricted to some services only theirs). Anything else is a 404, as unknown.
 */
import type { Container, Init, ListContainersCommand } from "@platform/agent-protocol";
import { isPlatformInternal, ORGANIZATION_LABEL, RESOURCE_LABEL } from "@platform/ownership";
import type { Caller, ServiceContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { requireFeature, visibleServiceIds } from "../projects/permissions.ts";
import { agentServerId } from "../servers/repository.ts";
import { toTaskContainer } from "./container-views.ts";
import { callAgent } from "./errors.ts";
import { LOCAL_SERVER_ID } from "./hub.ts";

export interface Target {
  /** The server whose agent runs the command (LOCAL_SERVER_ID for this machine). */
  agentServerId: string;
  /** The serverId as the caller gave it; null for this machine. */
  serverId: string | null;
  /** Whether the caller sees containers the platform does not manage on this server. */
  seesUnmanaged: boolean;
  /** The services whose containers the caller sees; null: every service of its organization. */
  visibleServices: ReadonlySet<string> | null;
}

/**
 * The agent to ask for `serverId`, checking that the server belongs to the caller's
 * organization (agentServerId: this machine belongs to the instance organization).
 */
export async function resolveTarget(ctx: ServiceContext, caller: Caller, serverId?: string): Promise<Target> {
  requireFeature(caller, "docker");
  const agent = await agentServerId(ctx, caller.organizationId, serverId);
  return {
    agentServerId: agent,
    serverId: agent === LOCAL_SERVER_ID ? null : agent,
    // agentServerId answered, so the server is the caller's organization's.
    seesUnmanaged: caller.role !== "member",
    visibleServices: await visibleServiceIds(ctx.db, caller),
  };
}

/** Whether the caller may see and act on a container with these labels and names. */
export function isVisible(
  container: { labels: Record<string, string>; names: string[] },
  caller: Caller,
  target: Target,
) {
  if (isPlatformInternal(container.labels, container.names)) return false;
  const organization = container.labels[ORGANIZATION_LABEL];
  if (organization !== undefined) {
    if (organization !== caller.organizationId) return false;
    if (target.visibleServices === null) return true;
    // platform.resource is `<kind>:<serviceId>`; a container of no service is not a granted one.
    const serviceId = container.labels[RESOURCE_LABEL]?.split(":")[1];
    return serviceId !== undefined && target.visibleServices.has(serviceId);
  }
  return target.seesUnmanaged;
}

/** The container's inspect data when the caller may see it; a 404 otherwise (never disclosed). */
export async function visibleContainer(
  ctx: ServiceContext,
  caller: Caller,
  target: Target,
  containerId: string,
): Promise<Record<string, unknown> & { Id: string }> {
  const config = await callAgent(
    target.agentServerId,
    () =>
      ctx.agents.client.inspectContainer(target.agentServerId, containerId, {
        organizationId: caller.organizationId,
        includeUnmanaged: target.seesUnmanaged,
      }),
    ctx.logger,
  );
  const inspect = JSON.parse(config.inspectJson) as Record<string, unknown> & {
    Id: string;
    Name?: string;
    Config?: { Labels?: Record<string, string> | null };
  };
  const visible = isVisible({ labels: inspect.Config?.Labels ?? {}, names: [config.name] }, caller, target);
  if (!visible) throw notFound("Container");
  return inspect;
}

export async function listContainers(
  ctx: ServiceContext,
  caller: Caller,
  serverId: string | undefined,
  filter: Init<ListContainersCommand>,
) {
  const target = await resolveTarget(ctx, caller, serverId);
  const containers = await callAgent(
    target.agentServerId,
    () => ctx.agents.client.listContainers(target.agentServerId, filter),
    ctx.logger,
  );
  return {
    target,
    containers: containers.filter((container: Container) => isVisible(container, caller, target)),
  };
}

/** Containers of a Swarm service or stack on the server, with the server's hostname as node. */
export async function taskContainers(
  ctx: ServiceContext,
  caller: Caller,
  serverId: string | undefined,
  filter: Init<ListContainersCommand>,
) {
  const target = await resolveTarget(ctx, caller, serverId);
  const { client } = ctx.agents;
  const [containers, ping] = await callAgent(
    target.agentServerId,
    () =>
      Promise.all([client.listContainers(target.agentServerId, filter), client.ping(target.agentServerId)]),
    ctx.logger,
  );
  return containers
    .filter((container) => isVisible(container, caller, target))
    .map((container) => toTaskContainer(container, ping.hostname));
}

/** The agent to ask and the checked full id of a container the caller may act on (404 otherwise). */
export async function checkedContainer(
  ctx: ServiceContext,
  caller: Caller,
  input: { containerId: string; serverId?: string },
) {
  const target = await resolveTarget(ctx, caller, input.serverId);
  const { Id } = await visibleContainer(ctx, caller, target, input.containerId);
  const agent = {
    ctx,
    agentServerId: target.agentServerId,
    scope: { organizationId: caller.organizationId, includeUnmanaged: target.seesUnmanaged },
  };
  return { agent, containerId: Id };
}
