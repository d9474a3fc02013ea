/**
 * Registry rows of an organization. The password is sealed with the SecretBox, bound to its row
 * and organization, and opened only to log in or push (findRegistryCredentials).
 */
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import type { Registry, RegistryType } from "../db/schema.ts";
import { ApiError } from "../errors.ts";
import { checkRegistryBeforeUse } from "./outbound.ts";

export interface RegistryCredentials {
  registryUrl: string;
  username: string;
  password: string;
  imagePrefix: string | null;
}

const sealContext = (registry: { registryId: string; organizationId: string }): SecretContext => ({
  table: "registries",
  rowId: registry.registryId,
  organizationId: registry.organizationId,
});

/** What responses show of a registry: everything but the sealed password. */
export type RegistryView = Omit<Registry, "passwordSealed">;

export function toRegistryView(registry: Registry): RegistryView {
  const { passwordSealed: _sealed, ...view } = registry;
  return view;
}

export interface RegistryFields {
  registryName: string;
  registryUrl: string;
  username: string;
  password: string;
  registryType: RegistryType;
  imagePrefix: string | null;
}

export async function insertRegistry(
  ctx: ServiceContext,
  organizationId: string,
  fields: RegistryFields,
): Promise<Registry> {
  const registryId = newId();
  const { password, ...rest } = fields;
  return ctx.db
    .insertInto("registries")
    .values({
      ...rest,
      registryId,
      organizationId,
      passwordSealed: ctx.secrets.encrypt(password, sealContext({ registryId, organizationId })),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findRegistry(
  db: Db,
  organizationId: string,
  registryId: string,
): Promise<Registry | undefined> {
  return db
    .selectFrom("registries")
    .selectAll()
    .where("registryId", "=", registryId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** The organization's registries, newest first. */
export function listRegistries(db: Db, organizationId: string): Promise<Registry[]> {
  return db
    .selectFrom("registries")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("registryId", "desc")
    .execute();
}

/** Applies the given fields (a new password is sealed); undefined when there is no such registry. */
export async function updateRegistry(
  ctx: ServiceContext,
  organizationId: string,
  registryId: string,
  fields: Partial<RegistryFields>,
): Promise<Registry | undefined> {
  const { password, ...rest } = fields;
  const patch: Partial<Omit<Registry, "registryId" | "organizationId" | "createdAt">> = { ...rest };
  if (password !== undefined) {
    patch.passwordSealed = ctx.secrets.encrypt(password, sealContext({ registryId, organizationId }));
  }
  if (Object.keys(patch).length === 0) return findRegistry(ctx.db, organizationId, registryId);
  return ctx.db
    .updateTable("registries")
    .set(patch)
    .where("registryId", "=", registryId)
    .where("organizationId", "=", organizationId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Deletes the registry; applications referring to it keep running with the reference set to null
 * (foreign keys on delete set null). Answers the ids of those applications, or undefined when
 * there is no such registry.
 */
export async function deleteRegistry(
  db: Db,
  organizationId: string,
  registryId: string,
): Promise<string[] | undefined> {
  return db.transaction().execute(async (trx) => {
    const affected = await trx
      .selectFrom("applications")
      .select("applicationId")
      .where((eb) =>
        eb.or([
          eb("registryId", "=", registryId),
          eb("buildRegistryId", "=", registryId),
          eb("rollbackRegistryId", "=", registryId),
        ]),
      )
      .execute();
    const deleted = await trx
      .deleteFrom("registries")
      .where("registryId", "=", registryId)
      .where("organizationId", "=", organizationId)
      .executeTakeFirst();
    if (deleted.numDeletedRows === 0n) return undefined;
    return affected.map((row) => row.applicationId);
  });
}

export async function registryBelongsTo(
  db: Db,
  organizationId: string,
  registryId: string,
): Promise<boolean> {
  return (await findRegistry(db, organizationId, registryId)) !== undefined;
}

export function openRegistryPassword(ctx: ServiceContext, registry: Registry): string {
  return ctx.secrets.decrypt(registry.passwordSealed, sealContext(registry));
}

/**
 * The registry of the organization with its unsealed password, or undefined; throws when the
 * outbound guard refuses its host (the credentials are never sent there).
 */
export async function findRegistryCredentials(
  ctx: ServiceContext,
  organizationId: string,
  registryId: string,
): Promise<RegistryCredentials | undefined> {
  const registry = await findRegistry(ctx.db, organizationId, registryId);
  if (!registry) return undefined;
  await checkRegistryBeforeUse(ctx, registry.registryUrl);
  return {
    registryUrl: registry.registryUrl,
    username: registry.username,
    password: openRegistryPassword(ctx, registry),
    imagePrefix: registry.imagePrefix,
  };
}

export const registryReferenceFields = ["registryId", "buildRegistryId", "rollbackRegistryId"] as const;

/**
 * Checks that every registry an application input names belongs to the organization; another
 * organization's (or an unknown) registry is a 404 naming the field.
 */
export async function checkRegistryReferences(
  db: Db,
  organizationId: string,
  input: Partial<Record<(typeof registryReferenceFields)[number], string | null>>,
): Promise<void> {
  for (const field of registryReferenceFields) {
    const registryId = input[field];
    if (registryId && !(await registryBelongsTo(db, organizationId, registryId))) {
      throw new ApiError("NOT_FOUND", `Registry not found (${field})`, { fields: [field] });
    }
  }
}
