/**
 * DNS providers (dnsProvider.*, issue 41 item 5): an organization's Cloudflare accounts, whose
 * zones and records the platform lists and edits. The API token is sealed. A domain may name
 * one (dns_provider_id): its A/AAAA record pointing at the server is created with it, and the
 * zone and record ids are kept so the record follows the domain (renamed, deleted). Removing a
 * provider detaches its domains (their records stay at the provider).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("dns_providers")
    .addColumn("dns_provider_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("provider_type", "text", (c) => c.notNull())
    .addColumn("api_token_sealed", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("dns_providers_organization_name_unique", ["organization_id", "name"])
    .execute();
  await db.schema
    .alterTable("domains")
    .addColumn("dns_provider_id", "text", (c) =>
      c.references("dns_providers.dns_provider_id").onDelete("set null"),
    )
    .addColumn("dns_zone_id", "text")
    .addColumn("dns_record_id", "text")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("domains").dropColumn("dns_record_id").execute();
  await db.schema.alterTable("domains").dropColumn("dns_zone_id").execute();
  await db.schema.alterTable("domains").dropColumn("dns_provider_id").execute();
  await db.schema.dropTable("dns_providers").execute();
}
