/**
 * Checks of a custom certificate before it is stored and handed to Traefik: the certificate is
 * PEM X.509, the key a PEM private key, and the key belongs to the certificate (Traefik would
 * otherwise refuse the pair and serve its default certificate).
 */
import { createPrivateKey, X509Certificate } from "node:crypto";

const MAX_PEM_LENGTH = 64 * 1024;

/** Why the PEM certificate cannot be used, or undefined. */
export function certificateProblem(pem: string): string | undefined {
  if (pem.length > MAX_PEM_LENGTH) return `must be at most ${MAX_PEM_LENGTH} characters`;
  if (!pem.includes("-----BEGIN CERTIFICATE-----"))
    return "must be a PEM certificate (-----BEGIN CERTIFICATE-----)";
  try {
    new X509Certificate(pem);
    return undefined;
  } catch {
    return "is not a readable PEM X.509 certificate";
  }
}

/** Why the PEM private key cannot be used, or undefined. */
export function privateKeyProblem(pem: string): string | undefined {
  if (pem.length > MAX_PEM_LENGTH) return `must be at most ${MAX_PEM_LENGTH} characters`;
  if (!/-----BEGIN (?:RSA |EC )?PRIVATE KEY-----/.test(pem)) {
    return "must be an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)";
  }
  try {
    createPrivateKey(pem);
    return undefined;
  } catch {
    return "is not a readable PEM private key";
  }
}

/** True when `keyPem` is the private key of the (first) certificate of `certificatePem`. */
export function keyMatchesCertificate(certificatePem: string, keyPem: string): boolean {
  try {
    return new X509Certificate(certificatePem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** What a stored certificate shows: when it expires and the hosts it covers. */
export interface CertificateReading {
  /** The leaf's notAfter as an ISO timestamp. */
  expiresAt: string;
  /** DNS names of the leaf's subjectAltName (lower case, `*.x` wildcards kept), else its CN. */
  hosts: string[];
}

export type CertificatePairResult =
  | { ok: true; reading: CertificateReading }
  | { ok: false; field: "certificateData" | "privateKey"; message: string };

/**
 * Checks a certificate chain (leaf first, then the certificates that issued it, in order) and
 * its private key, and reads the leaf's expiry and hosts. Expired certificates are refused:
 * Traefik would serve them and every client would reject them.
 */
export function readCertificatePair(
  chainPem: string,
  keyPem: string,
  now = new Date(),
): CertificatePairResult {
  const refuse = (field: "certificateData" | "privateKey", message: string) =>
    ({ ok: false, field, message }) as const;
  const shapeProblem = certificateProblem(chainPem);
  if (shapeProblem) return refuse("certificateData", shapeProblem);
  const blocks = chainPem.match(PEM_CERTIFICATE) ?? [];
  const chain: X509Certificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      chain.push(new X509Certificate(block));
    } catch {
      return refuse(
        "certificateData",
        `certificate ${index + 1} of the chain is not a readable X.509 certificate`,
      );
    }
  }
  for (let index = 0; index + 1 < chain.length; index++) {
    const [child, issuer] = [chain[index]!, chain[index + 1]!];
    if (!child.checkIssued(issuer) || !child.verify(issuer.publicKey)) {
      return refuse(
        "certificateData",
        `certificate ${index + 2} of the chain did not issue certificate ${index + 1} (the leaf comes first, then its issuers in order)`,
      );
    }
  }
  const leaf = chain[0]!;
  const keyProblem = privateKeyProblem(keyPem);
  if (keyProblem) return refuse("privateKey", keyProblem);
  if (!keyMatchesCertificate(chainPem, keyPem)) {
    return refuse("privateKey", "is not the private key of the (first) certificate");
  }
  const expiresAt = new Date(leaf.validTo);
  if (Number.isNaN(expiresAt.getTime()))
    return refuse("certificateData", "has no readable expiry (notAfter)");
  if (expiresAt.getTime() <= now.getTime()) {
    return refuse("certificateData", `expired on ${expiresAt.toISOString()}`);
  }
  const hosts = certificateHosts(leaf);
  if (hosts.length === 0) {
    return refuse("certificateData", "names no host (no DNS subjectAltName and no common name)");
  }
  return { ok: true, reading: { expiresAt: expiresAt.toISOString(), hosts } };
}

/** The DNS names a certificate covers; the common name only when it has no DNS subjectAltName (as Traefik reads it). */
export function certificateHosts(certificate: X509Certificate): string[] {
  const names = (certificate.subjectAltName ?? "")
    .split(/,\s*/)
    .filter((entry) => entry.startsWith("DNS:"))
    .map((entry) => entry.slice("DNS:".length).replace(/^"|"$/g, "").toLowerCase());
  if (names.length > 0) return [...new Set(names)];
  const commonName = /(?:^|\n)CN=([^\n]+)/.exec(certificate.subject)?.[1];
  return commonName ? [commonName.toLowerCase()] : [];
}

/** Whether a certificate for `hosts` covers `host`: equal, or a `*.parent` wildcard for one label under parent. */
export function certificateCovers(hosts: string[], host: string): boolean {
  const wanted = host.toLowerCase();
  return hosts.some((name) => {
    if (name === wanted) return true;
    if (!name.startsWith("*.")) return false;
    const parent = name.slice(1); // ".example.com"
    const label = wanted.slice(0, wanted.length - parent.length);
    return wanted.endsWith(parent) && label.length > 0 && !label.includes(".") && label !== "*";
  });
}
