/**
 * Dokploy's Swarm fields on database services (its <kind>.update takes them as it does for
 * applications): replicas, health check, restart policy, placement, update/rollback
 * configuration, mode, labels, networks, stop grace period, endpoint spec and ulimits (JSON as
 * Docker names them). The next deploy applies them to the Swarm service. And the reason
 * reconciliation gives for an error status, as applications have it.
 */
import type { Kysely } from "kysely";

const JSON_COLUMNS = [
  "health_check_swarm",
  "restart_policy_swarm",
  "placement_swarm",
  "update_config_swarm",
  "rollback_config_swarm",
  "mode_swarm",
  "labels_swarm",
  "network_swarm",
  "endpoint_spec_swarm",
  "ulimits_swarm",
] as const;

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  let table = db.schema
    .alterTable("database_services")
    .addColumn("replicas", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("stop_grace_period_swarm", "bigint")
    .addColumn("application_status_message", "text");
  for (const column of JSON_COLUMNS) table = table.addColumn(column, "jsonb");
  await table.execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  let table = db.schema
    .alterTable("database_services")
    .dropColumn("replicas")
    .dropColumn("stop_grace_period_swarm")
    .dropColumn("application_status_message");
  for (const column of JSON_COLUMNS) table = table.dropColumn(column);
  await table.execute();
}
