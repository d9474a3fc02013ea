/**
 * Fields Dokploy's CLI sends (tests/compat/cli-options.json): notifications.platform_backup (the
 * control plane's own backups, Dokploy's dokployBackup), on for every channel that took them as
 * databaseBackup until now so an upgrade changes nothing, with the event kind it needs; and
 * schedules.description.
 */
import { type Kysely, sql } from "kysely";

const EVENT_KINDS = [
  "appDeploy",
  "appBuildError",
  "databaseBackup",
  "volumeBackup",
  "platformRestart",
  "platformBackup",
  "dockerCleanup",
  "serverThreshold",
];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("notifications")
    .addColumn("platform_backup", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`update notifications set platform_backup = database_backup`.execute(db);
  await sql`alter table events drop constraint if exists events_kind_check`.execute(db);
  await sql`alter table events add constraint events_kind_check check (kind in (${sql.join(
    EVENT_KINDS.map((kind) => sql.lit(kind)),
  )}))`.execute(db);
  await db.schema.alterTable("schedules").addColumn("description", "text").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("schedules").dropColumn("description").execute();
  await sql`delete from events where kind = 'platformBackup'`.execute(db);
  await sql`alter table events drop constraint if exists events_kind_check`.execute(db);
  await sql`alter table events add constraint events_kind_check check (kind in (${sql.join(
    EVENT_KINDS.filter((kind) => kind !== "platformBackup").map((kind) => sql.lit(kind)),
  )}))`.execute(db);
  await db.schema.alterTable("notifications").dropColumn("platform_backup").execute();
}
