/**
 * backup.manualBackupCompose (issue 41): a backup of a database inside a compose stack names
 * its stack (compose_id, deleted with it) and the stack's service (service_name, an existing
 * column); its credentials are in metadata, their secrets sealed. Such a row names no database
 * service: the check that only web-server backups have no database_id is widened to it (a
 * relaxation: every row the older check accepted is accepted).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("backups")
    .addColumn("compose_id", "text", (column) => column.references("compose.compose_id").onDelete("cascade"))
    .execute();
  await sql`alter table backups add constraint backups_target check (
    (compose_id is null and (database_type = 'web-server') = (database_id is null)) or
    (compose_id is not null and database_id is null and database_type <> 'web-server'))`.execute(db);
  await sql`alter table backups drop constraint backups_web_server`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom("backups").where("compose_id", "is not", null).execute();
  await sql`alter table backups add constraint backups_web_server check ((database_type = 'web-server') = (database_id is null))`.execute(
    db,
  );
  await sql`alter table backups drop constraint backups_target`.execute(db);
  await db.schema.alterTable("backups").dropColumn("compose_id").execute();
}
