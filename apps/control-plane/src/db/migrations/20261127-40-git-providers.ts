/**
 * Git provider connections (spec 2.12, 4.12): one row per GitHub App, GitLab or Gitea OAuth
 * application, or Bitbucket account of an organization. `provider_id` is the kind's own id
 * (githubId, gitlabId, bitbucketId, giteaId, which applications refer to); `settings` holds the
 * kind's plain fields as JSON; `secrets_sealed` the kind's secrets (private key, client secret,
 * access and refresh tokens, webhook secret, app password, API token) as one SecretBox-sealed JSON
 * object, never returned. Writes notify application.one's cache (hasGitProviderAccess reads it).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("git_providers")
    .addColumn("git_provider_id", "text", (c) => c.primaryKey())
    .addColumn("provider_id", "text", (c) => c.notNull().unique())
    .addColumn("provider_type", "text", (c) =>
      c.notNull().check(sql`provider_type in ('github', 'gitlab', 'bitbucket', 'gitea')`),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("user_id", "text")
    .addColumn("settings", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("secrets_sealed", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("git_providers_organization_idx")
    .on("git_providers")
    .column("organization_id")
    .execute();
  await sql`create trigger git_providers_notify_application_details
    after insert or update or delete or truncate on git_providers
    for each statement execute function platform_notify_application_details()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("git_providers").execute();
}
