/**
 * Preview deployments (issue 31): one row per pull or merge request (or branch asked for through
 * previewDeployment.create) of an application with previews active. A preview is a service of
 * its own (its appName, its Swarm service, its Traefik file, its deployments: target kind
 * `preview`) built from the application's source at the request's branch. Its host is a row of
 * `domains` (domainType preview, preview_deployment_id) of the application, so host claims see it
 * like any domain; the application's own Traefik file leaves preview domains out.
 * `head_sha` is the commit the last queued deployment builds: a redelivered event for the same
 * commit queues nothing (idempotent across a control-plane crash).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("preview_deployments")
    .addColumn("preview_deployment_id", "text", (c) => c.primaryKey())
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("app_name", "text", (c) => c.notNull().unique())
    .addColumn("branch", "text", (c) => c.notNull())
    .addColumn("provider", "text")
    .addColumn("pull_request_id", "text", (c) => c.notNull())
    .addColumn("pull_request_number", "text", (c) => c.notNull())
    .addColumn("pull_request_url", "text", (c) => c.notNull())
    .addColumn("pull_request_title", "text", (c) => c.notNull())
    .addColumn("pull_request_comment_id", "text")
    .addColumn("head_sha", "text")
    .addColumn("preview_status", "text", (c) =>
      c.notNull().defaultTo("idle").check(sql`preview_status in ('idle', 'running', 'done', 'error')`),
    )
    .addColumn("domain_id", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz")
    .addUniqueConstraint("preview_deployments_request_unique", ["application_id", "pull_request_id"])
    .execute();
  await db.schema
    .createIndex("preview_deployments_application_idx")
    .on("preview_deployments")
    .columns(["application_id", "created_at"])
    .execute();
  await db.schema
    .alterTable("domains")
    .addColumn("preview_deployment_id", "text", (c) =>
      c.references("preview_deployments.preview_deployment_id").onDelete("cascade"),
    )
    .execute();
  await db.schema
    .alterTable("deployments")
    .addColumn("preview_deployment_id", "text", (c) =>
      c.references("preview_deployments.preview_deployment_id").onDelete("cascade"),
    )
    .execute();
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id, compose_id, schedule_id, preview_deployment_id) = 1)`.execute(
    db,
  );
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id) or
    (target_kind = 'database' and database_id = target_id) or
    (target_kind = 'compose' and compose_id = target_id) or
    (target_kind = 'schedule' and schedule_id = target_id) or
    (target_kind = 'preview' and preview_deployment_id = target_id))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom("deployments").where("preview_deployment_id", "is not", null).execute();
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id) or
    (target_kind = 'database' and database_id = target_id) or
    (target_kind = 'compose' and compose_id = target_id) or
    (target_kind = 'schedule' and schedule_id = target_id))`.execute(db);
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id, compose_id, schedule_id) = 1)`.execute(
    db,
  );
  await db.schema.alterTable("deployments").dropColumn("preview_deployment_id").execute();
  await db.deleteFrom("domains").where("preview_deployment_id", "is not", null).execute();
  await db.schema.alterTable("domains").dropColumn("preview_deployment_id").execute();
  await db.schema.dropTable("preview_deployments").ifExists().execute();
}
