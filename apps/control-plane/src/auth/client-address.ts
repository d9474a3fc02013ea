/**
 * The address a request comes from: the TCP peer, never a header, unless the peer is one of
 * the operator's trusted proxies (PLATFORM_TRUSTED_PROXIES): then the nearest address in
 * X-Forwarded-For that is not itself a trusted proxy. Login throttling counts per address.
 */
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import type { Context } from "hono";

const lists = new WeakMap<readonly string[], BlockList>();

/** The configured entries ("10.0.0.0/8", "192.0.2.7", validated by config.ts) as a BlockList. */
function trustedProxyList(entries: readonly string[]): BlockList {
  const cached = lists.get(entries);
  if (cached) return cached;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split("/") as [string, string | undefined];
    const type = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  lists.set(entries, list);
  return list;
}

/** A configuration entry: an IPv4/IPv6 address or CIDR. */
export function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, extra] = entry.split("/");
  const version = isIP(address ?? "");
  if (version === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits <= (version === 4 ? 32 : 128);
}

function contains(list: BlockList, address: string): boolean {
  return list.check(address, isIP(address) === 6 ? "ipv6" : "ipv4");
}

/** ::ffff:192.0.2.1 is the IPv4 address it carries. */
function unmapped(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

export function clientAddress(c: Context, trustedProxies: readonly string[]): string | null {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const peer = incoming?.socket?.remoteAddress;
  if (!peer) return null;
  let address = unmapped(peer);
  if (trustedProxies.length === 0) return address;
  const trusted = trustedProxyList(trustedProxies);
  if (!contains(trusted, address)) return address;
  const forwarded = (c.req.header("x-forwarded-for") ?? "")
    .split(",")
    .map((part) => unmapped(part.trim()))
    .reverse();
  for (const hop of forwarded) {
    if (isIP(hop) === 0) break;
    address = hop;
    if (!contains(trusted, hop)) break;
  }
  return address;
}

/** Whether the TCP peer is one of the operator's trusted proxies (its forwarded headers count). */
export function fromTrustedProxy(c: Context, trustedProxies: readonly string[]): boolean {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const peer = incoming?.socket?.remoteAddress;
  if (!peer || trustedProxies.length === 0) return false;
  return contains(trustedProxyList(trustedProxies), unmapped(peer));
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/**
 * Whether the request comes from this machine itself: its TCP peer is a loopback address and
 * not a trusted proxy (a request a proxy forwards is another client's, whatever its
 * X-Forwarded-For says). An in-process request (no HTTP message at all) is this process's own;
 * an HTTP request whose peer is unknown (its socket already closed) is not.
 */
export function fromLoopback(c: Context, trustedProxies: readonly string[]): boolean {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) return true;
  const peer = incoming.socket?.remoteAddress;
  if (!peer) return false;
  return contains(LOOPBACK, unmapped(peer)) && !fromTrustedProxy(c, trustedProxies);
}
