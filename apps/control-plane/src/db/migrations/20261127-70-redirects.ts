/**
 * Redirects of an application (Dokploy's `redirects` router, issue 27 item 7): a regex, its
 * replacement and whether it is permanent, generated as a redirectRegex middleware in the
 * application's Traefik file. `unique_config_key` names the middleware, as Dokploy's does.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("redirects")
    .addColumn("redirect_id", "text", (c) => c.primaryKey())
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("regex", "text", (c) => c.notNull())
    .addColumn("replacement", "text", (c) => c.notNull())
    .addColumn("permanent", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("unique_config_key", "serial", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("redirects_application_idx").on("redirects").column("application_id").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("redirects").ifExists().execute();
}
