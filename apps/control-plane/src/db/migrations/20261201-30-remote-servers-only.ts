/**
 * settings.updateRemoteServersOnly (issue 39): when on, this machine runs no new deployment of
 * any organization's services; they go to the organizations' servers.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("web_server_settings")
    .addColumn("remote_servers_only", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("web_server_settings").dropColumn("remote_servers_only").execute();
}
