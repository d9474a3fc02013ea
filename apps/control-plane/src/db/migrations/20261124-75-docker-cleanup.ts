/**
 * Scheduled Docker cleanup (settings.updateDockerCleanup): servers.enable_docker_cleanup (this
 * machine's flag is web_server_settings.enable_docker_cleanup), and every event name of spec
 * 6.1 allowed in events.kind, so dockerCleanup (and the later kinds) can be recorded.
 */
import { type Kysely, sql } from "kysely";

const EVENT_KINDS = [
  "appDeploy",
  "appBuildError",
  "databaseBackup",
  "volumeBackup",
  "platformRestart",
  "dockerCleanup",
  "serverThreshold",
];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("servers")
    .addColumn("enable_docker_cleanup", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`alter table events drop constraint if exists events_kind_check`.execute(db);
  await sql`alter table events add constraint events_kind_check check (kind in (${sql.join(
    EVENT_KINDS.map((kind) => sql.lit(kind)),
  )}))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table events drop constraint if exists events_kind_check`.execute(db);
  await sql`alter table events add constraint events_kind_check check (kind in ('appDeploy', 'appBuildError'))`.execute(
    db,
  );
  await db.schema.alterTable("servers").dropColumn("enable_docker_cleanup").execute();
}
