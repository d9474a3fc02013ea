/**
 * A user's requested new email (issue 22 finding 5): kept apart until it is confirmed, so an
 * unconfirmed address never takes an account, an invitation or a registration from anyone.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("users").addColumn("pending_email", "text").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("users").dropColumn("pending_email").execute();
}
