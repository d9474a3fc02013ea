/**
 * Issue 39's engine settings: build slots per server (settings/server.updateBuildsConcurrency;
 * null: as many as the control plane's deployment concurrency) and the cron of the proxy's
 * access log cleanup (settings.updateLogCleanup; null: none scheduled), whose changes notify
 * platform_cron like the other schedules.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("web_server_settings").addColumn("builds_concurrency", "integer").execute();
  await db.schema.alterTable("web_server_settings").addColumn("log_cleanup_cron", "text").execute();
  await db.schema.alterTable("servers").addColumn("builds_concurrency", "integer").execute();
  // Every control plane reschedules the cleanup when the cron changes (platform_cron, 20261201-50).
  await sql`create trigger web_server_settings_log_cleanup_notify_cron after update on web_server_settings
    for each row when (old.log_cleanup_cron is distinct from new.log_cleanup_cron)
    execute function platform_notify_cron()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists web_server_settings_log_cleanup_notify_cron on web_server_settings`.execute(
    db,
  );
  await db.schema.alterTable("servers").dropColumn("builds_concurrency").execute();
  await db.schema.alterTable("web_server_settings").dropColumn("log_cleanup_cron").execute();
  await db.schema.alterTable("web_server_settings").dropColumn("builds_concurrency").execute();
}
