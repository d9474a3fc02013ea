/**
 * The rest of Dokploy's application fields (issue 11): Swarm placement, update/rollback
 * configuration, mode, labels, networks, stop grace period, endpoint spec and ulimits (JSON as
 * Docker names them), preview certificate settings and build secrets, build architecture and
 * server, and the display fields. application.update sets them; application.one shows them.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("applications")
    .addColumn("placement_swarm", "jsonb")
    .addColumn("update_config_swarm", "jsonb")
    .addColumn("rollback_config_swarm", "jsonb")
    .addColumn("mode_swarm", "jsonb")
    .addColumn("labels_swarm", "jsonb")
    .addColumn("network_swarm", "jsonb")
    .addColumn("stop_grace_period_swarm", "bigint")
    .addColumn("endpoint_spec_swarm", "jsonb")
    .addColumn("ulimits_swarm", "jsonb")
    .addColumn("preview_build_secrets_sealed", "text")
    .addColumn("preview_certificate_type", "text", (c) =>
      c.notNull().defaultTo("none").check(sql`preview_certificate_type in ('letsencrypt', 'none', 'custom')`),
    )
    .addColumn("preview_custom_cert_resolver", "text")
    .addColumn("rollback_active", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("build_architecture", "text", (c) =>
      c.notNull().defaultTo("host").check(sql`build_architecture in ('host', 'amd64', 'arm64', 'multi')`),
    )
    .addColumn("buildx_builder", "text")
    .addColumn("build_server_id", "text", (c) => c.references("servers.server_id").onDelete("set null"))
    .addColumn("network_ids", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("detach_dokploy_network", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("drop_build_path", "text")
    .addColumn("title", "text")
    .addColumn("subtitle", "text")
    .addColumn("enabled", "boolean")
    .addColumn("icon", "text")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [
    "placement_swarm",
    "update_config_swarm",
    "rollback_config_swarm",
    "mode_swarm",
    "labels_swarm",
    "network_swarm",
    "stop_grace_period_swarm",
    "endpoint_spec_swarm",
    "ulimits_swarm",
    "preview_build_secrets_sealed",
    "preview_certificate_type",
    "preview_custom_cert_resolver",
    "rollback_active",
    "build_architecture",
    "buildx_builder",
    "build_server_id",
    "network_ids",
    "detach_dokploy_network",
    "drop_build_path",
    "title",
    "subtitle",
    "enabled",
    "icon",
  ]) {
    await db.schema.alterTable("applications").dropColumn(column).execute();
  }
}
