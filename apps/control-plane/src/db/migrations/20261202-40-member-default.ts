/**
 * organization.setDefault (issue 41): the organization a user's sessions start in when login names
 * none (one membership per user at most carries it).
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("members")
    .addColumn("is_default", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("members").dropColumn("is_default").execute();
}
