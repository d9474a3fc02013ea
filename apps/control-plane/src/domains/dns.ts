/**
 * domain.validateDomain: whether a host's DNS records point at a server. The lookup goes
 * through a replaceable resolver so tests never ask real DNS.
 */
import { lookup } from "node:dns/promises";

/** The addresses `host` resolves to (IPv4 and IPv6); throws when it does not resolve. */
export type DnsResolver = (host: string) => Promise<string[]>;

const systemResolver: DnsResolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

let resolver: DnsResolver = systemResolver;

/** Replaces the resolver (tests); `undefined` puts the system resolver back. */
export function setDnsResolver(replacement: DnsResolver | undefined): void {
  resolver = replacement ?? systemResolver;
}

export interface DomainValidation {
  isValid: boolean;
  /** The addresses found, comma-separated ("" when none). */
  resolvedIp: string;
  error?: string;
}

/**
 * Resolves `host`; valid when it resolves and, with `serverIp`, when one of its addresses is
 * the server's (Dokploy's answer shape).
 */
export async function validateDomainDns(host: string, serverIp?: string): Promise<DomainValidation> {
  let addresses: string[];
  try {
    addresses = await resolver(host);
  } catch (error) {
    const code = (error as { code?: string }).code;
    return {
      isValid: false,
      resolvedIp: "",
      error: code === "ENOTFOUND" || code === "ENODATA" ? "Domain not found" : "The DNS lookup failed",
    };
  }
  const resolvedIp = addresses.join(",");
  if (addresses.length === 0) return { isValid: false, resolvedIp, error: "Domain not found" };
  if (serverIp && !addresses.includes(serverIp)) {
    return {
      isValid: false,
      resolvedIp,
      error: `Domain resolves to ${resolvedIp} but should point to ${serverIp}`,
    };
  }
  return { isValid: true, resolvedIp };
}
