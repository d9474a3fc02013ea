/**
 * Rollbacks (issue 27 item 2, Dokploy's `rollback` router): what each successful deployment of
 * an application ran, kept to deploy again without a build. The image is kept on its server as
 * platform-rollback/<repository>:<tag> (and in `registry_image` when pushed to the application's
 * rollback registry); `spec_sealed` is the Swarm service spec the deployment ran, sealed (it holds
 * the environment). A rollback outlives its deployment's record (deployment.removeDeployment,
 * application.clearDeployments): retention per application bounds them. `deployments.rollback_id`
 * is the rollback a deployment recorded (or, for a rollback run, deployed);
 * `restores_rollback_id` is what a rollback run deploys.
 */
import { type Kysely, sql } from "kysely";

const KINDS_BEFORE = ["deploy", "redeploy", "rebuild", "backup", "restore", "verify"];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("rollbacks")
    .addColumn("rollback_id", "text", (c) => c.primaryKey())
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("deployment_id", "text", (c) => c.references("deployments.deployment_id").onDelete("set null"))
    .addColumn("server_id", "text")
    .addColumn("image", "text", (c) => c.notNull())
    .addColumn("image_id", "text", (c) => c.notNull())
    .addColumn("registry_id", "text", (c) => c.references("registries.registry_id").onDelete("set null"))
    .addColumn("registry_image", "text")
    .addColumn("spec_sealed", "text", (c) => c.notNull())
    .addColumn("version", "serial", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("rollbacks_application_idx")
    .on("rollbacks")
    .columns(["application_id", "created_at"])
    .execute();
  await db.schema
    .alterTable("deployments")
    .addColumn("rollback_id", "text", (c) => c.references("rollbacks.rollback_id").onDelete("set null"))
    .addColumn("restores_rollback_id", "text", (c) =>
      c.references("rollbacks.rollback_id").onDelete("set null"),
    )
    .execute();
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in (${sql.join(
    [...KINDS_BEFORE, "rollback"].map((kind) => sql.lit(kind)),
  )}))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from deployments where kind = 'rollback'`.execute(db);
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in (${sql.join(
    KINDS_BEFORE.map((kind) => sql.lit(kind)),
  )}))`.execute(db);
  await db.schema
    .alterTable("deployments")
    .dropColumn("rollback_id")
    .dropColumn("restores_rollback_id")
    .execute();
  await db.schema.dropTable("rollbacks").ifExists().execute();
}
