/**
 * APR1 (Apache MD5) password hashes, the scheme Traefik's basicAuth reads from `user:hash` lines.
 * The hash is made once, when a credential is saved; the configuration generator takes stored
 * hashes, so regenerating a configuration gives the same bytes.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import md5 from "apache-md5";

/** The 64 characters APR1 salts and hashes are written with. */
const APR1_ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SALT_LENGTH = 8;

/** `$apr1$<salt of 1 to 8 characters>$<22 characters>` */
export const APR1_HASH_PATTERN = /^\$apr1\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22}$/;

export function isApr1Hash(value: string): boolean {
  return APR1_HASH_PATTERN.test(value);
}

/** A fresh 8-character APR1 salt from the system's secure random source. */
export function generateApr1Salt(): string {
  return Array.from(randomBytes(SALT_LENGTH), (byte) => APR1_ALPHABET[byte % 64]).join("");
}

/**
 * The APR1 hash of `password`, with a fresh random salt unless `salt` (1 to 8 characters of the
 * APR1 alphabet) is given; the same password and salt always give the same hash.
 */
export function hashPassword(password: string, salt: string = generateApr1Salt()): string {
  if (!/^[./0-9A-Za-z]{1,8}$/.test(salt))
    throw new Error("an APR1 salt is 1 to 8 characters of [./0-9A-Za-z]");
  return md5(utf8Bytes(password), `$apr1$${salt}$`);
}

/**
 * apache-md5 reads each character of its input as one byte (Node's "ascii" encoding). Apache,
 * Traefik and browsers hash the UTF-8 bytes, so a non-ASCII password goes in as one character
 * per UTF-8 byte.
 */
function utf8Bytes(password: string): string {
  return Buffer.from(password, "utf8").toString("latin1");
}

/** True when `password` hashes to `hash` (an APR1 hash); compares in constant time. */
export function verifyPassword(password: string, hash: string): boolean {
  if (!isApr1Hash(hash)) return false;
  const computed = Buffer.from(md5(utf8Bytes(password), hash));
  const expected = Buffer.from(hash);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
