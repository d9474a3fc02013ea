/**
 * gitProvider.toggleShare (issue 41): a provider its creator stops sharing is seen and used only by
 * them (and the organization's owners and administrators). Existing and new providers stay shared,
 * as every provider was the organization's before.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("git_providers")
    .addColumn("shared_with_organization", "boolean", (c) => c.notNull().defaultTo(true))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("git_providers").dropColumn("shared_with_organization").execute();
}
