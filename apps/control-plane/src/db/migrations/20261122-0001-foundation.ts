/** Foundation tables: organizations, users, members, sessions, API keys, invitations, projects, environments. */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`;
  await db.schema
    .createTable("users")
    .addColumn("user_id", "text", (c) => c.primaryKey())
    .addColumn("email", "text", (c) => c.notNull().unique())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("image", "text")
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("organizations")
    .addColumn("organization_id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("owner_id", "text", (c) => c.notNull().references("users.user_id"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("members")
    .addColumn("member_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
    .addColumn("can_create_projects", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("can_delete_projects", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("can_access_audit_log", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("members_organization_user_unique", ["organization_id", "user_id"])
    .execute();
  await db.schema.createIndex("members_user_idx").on("members").column("user_id").execute();

  await db.schema
    .createTable("sessions")
    .addColumn("session_id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("active_organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("revoked_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("api_key_id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("prefix", "text")
    .addColumn("start", "text", (c) => c.notNull())
    .addColumn("key_hash", "text", (c) => c.notNull().unique())
    .addColumn("metadata", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("expires_at", "timestamptz")
    .addColumn("rate_limit_enabled", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("rate_limit_time_window_ms", "integer")
    .addColumn("rate_limit_max", "integer")
    .addColumn("bucket_tokens", "double precision")
    .addColumn("bucket_updated_at", "timestamptz")
    .addColumn("remaining", "integer")
    .addColumn("refill_amount", "integer")
    .addColumn("refill_interval_ms", "integer")
    .addColumn("last_refill_at", "timestamptz")
    .addColumn("last_used_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("api_keys_user_idx").on("api_keys").column("user_id").execute();

  await db.schema
    .createTable("invitations")
    .addColumn("invitation_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
    .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("inviter_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("invitations_email_idx").on("invitations").column("email").execute();

  await db.schema
    .createTable("projects")
    .addColumn("project_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("env", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("projects_organization_idx").on("projects").column("organization_id").execute();

  await db.schema
    .createTable("environments")
    .addColumn("environment_id", "text", (c) => c.primaryKey())
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.project_id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("env", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("is_default", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("environments_project_name_unique", ["project_id", "name"])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "environments",
    "projects",
    "invitations",
    "api_keys",
    "sessions",
    "members",
    "organizations",
    "users",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
