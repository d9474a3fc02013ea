/**
 * Issue 39's engine settings: build slots per server (settings/server.updateBuildsConcurrency;
 * null: as many as the control plane's deployment concurrency) and the cron of the proxy's
 * access log cleanup (settings.updateLogCleanup; null: none scheduled).
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("web_server_settings").addColumn("builds_concurrency", "integer").execute();
  await db.schema.alterTable("web_server_settings").addColumn("log_cleanup_cron", "text").execute();
  await db.schema.alterTable("servers").addColumn("builds_concurrency", "integer").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("servers").dropColumn("builds_concurrency").execute();
  await db.schema.alterTable("web_server_settings").dropColumn("log_cleanup_cron").execute();
  await db.schema.alterTable("web_server_settings").dropColumn("builds_concurrency").execute();
}
