/**
 * Custom certificates of an organization (Dokploy's `certificates` router, issue 27 item 7): a
 * PEM chain and its SecretBox-sealed private key, applied to one server's proxy TLS store.
 * `expires_at` and `hosts` are read from the certificate at save time (shown, and used to find
 * the certificate covering a `custom` domain).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("certificates")
    .addColumn("certificate_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("server_id", "text", (c) => c.references("servers.server_id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("certificate_data", "text", (c) => c.notNull())
    .addColumn("private_key_sealed", "text", (c) => c.notNull())
    .addColumn("auto_renew", "boolean")
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("hosts", sql`text[]`, (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("certificates_organization_idx")
    .on("certificates")
    .column("organization_id")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("certificates").ifExists().execute();
}
