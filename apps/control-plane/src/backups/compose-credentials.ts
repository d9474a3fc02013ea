/**
 * The credentials of a database inside a compose stack (Dokploy's backup `metadata`): the stack's
 * file holds them, not a row of ours, so the backup carries them, per kind: postgres
 * {databaseUser}, mariadb and mongo {databaseUser, databasePassword}, mysql
 * {databaseRootPassword}; redis needs none. Passwords are sealed with the SecretBox bound to the
 * backup's row and organization, answered as `********`; an update sending `********` keeps the
 * stored one.
 */
import type { DatabaseAccess } from "@platform/agent-protocol";
import { z } from "zod";
import type { SecretBox, SecretContext } from "../crypto/secret-box.ts";
import type { BackupDatabaseType } from "../db/schema.ts";
import { badRequest } from "../errors.ts";

export const CREDENTIAL_MASK = "********";

const userSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(63)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, "must be a user name (letters, digits, '_', '.', '-')");
const passwordSchema = z.string().min(1, "must not be empty").max(256);

export const composeMetadataSchema = z
  .object({
    postgres: z.object({ databaseUser: userSchema }).strict().optional(),
    mariadb: z.object({ databaseUser: userSchema, databasePassword: passwordSchema }).strict().optional(),
    mongo: z.object({ databaseUser: userSchema, databasePassword: passwordSchema }).strict().optional(),
    mysql: z.object({ databaseRootPassword: passwordSchema }).strict().optional(),
  })
  .strict();

export type ComposeMetadata = z.infer<typeof composeMetadataSchema>;

const PASSWORD_FIELDS = ["databasePassword", "databaseRootPassword"] as const;

export const credentialsContext = (row: { backupId: string; organizationId: string }): SecretContext => ({
  table: "backups",
  rowId: row.backupId,
  organizationId: row.organizationId,
});

/** The credentials a compose backup of `kind` must carry; 400 naming metadata otherwise. */
export function checkCredentials(
  kind: BackupDatabaseType,
  metadata: ComposeMetadata | null | undefined,
): void {
  if (kind === "redis") return;
  if (kind === "libsql") {
    throw badRequest("databaseType libsql is backed up as a libsql service, not inside a stack", {
      fields: ["databaseType"],
    });
  }
  if (!metadata?.[kind]) {
    const needed = {
      postgres: "{databaseUser}",
      mariadb: "{databaseUser, databasePassword}",
      mongo: "{databaseUser, databasePassword}",
      mysql: "{databaseRootPassword}",
    }[kind];
    throw badRequest(`metadata.${kind} ${needed} is required for a ${kind} database inside a stack`, {
      fields: ["metadata"],
    });
  }
}

/**
 * The stored form: passwords sealed (`<field>Sealed`); a password sent as `********` keeps the
 * one `stored` holds (an update answering what backup.one showed).
 */
export function sealCredentials(
  secrets: SecretBox,
  context: SecretContext,
  metadata: ComposeMetadata,
  stored: Record<string, unknown> | null,
): Record<string, unknown> {
  const sealed: Record<string, Record<string, string>> = {};
  for (const [kind, fields] of Object.entries(metadata)) {
    if (!fields) continue;
    const entry: Record<string, string> = {};
    for (const [name, value] of Object.entries(fields as Record<string, string>)) {
      if (!(PASSWORD_FIELDS as readonly string[]).includes(name)) {
        entry[name] = value;
        continue;
      }
      const previous = (stored?.[kind] as Record<string, string> | undefined)?.[`${name}Sealed`];
      if (value === CREDENTIAL_MASK) {
        if (!previous) {
          throw badRequest(`metadata.${kind}.${name}: no password is stored to keep`, {
            fields: ["metadata"],
          });
        }
        entry[`${name}Sealed`] = previous;
      } else entry[`${name}Sealed`] = secrets.encrypt(value, context);
    }
    sealed[kind] = entry;
  }
  return sealed;
}

/** The credentials as answered: passwords masked. */
export function maskedCredentials(stored: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!stored) return null;
  const view: Record<string, Record<string, string>> = {};
  for (const [kind, fields] of Object.entries(stored)) {
    const entry: Record<string, string> = {};
    for (const [name, value] of Object.entries(fields as Record<string, string>)) {
      if (name.endsWith("Sealed")) entry[name.slice(0, -"Sealed".length)] = CREDENTIAL_MASK;
      else entry[name] = value;
    }
    view[kind] = entry;
  }
  return view;
}

/** How the dump tool reaches the stack's database, its passwords opened. */
export function composeAccess(
  secrets: SecretBox,
  context: SecretContext,
  kind: BackupDatabaseType,
  databaseName: string,
  stored: Record<string, unknown> | null,
): DatabaseAccess {
  const fields = (stored?.[kind] ?? {}) as Record<string, string>;
  const open = (name: string) => {
    const sealed = fields[`${name}Sealed`];
    return sealed ? secrets.decrypt(sealed, context) : "";
  };
  if (kind === "mysql") {
    return { kind, databaseName, user: "root", password: open("databaseRootPassword") };
  }
  return {
    kind,
    databaseName: kind === "redis" ? "" : databaseName,
    user: fields.databaseUser ?? "",
    password: open("databasePassword"),
  };
}
