/**
 * The save-time rules of the Swarm fields that reach beyond the service itself (issue 27):
 * endpointSpecSwarm.Ports take host ports through the same claims as port.create (reserved: 400,
 * taken: 409); networkSwarm and networkIds may name the platform network and networks the
 * platform made for the organization (never another `platform-` name: 400), and the agent joins
 * only networks carrying the organization's labels; detachDokployNetwork leaves the platform
 * network, which the proxy reaches services through, so it is refused (400) for an application
 * with domains, and domain.create is refused for a detached application.
 */
import { RESERVED_NAME_PREFIX } from "@platform/names";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import { PLATFORM_NETWORK } from "../deployments/service-spec.ts";
import { badRequest } from "../errors.ts";
import { checkEndpointPorts, type HostPortClaim } from "./host-ports.ts";

export interface SwarmInput {
  endpointSpecSwarm?: { Ports?: { PublishedPort?: number; Protocol?: string }[] } | null;
  networkSwarm?: { Target?: string }[] | null;
  networkIds?: readonly string[];
  detachDokployNetwork?: boolean;
}

const invalid = (field: string, message: string) =>
  badRequest(`Invalid input: ${field}: ${message}`, { fields: [field] });

/** Refuses `platform-` networks other than the platform network (they are the platform's own). */
function checkNetworkNames(input: SwarmInput): void {
  const named: [string, string | undefined][] = [
    ...(input.networkSwarm ?? []).map(
      (network) => ["networkSwarm", network.Target] as [string, string | undefined],
    ),
    ...(input.networkIds ?? []).map((name) => ["networkIds", name] as [string, string]),
  ];
  for (const [field, name] of named) {
    if (name && name !== PLATFORM_NETWORK && name.toLowerCase().startsWith(RESERVED_NAME_PREFIX)) {
      throw invalid(field, `${name} is one of the platform's networks`);
    }
  }
}

/** True when the application has a domain (the proxy routes it over the platform network). */
export async function hasDomains(db: Db, applicationId: string): Promise<boolean> {
  const domain = await db
    .selectFrom("domains")
    .select("domainId")
    .where("applicationId", "=", applicationId)
    .limit(1)
    .executeTakeFirst();
  return domain !== undefined;
}

/** The checks above for an update of `service`; fields left out are not checked. */
export async function checkSwarmInput(
  ctx: ServiceContext,
  service: { serverId: string | null; except: HostPortClaim["except"] },
  input: SwarmInput,
): Promise<void> {
  checkNetworkNames(input);
  const applicationId = service.except.applicationId;
  if (input.detachDokployNetwork === true && applicationId && (await hasDomains(ctx.db, applicationId))) {
    throw invalid(
      "detachDokployNetwork",
      `the application has domains, which the proxy reaches over ${PLATFORM_NETWORK}: remove them first`,
    );
  }
  if (input.endpointSpecSwarm) await checkEndpointPorts(ctx, service, input.endpointSpecSwarm);
}
