/**
 * Two-factor sign-in (issue 41 item 8, auth/two-factor.ts): a user's TOTP secret (sealed with
 * the SecretBox, `enabled_at` null while the enrolment waits for its first code), the user's
 * recovery codes (SHA-256 of each, spent once), and the half-signed-in challenges auth.login
 * hands out when a second factor is required (SHA-256 of the token, attempts counted).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("user_two_factor")
    .addColumn("user_id", "text", (c) => c.primaryKey().references("users.user_id").onDelete("cascade"))
    .addColumn("secret_sealed", "text", (c) => c.notNull())
    .addColumn("enabled_at", "timestamptz")
    .addColumn("last_used_step", "integer")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable("two_factor_recovery_codes")
    .addColumn("code_id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("code_hash", "text", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .addUniqueConstraint("two_factor_recovery_codes_user_hash_unique", ["user_id", "code_hash"])
    .execute();
  await db.schema
    .createTable("two_factor_challenges")
    .addColumn("challenge_id", "text", (c) => c.primaryKey())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("two_factor_challenges_expires")
    .on("two_factor_challenges")
    .column("expires_at")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("two_factor_challenges").execute();
  await db.schema.dropTable("two_factor_recovery_codes").execute();
  await db.schema.dropTable("user_two_factor").execute();
}
