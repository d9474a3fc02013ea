/**
 * The platform's own machines as outbound targets (issue 22 finding 4). The guard refuses
 * loopback and private ranges, but this machine's public addresses and the registered addresses
 * of the servers the instance manages are ordinary addresses to it: a tenant probing them
 * through a registry test or a metrics URL would learn which of their ports are open. So a
 * user-named target on one of these addresses is refused, except:
 * - where PLATFORM_OUTBOUND_ALLOW covers the address (the operator's word wins);
 * - on the ports anyone on the internet reaches anyway: the proxy's 80 and 443 and the control
 *   plane's own port (a registry or a Git server deployed behind the proxy on this machine);
 * - for the organization that alone owns the address: this machine's addresses belong to the
 *   instance organization, a server's address to the organization that registered it (when two
 *   organizations registered the same address, neither may probe it).
 */
import { networkInterfaces } from "node:os";
import type { ServiceContext } from "../context.ts";
import { instanceOrganizationId } from "../organizations/instance.ts";
import {
  carriedIPv4,
  checkOutboundHost,
  type HostResolver,
  OutboundRefusedError,
  systemResolver,
} from "./guard.ts";

/** Ports of this machine that answer everyone anyway: the proxy's entry points. */
const PUBLIC_PROXY_PORTS = [80, 443];

/** The bare addresses of this machine's interfaces (`fe80::1%eth0` without its zone). */
export function hostInterfaceAddresses(interfaces = networkInterfaces()): Set<string> {
  return new Set(
    Object.values(interfaces)
      .flatMap((list) => list ?? [])
      .map((entry) => entry.address.split("%")[0]!.toLowerCase()),
  );
}

/**
 * An IPv6 address carrying an IPv4 address (`::ffff:c000:202`, NAT64 `64:ff9b::c000:202`, 6to4…)
 * reaches the machine of that IPv4 address.
 */
const plain = (address: string) => carriedIPv4(address) ?? address.toLowerCase();

export interface UserTarget {
  /** A host name or address as the user wrote it (without port). */
  host: string;
  /** The port the connection would use. */
  port: number;
}

export interface OwnAddressOptions {
  resolver?: HostResolver;
  /** This machine's addresses; read from its interfaces by default. */
  interfaceAddresses?: Set<string>;
}

/**
 * Checks a target a user named for a probe (registry login test, metrics URL, callback): the
 * outbound guard first, then the own-address rule above. Throws OutboundRefusedError.
 */
export async function checkUserTarget(
  ctx: Pick<ServiceContext, "config" | "db">,
  organizationId: string,
  target: UserTarget,
  options: OwnAddressOptions = {},
): Promise<void> {
  const allow = ctx.config.outboundAllow;
  const addresses = await checkOutboundHost(target.host, allow, options.resolver ?? systemResolver);
  if ([...PUBLIC_PROXY_PORTS, ctx.config.port].includes(target.port)) return;
  const notAllowed = addresses
    .map(plain)
    .filter((address) => !allow.blocks.check(address, familyOf(address)));
  if (notAllowed.length === 0) return;
  const interfaces = options.interfaceAddresses ?? hostInterfaceAddresses();
  const servers = await ctx.db
    .selectFrom("servers")
    .select(["ipAddress", "organizationId"])
    .where("ipAddress", "in", notAllowed)
    .execute();
  const instance = interfaces.size > 0 ? await instanceOrganizationId(ctx.db) : null;
  for (const address of notAllowed) {
    const owners = new Set(
      servers.filter((server) => plain(server.ipAddress) === address).map((server) => server.organizationId),
    );
    if (interfaces.has(address)) owners.add(instance ?? "");
    if (owners.size === 0) continue;
    if (owners.size === 1 && owners.has(organizationId)) continue;
    const subject = address === target.host ? address : `${target.host} resolves to ${address}, which`;
    throw new OutboundRefusedError(
      target.host,
      `${subject} is an address of the platform's own machines; allow it with PLATFORM_OUTBOUND_ALLOW`,
    );
  }
}

const familyOf = (address: string) => (address.includes(":") ? "ipv6" : "ipv4");
