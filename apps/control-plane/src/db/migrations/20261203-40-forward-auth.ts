/**
 * Forward auth (forwardAuth.*, issue 41 item 6): an organization's OIDC providers for it (client
 * secret sealed), one authentication service per server (its auth domain, the provider it signs in
 * with, its sealed cookie secret) and the domains it protects.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("forward_auth_providers")
    .addColumn("provider_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("issuer", "text", (c) => c.notNull())
    .addColumn("domain", "text")
    .addColumn("client_id", "text", (c) => c.notNull())
    .addColumn("client_secret_sealed", "text", (c) => c.notNull())
    .addColumn("scopes", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable("forward_auth_settings")
    .addColumn("forward_auth_settings_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    // null: this machine (the instance organization's).
    .addColumn("server_id", "text", (c) => c.references("servers.server_id").onDelete("cascade"))
    .addColumn("auth_domain", "text", (c) => c.notNull())
    .addColumn("base_domain", "text", (c) => c.notNull())
    .addColumn("https", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("certificate_type", "text", (c) => c.notNull().defaultTo("letsencrypt"))
    .addColumn("custom_cert_resolver", "text")
    .addColumn("provider_id", "text", (c) =>
      c.references("forward_auth_providers.provider_id").onDelete("set null"),
    )
    .addColumn("cookie_secret_sealed", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("forward_auth_settings_auth_domain_unique", ["auth_domain"])
    .execute();
  await sql`create unique index forward_auth_settings_server_unique on forward_auth_settings ((coalesce(server_id, '')))`.execute(
    db,
  );
  await db.schema
    .createTable("forward_auth_domains")
    .addColumn("domain_id", "text", (c) => c.primaryKey().references("domains.domain_id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("forward_auth_domains").execute();
  await db.schema.dropTable("forward_auth_settings").execute();
  await db.schema.dropTable("forward_auth_providers").execute();
}
