/**
 * The host ports a compose stack's file publishes (`[{ port, protocol }]`), written when the file
 * is stored, so that the port checks of every service on the server (servers/host-ports.ts) see
 * them as they see applications' and databases' ports.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("compose")
    .addColumn("published_ports", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("compose").dropColumn("published_ports").execute();
}
