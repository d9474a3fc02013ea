/**
 * Dokploy's domain fields customEntrypoint (the Traefik entry point the domain's router listens
 * on instead of web/websecure) and middlewares (extra Traefik middlewares by name, in order).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("domains")
    .addColumn("custom_entrypoint", "text")
    .addColumn("middlewares", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("domains").dropColumn("custom_entrypoint").dropColumn("middlewares").execute();
}
