/**
 * Template bookmarks (user.getBookmarkedTemplates, user.toggleTemplateBookmark, issue 41): the
 * catalogue templates a user marked, per user as Dokploy keeps them (its user row's
 * bookmarkedTemplates), gone with the user.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("template_bookmarks")
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("template_id", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("template_bookmarks_pkey", ["user_id", "template_id"])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("template_bookmarks").execute();
}
