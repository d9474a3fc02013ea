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
