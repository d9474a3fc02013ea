/**
 * A deployment names its target by kind and id (`target_kind`, `target_id`): the one key the
 * queue, the worker, recovery and the stops use for every service kind (deployments/targets.ts
 * holds what differs per kind). The per-kind columns (`application_id`, `database_id`) stay only
 * as foreign keys, so that deleting a service deletes its deployments; a check keeps them equal
 * to the target. A new service kind adds its kind to the check and its own foreign key column.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("deployments").addColumn("target_kind", "text").execute();
  await db.schema.alterTable("deployments").addColumn("target_id", "text").execute();
  await sql`update deployments set
    target_kind = case when application_id is not null then 'application' else 'database' end,
    target_id = coalesce(application_id, database_id)`.execute(db);
  await db.schema
    .alterTable("deployments")
    .alterColumn("target_kind", (c) => c.setNotNull())
    .execute();
  await db.schema
    .alterTable("deployments")
    .alterColumn("target_id", (c) => c.setNotNull())
    .execute();
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id and database_id is null) or
    (target_kind = 'database' and database_id = target_id and application_id is null))`.execute(db);
  await db.schema
    .createIndex("deployments_target_idx")
    .on("deployments")
    .columns(["target_id", "created_at"])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("deployments_target_idx").ifExists().execute();
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await db.schema.alterTable("deployments").dropColumn("target_id").execute();
  await db.schema.alterTable("deployments").dropColumn("target_kind").execute();
}
