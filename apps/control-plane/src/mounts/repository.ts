/**
 * The SQL of mounts (the mounts router). Every mount row carries its organization, so a lookup by
 * id takes the caller's and another organization's mount is not found. A second mount at the same
 * mountPath of a service is a 409 naming `mountPath`.
 */
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { Mount } from "../db/schema.ts";
import { conflict } from "../errors.ts";
import { isUniqueViolation } from "../projects/repository.ts";
import type { checkMount, MountOwner } from "./mounts.ts";

const MOUNT_PATH_UNIQUE = "mounts_service_mount_path_unique";

/** A mount's own fields once checkMount accepted them. */
export type CheckedMount = Awaited<ReturnType<typeof checkMount>>;

export function findMount(db: Db, organizationId: string, mountId: string): Promise<Mount | undefined> {
  return db
    .selectFrom("mounts")
    .selectAll()
    .where("mountId", "=", mountId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

async function withUniqueMountPath<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, MOUNT_PATH_UNIQUE)) {
      throw conflict("The service already has a mount at this mountPath (a compose stack: this filePath)", {
        fields: ["mountPath"],
      });
    }
    throw error;
  }
}

/** Stores a mount of a service already found in the caller's organization. */
export function insertMount(db: Db, owner: MountOwner, fields: CheckedMount): Promise<Mount> {
  return withUniqueMountPath(() =>
    db
      .insertInto("mounts")
      .values({
        mountId: newId(),
        ...fields,
        serviceType: owner.kind,
        applicationId: owner.kind === "application" ? owner.serviceId : null,
        composeId: owner.kind === "compose" ? owner.serviceId : null,
        databaseId: owner.kind === "application" || owner.kind === "compose" ? null : owner.serviceId,
        organizationId: owner.organizationId,
      })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}

export function updateMount(db: Db, mountId: string, fields: CheckedMount): Promise<Mount> {
  return withUniqueMountPath(() =>
    db
      .updateTable("mounts")
      .set(fields)
      .where("mountId", "=", mountId)
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}

/** The mounts of a service already found in the caller's organization, oldest first. */
export function listServiceMounts(db: Db, owner: MountOwner): Promise<Mount[]> {
  const column =
    owner.kind === "application" ? "applicationId" : owner.kind === "compose" ? "composeId" : "databaseId";
  return db
    .selectFrom("mounts")
    .selectAll()
    .where(column, "=", owner.serviceId)
    .where("organizationId", "=", owner.organizationId)
    .where("serviceType", "=", owner.kind)
    .orderBy("createdAt", "asc")
    .orderBy("mountId", "asc")
    .execute();
}

export async function deleteMount(db: Db, mountId: string): Promise<void> {
  await db.deleteFrom("mounts").where("mountId", "=", mountId).execute();
}

/** Every mount of a compose stack (its template's file mounts). */
export async function deleteComposeMounts(db: Db, composeId: string): Promise<void> {
  await db.deleteFrom("mounts").where("composeId", "=", composeId).execute();
}
