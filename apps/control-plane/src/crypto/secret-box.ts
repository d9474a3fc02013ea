/**
 * AES-256-GCM for every secret at rest. Each value gets a random 96-bit nonce and is bound to
 * the row it belongs to through associated data (`table:rowId:organizationId`), so a ciphertext
 * copied into another row or organization does not decrypt. The key version is stored with the
 * value so keys can be rotated later.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const FORMAT = "v1";
const CURRENT_KEY_VERSION = 1;

export interface SecretContext {
  table: string;
  rowId: string;
  organizationId: string;
}

export class SecretBox {
  private readonly keys: Map<number, Buffer>;

  constructor(masterSecret: string) {
    this.keys = new Map([[CURRENT_KEY_VERSION, deriveKey(masterSecret, "platform/secret-box/v1")]]);
  }

  encrypt(plaintext: string, context: SecretContext): string {
    const key = this.keys.get(CURRENT_KEY_VERSION)!;
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(associatedData(context));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return [FORMAT, CURRENT_KEY_VERSION, nonce.toString("base64url"), body.toString("base64url")].join(":");
  }

  decrypt(sealed: string, context: SecretContext): string {
    const [format, version, nonce, body] = sealed.split(":");
    const key = this.keys.get(Number(version));
    if (format !== FORMAT || !key || !nonce || !body) throw new Error("Unreadable secret");
    const raw = Buffer.from(body, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64url"));
    decipher.setAAD(associatedData(context));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(0, raw.length - 16)), decipher.final()]).toString(
      "utf8",
    );
  }
}

const associatedData = (c: SecretContext) => Buffer.from(`${c.table}:${c.rowId}:${c.organizationId}`, "utf8");

/** A 256-bit key for one purpose, derived from the master secret with HKDF-SHA256. */
export function deriveKey(masterSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", masterSecret, "platform", purpose, 32));
}
