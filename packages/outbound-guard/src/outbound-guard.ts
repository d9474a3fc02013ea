/**
 * The outbound guard: the one check before the platform reaches a host a user named (Git
 * servers, registries, monitoring callbacks, notification receivers), shared by the control
 * plane and the agents. A host name is resolved and every address it resolves to is checked, so
 * a name cannot smuggle in what a literal address could not.
 *
 * Each address is classified by SPECIAL_RANGES, IANA's IPv4 and IPv6 special-purpose address
 * registries: only globally reachable addresses pass. Link-local, cloud metadata, unspecified,
 * multicast and reserved addresses are always refused; loopback, private and the other ranges
 * that are not globally reachable (documentation, benchmarking, …) only pass where the
 * operator's allow list (PLATFORM_OUTBOUND_ALLOW, comma-separated CIDRs) covers the address.
 * An IPv6 address that carries an IPv4 address (IPv4-mapped or -compatible, NAT64, 6to4,
 * Teredo) is judged by the IPv4 address it carries, so `64:ff9b::7f00:1` is loopback.
 *
 * @example
 * const allow = parseAllowList("127.0.0.0/8");           // from the configuration
 * await checkOutboundHost("gitea.lan", allow.list!);     // throws OutboundRefusedError
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/**
 * What the guard does with an address of a range: `global` passes; `loopback`, `private` and
 * `special` (not globally reachable) pass only inside the allow list; `never` is always refused.
 * `carries` ranges hold an IPv4 address whose own verdict wins unless it is `global`, in which
 * case the range's verdict applies.
 */
type Verdict = "global" | "loopback" | "private" | "special" | "never";

interface SpecialRange {
  cidr: string;
  /** The name in IANA's registry (or what the range is, for the few that are not in it). */
  name: string;
  verdict: Verdict;
  /** The IPv4 address an address of this range carries. */
  carries?: (value: bigint) => bigint;
}

const lowBits = (value: bigint) => value & 0xffffffffn;

/**
 * IANA's special-purpose address registries (iana-ipv4-special-registry,
 * iana-ipv6-special-registry), their "Globally Reachable" column as the verdict, plus multicast,
 * the IPv6 address space outside global unicast and the cloud metadata addresses. The most
 * specific range containing an address decides.
 */
