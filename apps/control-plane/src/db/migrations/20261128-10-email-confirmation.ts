/**
 * The confirmation of a requested new email (issue 24, issue 22 finding 5): the SHA-256 of the
 * secret token an Email or Resend channel sends to the new address, and when it stops working.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("users")
    .addColumn("pending_email_token_hash", "text")
    .addColumn("pending_email_expires_at", "timestamptz")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("users")
    .dropColumn("pending_email_token_hash")
    .dropColumn("pending_email_expires_at")
    .execute();
}
