/**
 * Container registries (spec 2.1, 4.6) and the applications' references to them: registryId (pull
 * from), buildRegistryId (push built images to), rollbackRegistryId (store rollback images). Removing
 * a registry sets those references to null. Also the optional secret that signs inbound deploy
 * webhooks (GitHub/Gitea HMAC key, GitLab token), sealed like every other secret.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("registries")
    .addColumn("registry_id", "text", (c) => c.primaryKey())
    .addColumn("registry_name", "text", (c) => c.notNull())
    // Normalized to host[:port] (no scheme, no path).
    .addColumn("registry_url", "text", (c) => c.notNull())
    .addColumn("username", "text", (c) => c.notNull())
    // AES-256-GCM sealed through SecretBox; never returned.
    .addColumn("password_sealed", "text", (c) => c.notNull())
    .addColumn("image_prefix", "text")
    .addColumn("registry_type", "text", (c) =>
      c.notNull().defaultTo("cloud").check(sql`registry_type in ('cloud', 'selfHosted')`),
    )
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("registries_organization_idx")
    .on("registries")
    .column("organization_id")
    .execute();

  await db.schema
    .alterTable("applications")
    .addColumn("registry_id", "text", (c) => c.references("registries.registry_id").onDelete("set null"))
    .execute();
  await db.schema
    .alterTable("applications")
    .addColumn("build_registry_id", "text", (c) =>
      c.references("registries.registry_id").onDelete("set null"),
    )
    .execute();
  await db.schema
    .alterTable("applications")
    .addColumn("rollback_registry_id", "text", (c) =>
      c.references("registries.registry_id").onDelete("set null"),
    )
    .execute();
  await db.schema.alterTable("applications").addColumn("webhook_secret_sealed", "text").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("applications").dropColumn("webhook_secret_sealed").execute();
  await db.schema.alterTable("applications").dropColumn("rollback_registry_id").execute();
  await db.schema.alterTable("applications").dropColumn("build_registry_id").execute();
  await db.schema.alterTable("applications").dropColumn("registry_id").execute();
  await db.schema.dropTable("registries").ifExists().execute();
}
