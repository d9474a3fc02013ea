/**
 * The SQL of volume backups. A volume backup reached by id is of an organization
 * (findVolumeBackup); the list and the writes take a service or a volume backup already loaded
 * for the caller.
 */
import type { Db } from "../db/database.ts";
import type { NewVolumeBackup, VolumeBackup, VolumeBackupUpdate } from "../db/schema.ts";

/** The organization's volume backup; undefined otherwise. */
export function findVolumeBackup(
  db: Db,
  organizationId: string,
  volumeBackupId: string,
): Promise<VolumeBackup | undefined> {
  return db
    .selectFrom("volumeBackups")
    .selectAll()
    .where("volumeBackupId", "=", volumeBackupId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** The volume backups of one service, newest first. */
export function listServiceVolumeBackups(
  db: Db,
  column: "applicationId" | "composeId" | "databaseId",
  serviceId: string,
): Promise<VolumeBackup[]> {
  return db
    .selectFrom("volumeBackups")
    .selectAll()
    .where(column, "=", serviceId)
    .orderBy("createdAt", "desc")
    .orderBy("volumeBackupId", "desc")
    .execute();
}

export function insertVolumeBackup(db: Db, values: NewVolumeBackup): Promise<VolumeBackup> {
  return db.insertInto("volumeBackups").values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateVolumeBackup(
  db: Db,
  volumeBackupId: string,
  patch: VolumeBackupUpdate,
): Promise<VolumeBackup> {
  return db
    .updateTable("volumeBackups")
    .set(patch)
    .where("volumeBackupId", "=", volumeBackupId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteVolumeBackup(db: Db, volumeBackupId: string): Promise<void> {
  await db.deleteFrom("volumeBackups").where("volumeBackupId", "=", volumeBackupId).execute();
}
