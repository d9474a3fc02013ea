/**
 * The SQL of patches. A patch is found through its application or compose stack -> environment
 * -> project, so another organization's is not.
 */
import type { SourcePatch } from "@platform/agent-protocol";
import { type Selectable, sql, type Updateable } from "kysely";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type { PatchTable } from "../db/schema.ts";
import { isUniqueViolation } from "../projects/repository.ts";

export type Patch = Selectable<PatchTable>;
export type PatchType = Patch["type"];
/** The service a patch belongs to: exactly one of the two. */
export type PatchOwner =
  | { applicationId: string; composeId?: undefined }
  | { composeId: string; applicationId?: undefined };

export function findPatch(db: Db, organizationId: string, patchId: string): Promise<Patch | undefined> {
  return ownedBy(
    db
      .selectFrom("patches")
      .leftJoin("applications", "applications.applicationId", "patches.applicationId")
      .leftJoin("compose", "compose.composeId", "patches.composeId"),
    sql<string>`coalesce(applications.environment_id, compose.environment_id)`,
    organizationId,
  )
    .selectAll("patches")
    .where("patches.patchId", "=", patchId)
    .executeTakeFirst();
}

function ofOwner(db: Db, owner: PatchOwner) {
  const query = db.selectFrom("patches").selectAll();
  return owner.applicationId !== undefined
    ? query.where("applicationId", "=", owner.applicationId)
    : query.where("composeId", "=", owner.composeId);
}

/** A service's patches by path (the service was found in the caller's organization). */
export function listPatches(db: Db, owner: PatchOwner): Promise<Patch[]> {
  return ofOwner(db, owner).orderBy("filePath", "asc").execute();
}

export function findPatchByPath(db: Db, owner: PatchOwner, filePath: string): Promise<Patch | undefined> {
  return ofOwner(db, owner).where("filePath", "=", filePath).executeTakeFirst();
}

/** Bytes of the service's patches' content, leaving one patch out (the one being changed). */
export async function patchBytesOf(db: Db, owner: PatchOwner, exceptPatchId?: string): Promise<number> {
  let query = db
    .selectFrom("patches")
    .select(sql<string>`coalesce(sum(octet_length(content)), 0)`.as("bytes"));
  query =
    owner.applicationId !== undefined
      ? query.where("applicationId", "=", owner.applicationId)
      : query.where("composeId", "=", owner.composeId);
  if (exceptPatchId) query = query.where("patchId", "<>", exceptPatchId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.bytes);
}

/** Undefined when the service has a patch of that path already. */
export async function insertPatch(
  db: Db,
  owner: PatchOwner,
  values: { filePath: string; content: string; type: PatchType; enabled: boolean },
): Promise<Patch | undefined> {
  try {
    return await db
      .insertInto("patches")
      .values({
        patchId: newId(),
        applicationId: owner.applicationId ?? null,
        composeId: owner.composeId ?? null,
        ...values,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

/** Undefined when the new path is another patch's of the service. */
export async function updatePatch(
  db: Db,
  patchId: string,
  changes: Updateable<PatchTable>,
): Promise<Patch | undefined> {
  try {
    return await db
      .updateTable("patches")
      .set({ ...changes, updatedAt: sql<string>`now()` })
      .where("patchId", "=", patchId)
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

export async function deletePatch(db: Db, patchId: string): Promise<void> {
  await db.deleteFrom("patches").where("patchId", "=", patchId).execute();
}

/** The service's enabled patches as its build command carries them (in path order). */
export async function sourcePatchesFor(db: Db, owner: PatchOwner): Promise<SourcePatch[]> {
  const patches = await listPatches(db, owner);
  return patches
    .filter((patch) => patch.enabled)
    .map((patch) => ({ filePath: patch.filePath, type: patch.type, content: patch.content }));
}
