/**
 * Application ports (Dokploy's `port` router): a published port of the application's Swarm
 * service. One (publishedPort, protocol) pair per application; they apply on the next deploy.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("ports")
    .addColumn("port_id", "text", (c) => c.primaryKey())
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("published_port", "integer", (c) => c.notNull().check(sql`published_port between 1 and 65535`))
    .addColumn("target_port", "integer", (c) => c.notNull().check(sql`target_port between 1 and 65535`))
    .addColumn("protocol", "text", (c) => c.notNull().defaultTo("tcp").check(sql`protocol in ('tcp', 'udp')`))
    .addColumn("publish_mode", "text", (c) =>
      c.notNull().defaultTo("host").check(sql`publish_mode in ('host', 'ingress')`),
    )
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("ports_application_published_protocol_unique", [
      "application_id",
      "published_port",
      "protocol",
    ])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("ports").ifExists().execute();
}
