/**
 * Tags (tag.*, issue 41 item 3): an organization's labels, assigned to its projects. Both tables
 * notify `platform_project_trees` (migration 20261125-20-project-tree-invalidation), as project.all
 * carries each project's tags: a tag renamed, recoloured, removed (cascading to project_tags) or
 * assigned is in the next answer of every control plane.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("tags")
    .addColumn("tag_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("color", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("tags_organization_name_unique", ["organization_id", "name"])
    .execute();
  await db.schema
    .createTable("project_tags")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.project_id").onDelete("cascade"))
    .addColumn("tag_id", "text", (c) => c.notNull().references("tags.tag_id").onDelete("cascade"))
    .addUniqueConstraint("project_tags_project_tag_unique", ["project_id", "tag_id"])
    .execute();
  await db.schema.createIndex("project_tags_tag").on("project_tags").column("tag_id").execute();
  for (const table of ["tags", "project_tags"]) {
    await sql`create trigger ${sql.id(`${table}_notify_project_trees`)}
      after insert or update or delete or truncate on ${sql.table(table)}
      for each statement execute function platform_notify_project_trees()`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("project_tags").execute();
  await db.schema.dropTable("tags").execute();
}