const SPECIAL_RANGES: readonly SpecialRange[] = [
  { cidr: "0.0.0.0/0", name: "IPv4 unicast", verdict: "global" },
  { cidr: "0.0.0.0/8", name: "This network", verdict: "never" },
  { cidr: "10.0.0.0/8", name: "Private-Use", verdict: "private" },
  { cidr: "100.64.0.0/10", name: "Shared Address Space (carrier-grade NAT)", verdict: "private" },
  { cidr: "100.100.100.200/32", name: "Alibaba Cloud metadata", verdict: "never" },
  { cidr: "127.0.0.0/8", name: "Loopback", verdict: "loopback" },
  { cidr: "169.254.0.0/16", name: "Link Local (cloud metadata 169.254.169.254)", verdict: "never" },
  { cidr: "172.16.0.0/12", name: "Private-Use", verdict: "private" },
  { cidr: "192.0.0.0/24", name: "IETF Protocol Assignments", verdict: "special" },
  { cidr: "192.0.0.0/29", name: "IPv4 Service Continuity Prefix", verdict: "special" },
  { cidr: "192.0.0.8/32", name: "IPv4 dummy address", verdict: "special" },
  { cidr: "192.0.0.9/32", name: "Port Control Protocol Anycast", verdict: "global" },
  { cidr: "192.0.0.10/32", name: "Traversal Using Relays around NAT Anycast", verdict: "global" },
  { cidr: "192.0.0.170/32", name: "NAT64/DNS64 Discovery", verdict: "special" },
  { cidr: "192.0.0.171/32", name: "NAT64/DNS64 Discovery", verdict: "special" },
  { cidr: "192.0.2.0/24", name: "Documentation (TEST-NET-1)", verdict: "special" },
  { cidr: "192.31.196.0/24", name: "AS112-v4", verdict: "global" },
  { cidr: "192.52.193.0/24", name: "AMT", verdict: "global" },
  { cidr: "192.88.99.0/24", name: "Deprecated (6to4 Relay Anycast)", verdict: "special" },
  { cidr: "192.168.0.0/16", name: "Private-Use", verdict: "private" },
  { cidr: "192.175.48.0/24", name: "Direct Delegation AS112 Service", verdict: "global" },
  { cidr: "198.18.0.0/15", name: "Benchmarking", verdict: "special" },
  { cidr: "198.51.100.0/24", name: "Documentation (TEST-NET-2)", verdict: "special" },
  { cidr: "203.0.113.0/24", name: "Documentation (TEST-NET-3)", verdict: "special" },
  { cidr: "224.0.0.0/4", name: "Multicast", verdict: "never" },
  { cidr: "240.0.0.0/4", name: "Reserved", verdict: "never" },
  { cidr: "255.255.255.255/32", name: "Limited Broadcast", verdict: "never" },

  // Only 2000::/3 is allocated for global unicast; the rest of the IPv6 space is reserved.
  { cidr: "::/0", name: "Reserved by IETF (outside 2000::/3)", verdict: "special" },
  { cidr: "2000::/3", name: "Global Unicast", verdict: "global" },
  { cidr: "::/128", name: "Unspecified Address", verdict: "never" },
  { cidr: "::1/128", name: "Loopback Address", verdict: "loopback" },
  { cidr: "::/96", name: "IPv4-compatible (deprecated)", verdict: "special", carries: lowBits },
  { cidr: "::ffff:0:0/96", name: "IPv4-mapped Address", verdict: "global", carries: lowBits },
  { cidr: "64:ff9b::/96", name: "IPv4-IPv6 Translat.", verdict: "global", carries: lowBits },
  // RFC 8215 leaves the layout to the operator; a /96 under it (IPv4 last) is the usual one.
  { cidr: "64:ff9b:1::/48", name: "IPv4-IPv6 Translat. (local use)", verdict: "special", carries: lowBits },
  { cidr: "100::/64", name: "Discard-Only Address Block", verdict: "special" },
  { cidr: "100:0:0:1::/64", name: "Dummy IPv6 Prefix", verdict: "special" },
  { cidr: "2001::/23", name: "IETF Protocol Assignments", verdict: "special" },
  {
    cidr: "2001::/32",
    name: "TEREDO",
    verdict: "global",
    carries: (value) => lowBits(value) ^ 0xffffffffn, // the client's address, obfuscated
  },
  { cidr: "2001:1::1/128", name: "Port Control Protocol Anycast", verdict: "global" },
  { cidr: "2001:1::2/128", name: "Traversal Using Relays around NAT Anycast", verdict: "global" },
  { cidr: "2001:1::3/128", name: "DNS-SD Service Registration Protocol Anycast", verdict: "global" },
  { cidr: "2001:2::/48", name: "Benchmarking", verdict: "special" },
  { cidr: "2001:3::/32", name: "AMT", verdict: "global" },
  { cidr: "2001:4:112::/48", name: "AS112-v6", verdict: "global" },
  { cidr: "2001:10::/28", name: "Deprecated (previously ORCHID)", verdict: "special" },
  { cidr: "2001:20::/28", name: "ORCHIDv2", verdict: "global" },
  { cidr: "2001:30::/28", name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix", verdict: "global" },
  { cidr: "2001:db8::/32", name: "Documentation", verdict: "special" },
  { cidr: "2002::/16", name: "6to4", verdict: "global", carries: (value) => (value >> 80n) & 0xffffffffn },
  { cidr: "2620:4f:8000::/48", name: "Direct Delegation AS112 Service", verdict: "global" },
  { cidr: "3fff::/20", name: "Documentation", verdict: "special" },
  { cidr: "5f00::/16", name: "Segment Routing (SRv6) SIDs", verdict: "special" },
  { cidr: "fc00::/7", name: "Unique-Local", verdict: "private" },
  { cidr: "fd00:ec2::254/128", name: "AWS metadata over IPv6", verdict: "never" },
  { cidr: "fe80::/10", name: "Link-Local Unicast", verdict: "never" },
  { cidr: "fec0::/10", name: "Site-Local (deprecated)", verdict: "private" },
  { cidr: "ff00::/8", name: "Multicast", verdict: "never" },
];

/** An address checked by isIP as a number (32 bits for IPv4, 128 for IPv6). */
function addressValue(address: string, version: 4 | 6): bigint {
  if (version === 4) {
    return address.split(".").reduce((value, octet) => (value << 8n) | BigInt(octet), 0n);
  }
  // A dotted IPv4 tail (::ffff:127.0.0.1) is two more 16-bit groups.
  const text = address.replace(/\d+\.\d+\.\d+\.\d+$/, (ipv4) => {
    const value = Number(addressValue(ipv4, 4));
    return `${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  });
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const [head = "", tail] = text.split("::");
  const before = groups(head);
  const after = tail === undefined ? [] : groups(tail);
  const all = [...before, ...Array<string>(8 - before.length - after.length).fill("0"), ...after];
  return all.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

function ipv4Text(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
}

interface ParsedRange extends SpecialRange {
  version: 4 | 6;
  prefix: number;
  network: bigint;
}

const PARSED_RANGES: readonly ParsedRange[] = SPECIAL_RANGES.map((range) => {
  const [network = "", prefix = ""] = range.cidr.split("/");
  const version = isIP(network) as 4 | 6;
  return { ...range, version, prefix: Number(prefix), network: addressValue(network, version) };
});

/** The most specific special-purpose range holding the address. */
function rangeOf(value: bigint, version: 4 | 6): ParsedRange {
  const width = version === 4 ? 32 : 128;
  let best: ParsedRange | undefined;
  for (const range of PARSED_RANGES) {
    const shift = BigInt(width - range.prefix);
    if (range.version !== version || value >> shift !== range.network >> shift) continue;
    if (!best || range.prefix > best.prefix) best = range;
  }
  return best!; // 0.0.0.0/0 and ::/0 hold every address
}

/** The address without brackets or zone id (`fe80::1%eth0`), or null when it is not one. */
function bareAddress(address: string): { bare: string; version: 4 | 6 } | null {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const version = isIP(bare);
  return version === 0 ? null : { bare, version: version as 4 | 6 };
}

/**
 * The IPv4 address an address carries (`64:ff9b::7f00:1`, `::ffff:7f00:1` → 127.0.0.1; an IPv4
 * address carries itself), or null.
 */
export function carriedIPv4(address: string): string | null {
  const parsed = bareAddress(address);
  if (!parsed) return null;
  if (parsed.version === 4) return parsed.bare;
  const value = addressValue(parsed.bare, 6);
  const { carries } = rangeOf(value, 6);
  return carries ? ipv4Text(carries(value)) : null;
}

const VERDICT_TEXT: Record<Exclude<Verdict, "global">, (range: ParsedRange) => string> = {
  never: (range) =>
    `is a link-local, metadata, unspecified, multicast or reserved address (${range.name} ${range.cidr})`,
  loopback: () => "is a loopback address (this machine); allow it with PLATFORM_OUTBOUND_ALLOW",
  private: () => "is a private address; allow its range with PLATFORM_OUTBOUND_ALLOW",
  special: (range) =>
    `is a special-purpose address that is not globally reachable (${range.name} ${range.cidr}); allow its range with PLATFORM_OUTBOUND_ALLOW`,
};

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

/**
 * Why the platform may not connect to the IP address `address`, or null when it may. The allow
 * list is matched against the address as written: `64:ff9b::7f00:1` needs `64:ff9b::/96` there,
 * `127.0.0.0/8` does not cover it (it is not this machine's loopback but a translator's).
 */
export function outboundAddressProblem(address: string, allow: AllowList): string | null {
  const parsed = bareAddress(address);
  if (!parsed) return "is not an IP address";
  const { bare, version } = parsed;
  const value = addressValue(bare, version);
  const range = rangeOf(value, version);
  let verdictRange = range;
  let carrier = "";
  if (range.carries) {
    const ipv4 = range.carries(value);
    const inner = rangeOf(ipv4, 4);
    if (inner.verdict !== "global") {
      verdictRange = inner;
      // An IPv4-mapped address is its IPv4 address; the other forms are named.
      if (range.cidr !== "::ffff:0:0/96")
        carrier = `carries ${ipv4Text(ipv4)} (${range.name} ${range.cidr}), which `;
    }
  }
  const { verdict } = verdictRange;
  if (verdict === "global") return null;
  if (verdict !== "never" && allow.blocks.check(bare, version === 6 ? "ipv6" : "ipv4")) return null;
  return carrier + VERDICT_TEXT[verdict](verdictRange);
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
