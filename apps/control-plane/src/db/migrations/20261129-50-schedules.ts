/**
 * Scheduled jobs (issue 32 item 3, Dokploy's `schedule` router): a cron command run in an
 * application's or a compose service's container, or on a server (instance administrators
 * only). Every run is a deployment of target kind `schedule` (`deployments.schedule_id`, kind
 * `schedule`): the queue runs one run of a schedule at a time, and deleting the schedule (or
 * its service or server) deletes its runs. `organization_id` is the schedule's organization for
 * every type (the service's, the server's, or the caller's for dokploy-server).
 */
import { type Kysely, sql } from "kysely";

const KINDS_BEFORE = [
  "deploy",
  "redeploy",
  "rebuild",
  "backup",
  "restore",
  "verify",
  "rollback",
  "volumeBackup",
  "volumeRestore",
];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("schedules")
    .addColumn("schedule_id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("cron_expression", "text", (c) => c.notNull())
    .addColumn("app_name", "text", (c) => c.notNull())
    .addColumn("service_name", "text")
    .addColumn("shell_type", "text", (c) => c.notNull().check(sql`shell_type in ('bash', 'sh')`))
    .addColumn("schedule_type", "text", (c) =>
      c.notNull().check(sql`schedule_type in ('application', 'compose', 'server', 'dokploy-server')`),
    )
    .addColumn("command", "text", (c) => c.notNull())
    .addColumn("script", "text")
    .addColumn("application_id", "text", (c) =>
      c.references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("compose_id", "text", (c) => c.references("compose.compose_id").onDelete("cascade"))
    .addColumn("server_id", "text", (c) => c.references("servers.server_id").onDelete("cascade"))
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("user_id", "text", (c) => c.references("users.user_id").onDelete("set null"))
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("timezone", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      "schedules_service",
      sql`(schedule_type = 'application' and application_id is not null and compose_id is null) or
        (schedule_type = 'compose' and compose_id is not null and application_id is null and service_name is not null) or
        (schedule_type in ('server', 'dokploy-server') and application_id is null and compose_id is null)`,
    )
    .execute();
  await db.schema
    .createIndex("schedules_organization_idx")
    .on("schedules")
    .column("organization_id")
    .execute();
  await db.schema
    .alterTable("deployments")
    .addColumn("schedule_id", "text", (c) => c.references("schedules.schedule_id").onDelete("cascade"))
    .execute();
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id, compose_id, schedule_id) = 1)`.execute(
    db,
  );
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id) or
    (target_kind = 'database' and database_id = target_id) or
    (target_kind = 'compose' and compose_id = target_id) or
    (target_kind = 'schedule' and schedule_id = target_id))`.execute(db);
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in (${sql.join(
    [...KINDS_BEFORE, "schedule"].map((kind) => sql.lit(kind)),
  )}))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom("deployments").where("schedule_id", "is not", null).execute();
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in (${sql.join(
    KINDS_BEFORE.map((kind) => sql.lit(kind)),
  )}))`.execute(db);
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id) or
    (target_kind = 'database' and database_id = target_id) or
    (target_kind = 'compose' and compose_id = target_id))`.execute(db);
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id, compose_id) = 1)`.execute(
    db,
  );
  await db.schema.alterTable("deployments").dropColumn("schedule_id").execute();
  await db.schema.dropTable("schedules").ifExists().execute();
}
