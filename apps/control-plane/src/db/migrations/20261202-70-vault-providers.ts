/**
 * Secret vaults (vaultProvider.*, issue 41 item 7): an organization's external secret stores
 * (HashiCorp Vault KV v2), whose secrets a service's variables name as
 * `${{vault.<name>.<path>:<field>}}` and the deploy reads. The token is sealed; the values read
 * are never stored. `assignments` lists the projects (and environments) allowed to use it.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("vault_providers")
    .addColumn("vault_provider_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("provider_type", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("mount", "text", (c) => c.notNull())
    .addColumn("namespace", "text")
    .addColumn("token_sealed", "text", (c) => c.notNull())
    .addColumn("assignments", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("vault_providers_organization_name_unique", ["organization_id", "name"])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("vault_providers").execute();
}
