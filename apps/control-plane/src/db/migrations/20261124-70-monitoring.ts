/**
 * Monitoring (issue 15): monitoring_configs keeps each server's metricsConfig (spec 2.13) sealed
 * (its token is a secret), keyed by server id (`local` for this machine); the events table
 * accepts every event kind of spec 6.1, serverThreshold among them.
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
    .createTable("monitoring_configs")
    .addColumn("server_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("config_sealed", "text", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`alter table events drop constraint if exists events_kind_check`.execute(db);
  await sql`alter table events add constraint events_kind_check check (kind in (${sql.join(
    EVENT_KINDS.map((kind) => sql.lit(kind)),
  )}))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("monitoring_configs").ifExists().execute();
}
