/**
 * Patches (Dokploy's `patch` router, issue 41): files of an application's or a compose stack's
 * repository replaced, created or deleted at build time. Kept here as rows (Dokploy keeps a patch
 * repository of its own); one patch per file of a service, as Dokploy's unique constraints say.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("patches")
    .addColumn("patch_id", "text", (c) => c.primaryKey())
    .addColumn("type", "text", (c) => c.notNull().defaultTo("update"))
    .addColumn("file_path", "text", (c) => c.notNull())
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("application_id", "text", (c) =>
      c.references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("compose_id", "text", (c) => c.references("compose.compose_id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint("patches_type_check", sql`type in ('create', 'update', 'delete')`)
    .addCheckConstraint("patches_one_service_check", sql`(application_id is null) <> (compose_id is null)`)
    .addUniqueConstraint("patches_file_path_application_unique", ["application_id", "file_path"])
    .addUniqueConstraint("patches_file_path_compose_unique", ["compose_id", "file_path"])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("patches").ifExists().execute();
}
