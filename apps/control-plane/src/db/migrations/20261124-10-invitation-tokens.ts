/**
 * Invitations are accepted with a secret token, shown once to the inviting administrator; only
 * its SHA-256 is kept. Invitations made before have none and can no longer be accepted.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("invitations").addColumn("token_hash", "text").execute();
  await db.schema
    .createIndex("invitations_token_hash_idx")
    .on("invitations")
    .column("token_hash")
    .unique()
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("invitations_token_hash_idx").execute();
  await db.schema.alterTable("invitations").dropColumn("token_hash").execute();
}
