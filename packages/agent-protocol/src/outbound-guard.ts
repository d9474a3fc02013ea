/**
 * The outbound guard: the one check before the platform reaches a host a user named (Git
 * servers, registries, monitoring callbacks, later notification receivers), shared by the
 * control plane and the agents. A host name is resolved and every
 * address it resolves to is checked, so a name cannot smuggle in what a literal address could
 * not. Link-local, cloud metadata, unspecified, multicast and reserved addresses are always
 * refused; loopback and private ranges only when the operator's allow list
 * (PLATFORM_OUTBOUND_ALLOW, comma-separated CIDRs) covers them.
 *
 * @example
 * const allow = parseAllowList("127.0.0.0/8");           // from the configuration
 * await checkOutboundHost("gitea.lan", allow.list!);     // throws OutboundRefusedError
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

type Family = "ipv4" | "ipv6";
interface Range {
  network: string;
  prefix: number;
  family: Family;
}

function blockListOf(ranges: readonly Range[]): BlockList {
  const list = new BlockList();
  for (const { network, prefix, family } of ranges) list.addSubnet(network, prefix, family);
  return list;
}

/** Never reachable, whatever the allow list says (IPv4-mapped IPv6 forms are matched too). */
const ALWAYS_REFUSED = blockListOf([
  { network: "169.254.0.0", prefix: 16, family: "ipv4" }, // link-local, cloud metadata 169.254.169.254
  { network: "100.100.100.200", prefix: 32, family: "ipv4" }, // Alibaba Cloud metadata
  { network: "0.0.0.0", prefix: 8, family: "ipv4" }, // "this network", 0.0.0.0 reaches this machine
  { network: "224.0.0.0", prefix: 4, family: "ipv4" }, // multicast
  { network: "240.0.0.0", prefix: 4, family: "ipv4" }, // reserved, broadcast
  { network: "::", prefix: 128, family: "ipv6" },
  { network: "fe80::", prefix: 10, family: "ipv6" }, // link-local
  { network: "fd00:ec2::254", prefix: 128, family: "ipv6" }, // AWS metadata over IPv6
  { network: "ff00::", prefix: 8, family: "ipv6" }, // multicast
]);

const LOOPBACK = blockListOf([
  { network: "127.0.0.0", prefix: 8, family: "ipv4" },
  { network: "::1", prefix: 128, family: "ipv6" },
]);

const PRIVATE = blockListOf([
  { network: "10.0.0.0", prefix: 8, family: "ipv4" },
  { network: "172.16.0.0", prefix: 12, family: "ipv4" },
  { network: "192.168.0.0", prefix: 16, family: "ipv4" },
  { network: "100.64.0.0", prefix: 10, family: "ipv4" }, // carrier-grade NAT
  { network: "fc00::", prefix: 7, family: "ipv6" }, // unique local
]);

/** The operator's allow list: the CIDRs loopback or private targets must fall in. */
export interface AllowList {
  /** The CIDRs as given, normalized (`127.0.0.0/8`). */
  readonly cidrs: readonly string[];
  readonly blocks: BlockList;
}

export const EMPTY_ALLOW_LIST: AllowList = { cidrs: [], blocks: new BlockList() };

/** Parses `127.0.0.0/8, 10.1.0.0/16, ::1` (a bare address is one host); names the bad entry. */
export function parseAllowList(text: string): { list: AllowList } | { problem: string } {
  const cidrs: string[] = [];
  const blocks = new BlockList();
  for (const entry of text.split(",").map((part) => part.trim())) {
    if (entry === "") continue;
    const [network = "", prefixText, ...rest] = entry.split("/");
    const family = isIP(network);
    const maximum = family === 6 ? 128 : 32;
    const prefix = prefixText === undefined ? maximum : Number(prefixText);
    if (
      family === 0 ||
      rest.length > 0 ||
      (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) ||
      prefix > maximum
    ) {
      return { problem: `${JSON.stringify(entry)} is not an IP address or CIDR (like 127.0.0.0/8)` };
    }
    blocks.addSubnet(network, prefix, family === 6 ? "ipv6" : "ipv4");
    cidrs.push(`${network}/${prefix}`);
  }
  return { list: { cidrs, blocks } };
}

/** Why the platform may not connect to the IP address `address`, or null when it may. */
export function outboundAddressProblem(address: string, allow: AllowList): string | null {
  const bare = address.replace(/^\[|\]$/g, "");
  const version = isIP(bare);
  if (version === 0) return "is not an IP address";
  const family: Family = version === 6 ? "ipv6" : "ipv4";
  if (ALWAYS_REFUSED.check(bare, family)) {
    return "is a link-local, metadata, unspecified, multicast or reserved address";
  }
  const allowed = allow.blocks.check(bare, family);
  if (LOOPBACK.check(bare, family) && !allowed) {
    return "is a loopback address (this machine); allow it with PLATFORM_OUTBOUND_ALLOW";
  }
  if (PRIVATE.check(bare, family) && !allowed) {
    return "is a private address; allow its range with PLATFORM_OUTBOUND_ALLOW";
  }
  return null;
}

/** Looks up every address of a host name; the real one asks the system resolver (node's dns). */
export interface HostResolver {
  resolve(hostname: string): Promise<string[]>;
}

export const systemResolver: HostResolver = {
  async resolve(hostname) {
    return (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
  },
};

/**
 * A refused outbound target; the message reads "<host> <why>" (the why names the address a
 * name resolved to); `unresolved` when the name has no address at all.
 */
export class OutboundRefusedError extends Error {
  constructor(
    readonly host: string,
    message: string,
    readonly unresolved = false,
  ) {
    super(message);
    this.name = "OutboundRefusedError";
  }
}

/**
 * The host as a connection would use it: lower case, without brackets or a final dot, numeric
 * IPv4 forms (`0x7f.1`, `2130706433`) written out, as WHATWG URLs and the C library read them.
 */
export function normalizeHost(host: string): string | null {
  const trimmed = host.trim();
  if (trimmed === "" || /[\s/@?#\\]/.test(trimmed)) return null;
  try {
    const bracketed = isIP(trimmed) === 6 ? `[${trimmed}]` : trimmed;
    const hostname = new URL(`http://${bracketed}/`).hostname;
    return hostname
      .replace(/^\[|\]$/g, "")
      .replace(/\.$/, "")
      .toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Checks `host` (a name or an address, without port) before a connection: a name is resolved
 * and each of its addresses must pass. `localhost` and `*.localhost` are loopback without asking
 * DNS. Answers the addresses checked; throws OutboundRefusedError.
 */
export async function checkOutboundHost(
  host: string,
  allow: AllowList,
  resolver: HostResolver = systemResolver,
): Promise<string[]> {
  const hostname = normalizeHost(host);
  if (hostname === null) throw new OutboundRefusedError(host, `${host} is not a valid host`);
  let addresses: string[];
  if (isIP(hostname) !== 0) {
    addresses = [hostname];
  } else if (hostname === "localhost" || hostname.endsWith(".localhost")) {
    addresses = ["127.0.0.1", "::1"];
  } else {
    try {
      addresses = await resolver.resolve(hostname);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) {
      throw new OutboundRefusedError(hostname, `${hostname} does not resolve`, true);
    }
  }
  for (const address of addresses) {
    const problem = outboundAddressProblem(address, allow);
    if (problem) {
      const subject = address === hostname ? hostname : `${hostname} resolves to ${address}, which`;
      throw new OutboundRefusedError(hostname, `${subject} ${problem}`);
    }
  }
  return addresses;
}
