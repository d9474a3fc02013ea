/**
 * backup.manualBackupCompose (issue 41): a backup of a database inside a compose stack names
 * its stack (compose_id, deleted with it) and the stack's service (service_name, an existing
 * column); its credentials are in metadata, their secrets sealed.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("backups")
    .addColumn("compose_id", "text", (column) => column.references("compose.compose_id").onDelete("cascade"))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("backups").dropColumn("compose_id").execute();
}
