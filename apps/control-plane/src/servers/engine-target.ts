/**
 * The caller's view of a server's Docker engine (docker-objects/, swarm/): the agent to ask, the
 * scope the agent filters by (the caller's organization's objects; the unlabelled ones too for
 * its owners and admins; the platform's own never) and, for a member restricted to some
 * services, which of them it sees. A server of another organization is a 404.
 */
import type { ContainerScope } from "@platform/agent-protocol";
import { RESOURCE_LABEL } from "@platform/ownership";
import type { Caller, ServiceContext } from "../context.ts";
import { requireFeature, visibleServiceIds } from "../projects/permissions.ts";
import { agentServerId } from "./repository.ts";

export interface EngineTarget {
  agentServerId: string;
  scope: ContainerScope;
  /** The services whose objects the caller sees; null: every one of its organization. */
  visibleServices: ReadonlySet<string> | null;
}

export async function resolveEngineTarget(
  ctx: ServiceContext,
  caller: Caller,
  serverId?: string,
): Promise<EngineTarget> {
  requireFeature(caller, "docker");
  const agent = await agentServerId(ctx, caller.organizationId, serverId);
  return {
    agentServerId: agent,
    // agentServerId answered, so the server is the caller's organization's.
    scope: { organizationId: caller.organizationId, includeUnmanaged: caller.role !== "member" },
    visibleServices: await visibleServiceIds(ctx.db, caller),
  };
}

/** A restricted member sees an object only when it is labelled for one of its granted services. */
export function grantedTo(labels: Record<string, string> | null | undefined, target: EngineTarget): boolean {
  if (target.visibleServices === null) return true;
  const serviceId = labels?.[RESOURCE_LABEL]?.split(":")[1];
  return serviceId !== undefined && target.visibleServices.has(serviceId);
}
