/**
 * Deployment records (spec 2.4) and the events they emit for later notification delivery
 * (spec 6.1). A deployment row is also its queue job: status idle = waiting, running = active,
 * done = completed, error = failed. The log lives in the row (capped, see deployments/logs.ts).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`;
  await db.schema
    .createTable("deployments")
    .addColumn("deployment_id", "text", (c) => c.primaryKey())
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('deploy', 'redeploy')`))
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("status", "text", (c) =>
      c.notNull().defaultTo("idle").check(sql`status in ('idle', 'running', 'done', 'error')`),
    )
    .addColumn("logs", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("error_message", "text")
    .addColumn("commit_hash", "text")
    .addColumn("commit_message", "text")
    .addColumn("image_name", "text")
    // A drop upload: the archive on the control plane's disk, kept so a job re-read after a
    // restart still finds it.
    .addColumn("archive_path", "text")
    .addColumn("archive_format", "text", (c) => c.check(sql`archive_format in ('zip', 'tar.gz')`))
    // The server the deployment runs on; null is the control plane's own machine.
    .addColumn("server_id", "text", (c) => c.references("servers.server_id").onDelete("set null"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("started_at", "timestamptz")
    .addColumn("completed_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("deployments_application_idx")
    .on("deployments")
    .columns(["application_id", "created_at"])
    .execute();
  await db.schema.createIndex("deployments_status_idx").on("deployments").column("status").execute();
  await db.schema.createIndex("deployments_server_idx").on("deployments").column("server_id").execute();

  await db.schema
    .createTable("events")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('appDeploy', 'appBuildError')`))
    // Kept when the application goes: the event happened, and its payload names the application.
    .addColumn("application_id", "text", (c) =>
      c.references("applications.application_id").onDelete("set null"),
    )
    .addColumn("payload", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex("events_organization_idx")
    .on("events")
    .columns(["organization_id", "created_at"])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("events").ifExists().execute();
  await db.schema.dropTable("deployments").ifExists().execute();
}
