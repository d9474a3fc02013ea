/**
 * Trust on first use of a server's SSH host key: the first server.setup records the SHA-256
 * fingerprint the server presented; later setups refuse a different one.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("servers").addColumn("host_key_sha256", "text").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("servers").dropColumn("host_key_sha256").execute();
}
