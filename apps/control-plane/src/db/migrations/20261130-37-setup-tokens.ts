/**
 * The set-up tokens of an unclaimed instance (auth/setup-token.ts): the SHA-256 of each token a
 * control plane printed at start while no user existed. The first registration from another
 * machine needs one; that registration deletes them all.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("setup_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("setup_tokens").execute();
}
