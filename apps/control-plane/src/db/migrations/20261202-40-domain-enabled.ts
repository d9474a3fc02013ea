/**
 * domain.toggleEnable (issue 41): a disabled domain keeps its row and its host but is left out of
 * its service's Traefik file (and a stack's labels) until it is enabled again.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("domains")
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("domains").dropColumn("enabled").execute();
}
