/**
 * Organization networks (network.*, issue 39 item 4): overlay networks an organization creates
 * on one of its servers (server_id null: this machine) for its services. `name` is the name the
 * organization chose; `docker_name` the engine's, namespaced by the organization
 * (organizationNetworkName), so two organizations' names never collide on a shared engine.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("networks")
    .addColumn("network_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("server_id", "text", (c) => c.references("servers.server_id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("docker_name", "text", (c) => c.notNull())
    .addColumn("driver", "text", (c) => c.notNull().check(sql`driver in ('overlay', 'bridge')`))
    .addColumn("internal", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("attachable", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("enable_ipv6", "boolean", (c) => c.notNull().defaultTo(false))
    // The engine's id, once created.
    .addColumn("docker_id", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  // One name per organization and server (this machine's networks: server_id null).
  await sql`create unique index networks_org_server_name on networks (organization_id, coalesce(server_id, ''), name)`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("networks").execute();
}
