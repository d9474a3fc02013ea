/**
 * SSH keys of an organization: generation in OpenSSH format, validation of pasted keys, and
 * their rows. The private key is sealed with the SecretBox (bound to its row and organization)
 * before it reaches the database and is opened only to hand it to ssh2 during server.setup.
 */
import { promisify } from "node:util";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import type { SshKey } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { ssh2 } from "./ssh2.ts";

export type SshKeyType = "rsa" | "ed25519";

const RSA_BITS = 3072;
const KEY_COMMENT = "platform";

const generateKeyPair = (type: SshKeyType, options: { bits?: number; comment?: string }) =>
  (
    promisify(ssh2().utils.generateKeyPair) as (
      type: SshKeyType,
      options: { bits?: number; comment?: string },
    ) => Promise<{ private: string; public: string }>
  )(type, options);

/** A new key pair: OpenSSH private key (unencrypted) and `ssh-… AAAA… platform` public key. */
export async function generateSshKeyPair(
  type: SshKeyType,
): Promise<{ privateKey: string; publicKey: string }> {
  const options = type === "rsa" ? { bits: RSA_BITS, comment: KEY_COMMENT } : { comment: KEY_COMMENT };
  // ssh2 drops a leading zero byte of an ed25519 public key (1 key in 256), writing a private
  // key no parser reads back: such a pair is thrown away and another one made.
  for (let attempt = 0; attempt < 8; attempt++) {
    const pair = await generateKeyPair(type, options);
    if (!(ssh2().utils.parseKey(pair.private) instanceof Error)) {
      return { privateKey: pair.private, publicKey: pair.public };
    }
  }
  throw new Error(`ssh2 made no readable ${type} key pair in 8 attempts`);
}

/**
 * Checks that `privateKey` is an unencrypted private key and `publicKey` its public half;
 * a 400 names the field that is wrong.
 */
export function checkKeyPair(privateKey: string, publicKey: string): void {
  const parsedPrivate = ssh2().utils.parseKey(privateKey);
  if (parsedPrivate instanceof Error || !parsedPrivate.isPrivateKey()) {
    const reason = parsedPrivate instanceof Error ? `: ${parsedPrivate.message}` : "";
    throw badRequest(`privateKey is not a usable SSH private key${reason}`, { fields: ["privateKey"] });
  }
  const parsedPublic = ssh2().utils.parseKey(publicKey);
  if (parsedPublic instanceof Error || parsedPublic.isPrivateKey()) {
    throw badRequest("publicKey is not an SSH public key (expected one line like `ssh-ed25519 AAAA…`)", {
      fields: ["publicKey"],
    });
  }
  if (!parsedPublic.getPublicSSH().equals(parsedPrivate.getPublicSSH())) {
    throw badRequest("publicKey does not belong to privateKey", { fields: ["publicKey"] });
  }
}

const sealContext = (key: { sshKeyId: string; organizationId: string }): SecretContext => ({
  table: "ssh_keys",
  rowId: key.sshKeyId,
  organizationId: key.organizationId,
});

/** What responses show of a key (everything but the sealed private key). */
export type SshKeyView = Omit<SshKey, "privateKeySealed">;

export function toSshKeyView(key: SshKey): SshKeyView {
  const { privateKeySealed: _sealed, ...view } = key;
  return view;
}

export async function insertSshKey(
  ctx: ServiceContext,
  values: {
    organizationId: string;
    name: string;
    description: string | null;
    privateKey: string;
    publicKey: string;
  },
): Promise<SshKey> {
  const sshKeyId = newId();
  const { privateKey, ...rest } = values;
  const privateKeySealed = ctx.secrets.encrypt(
    privateKey,
    sealContext({ sshKeyId, organizationId: values.organizationId }),
  );
  return ctx.db
    .insertInto("sshKeys")
    .values({ ...rest, sshKeyId, privateKeySealed })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findSshKey(db: Db, organizationId: string, sshKeyId: string): Promise<SshKey | undefined> {
  return db
    .selectFrom("sshKeys")
    .selectAll()
    .where("sshKeyId", "=", sshKeyId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** The organization's keys, newest first. */
export function listSshKeys(db: Db, organizationId: string): Promise<SshKey[]> {
  return db
    .selectFrom("sshKeys")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("sshKeyId", "desc")
    .execute();
}

export async function updateSshKey(
  db: Db,
  organizationId: string,
  sshKeyId: string,
  patch: { name?: string; description?: string | null },
): Promise<SshKey | undefined> {
  if (Object.keys(patch).length === 0) return findSshKey(db, organizationId, sshKeyId);
  return db
    .updateTable("sshKeys")
    .set(patch)
    .where("sshKeyId", "=", sshKeyId)
    .where("organizationId", "=", organizationId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a key; servers that used it keep their row with sshKeyId null (ON DELETE SET NULL). */
export async function deleteSshKey(db: Db, organizationId: string, sshKeyId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("sshKeys")
    .where("sshKeyId", "=", sshKeyId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The private key, opened for ssh2; marks the key as used. */
export async function openPrivateKey(ctx: ServiceContext, key: SshKey): Promise<string> {
  const privateKey = ctx.secrets.decrypt(key.privateKeySealed, sealContext(key));
  await ctx.db
    .updateTable("sshKeys")
    .set({ lastUsedAt: ctx.now().toISOString() })
    .where("sshKeyId", "=", key.sshKeyId)
    .execute();
  return privateKey;
}
