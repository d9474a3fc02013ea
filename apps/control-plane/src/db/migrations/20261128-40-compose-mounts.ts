/**
 * File mounts of compose stacks (issue 23, deployTemplate): a template's `[config.mounts]` become
 * mount rows of the stack (type file, Dokploy's shape: `filePath` names the file under the
 * stack's files directory, `mountPath` is empty since the compose file binds it as
 * `../files/<filePath>`). One filePath per stack, one mountPath per application or database.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("mounts")
    .addColumn("compose_id", "text", (c) => c.references("compose.compose_id").onDelete("cascade"))
    .execute();
  await sql`alter table mounts drop constraint mounts_one_service`.execute(db);
  await sql`alter table mounts add constraint mounts_one_service check (num_nonnulls(application_id, database_id, compose_id) = 1)`.execute(
    db,
  );
  await db.schema.dropIndex("mounts_service_mount_path_unique").execute();
  await db.schema
    .createIndex("mounts_service_mount_path_unique")
    .on("mounts")
    .expression(
      sql`coalesce(application_id, database_id, compose_id), (case when compose_id is null then mount_path else file_path end)`,
    )
    .unique()
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom("mounts").where("compose_id", "is not", null).execute();
  await db.schema.dropIndex("mounts_service_mount_path_unique").execute();
  await sql`alter table mounts drop constraint mounts_one_service`.execute(db);
  await db.schema.alterTable("mounts").dropColumn("compose_id").execute();
  await sql`alter table mounts add constraint mounts_one_service check (num_nonnulls(application_id, database_id) = 1)`.execute(
    db,
  );
  await db.schema
    .createIndex("mounts_service_mount_path_unique")
    .on("mounts")
    .expression(sql`coalesce(application_id, database_id), mount_path`)
    .unique()
    .execute();
}
