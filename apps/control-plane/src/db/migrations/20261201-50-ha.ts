/**
 * Several control planes on one database (issue 40):
 * - cron_ticks: one row per firing of a croner job (scheduled jobs, scheduled backups, Docker
 *   cleanups), keyed by what fires and its scheduled second. Every copy's croner fires; the copy
 *   whose insert lands runs the tick, the others find the row and skip.
 * - instance_leases: named leases for work one control plane does at a time (this machine's
 *   in-process agent, the reconciliation pass), renewed by their holder.
 * - a NOTIFY on `platform_cron` at every change of what croner schedules (scheduled jobs, database
 *   and volume backups, the Docker cleanup flags), so every copy's croner jobs follow a change
 *   made through any copy.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("cron_ticks")
    .addColumn("job", "text", (column) => column.notNull())
    .addColumn("tick", "timestamptz", (column) => column.notNull())
    .addColumn("owner", "text", (column) => column.notNull())
    .addColumn("created_at", "timestamptz", (column) => column.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("cron_ticks_pkey", ["job", "tick"])
    .execute();
  await db.schema
    .createTable("instance_leases")
    .addColumn("name", "text", (column) => column.primaryKey())
    .addColumn("owner", "text", (column) => column.notNull())
    .addColumn("until", "timestamptz", (column) => column.notNull())
    .execute();
  await sql`
    create function platform_notify_cron() returns trigger language plpgsql as $$
    begin
      perform pg_notify('platform_cron', tg_table_name);
      return null;
    end $$`.execute(db);
  for (const table of ["schedules", "backups", "volume_backups"]) {
    await sql`create trigger ${sql.id(`${table}_notify_cron`)} after insert or update or delete on ${sql.table(table)}
      for each statement execute function platform_notify_cron()`.execute(db);
  }
  for (const table of ["servers", "web_server_settings"]) {
    await sql`create trigger ${sql.id(`${table}_notify_cron`)} after update on ${sql.table(table)} for each row
      when (old.enable_docker_cleanup is distinct from new.enable_docker_cleanup)
      execute function platform_notify_cron()`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["schedules", "backups", "volume_backups", "servers", "web_server_settings"]) {
    await sql`drop trigger if exists ${sql.id(`${table}_notify_cron`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists platform_notify_cron()`.execute(db);
  await db.schema.dropTable("instance_leases").execute();
  await db.schema.dropTable("cron_ticks").execute();
}
