/**
 * The OAuth `state` of a GitLab or Gitea authorization (issue 37 finding 5): minted for the
 * member who asked for the authorize link, bound to one provider and organization, valid for ten
 * minutes and for one callback. Only its sha256 is kept. Removing the provider, the user or the
 * organization removes its states.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("oauth_states")
    .addColumn("state_hash", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('gitlab', 'gitea')`))
    .addColumn("provider_id", "text", (c) =>
      c.notNull().references("git_providers.provider_id").onDelete("cascade"),
    )
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("oauth_states_expires_at_idx")
    .on("oauth_states")
    .column("expires_at")
    .execute();
  await db.schema.createIndex("oauth_states_provider_idx").on("oauth_states").column("provider_id").execute();
  await db.schema.createIndex("oauth_states_user_idx").on("oauth_states").column("user_id").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("oauth_states").execute();
}
