/** Identifiers and random tokens. */
import { createHash, randomBytes } from "node:crypto";

/** A 21-character URL-safe random id (126 bits), the shape Dokploy users know from nanoid. */
export function newId(): string {
  return randomBytes(16).toString("base64url").slice(0, 21);
}

/** A random secret token of `bytes` bytes, base64url. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}
