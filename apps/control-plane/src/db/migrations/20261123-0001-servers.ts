/** Servers, the SSH keys used to set them up, and one-time agent enrollment tokens. */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`;
  await db.schema
    .createTable("ssh_keys")
    .addColumn("ssh_key_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("public_key", "text", (c) => c.notNull())
    // AES-256-GCM sealed through SecretBox; never leaves the control plane except to ssh2.
    .addColumn("private_key_sealed", "text", (c) => c.notNull())
    .addColumn("last_used_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("ssh_keys_organization_idx").on("ssh_keys").column("organization_id").execute();

  await db.schema
    .createTable("servers")
    .addColumn("server_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("ip_address", "text", (c) => c.notNull())
    .addColumn("port", "integer", (c) => c.notNull().defaultTo(22))
    .addColumn("username", "text", (c) => c.notNull())
    .addColumn("ssh_key_id", "text", (c) => c.references("ssh_keys.ssh_key_id").onDelete("set null"))
    .addColumn("server_type", "text", (c) =>
      c.notNull().defaultTo("deploy").check(sql`server_type in ('deploy', 'build')`),
    )
    .addColumn("server_status", "text", (c) =>
      c.notNull().defaultTo("inactive").check(sql`server_status in ('inactive', 'active')`),
    )
    // The agent's nkey public key once it enrolled; its NATS user JWT is bound to it.
    .addColumn("agent_public_key", "text")
    .addColumn("agent_version", "text")
    .addColumn("enrolled_at", "timestamptz")
    .addColumn("last_heartbeat_at", "timestamptz")
    // Output of the last server.setup run (SSH bootstrap), for progress and diagnosis.
    .addColumn("setup_log", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("servers_organization_idx").on("servers").column("organization_id").execute();

  await db.schema
    .createTable("agent_enrollments")
    // sha256 of the one-time token; the token itself is shown once and never stored.
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("server_id", "text", (c) => c.notNull().references("servers.server_id").onDelete("cascade"))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["agent_enrollments", "servers", "ssh_keys"]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
