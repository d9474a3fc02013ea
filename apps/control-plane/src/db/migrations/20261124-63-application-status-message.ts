/**
 * applications.application_status_message: why reconciliation (deployments/reconcile.ts) set
 * the application's status to error (its service missing, scaled to 0 or failing); null when
 * the status comes from the last deployment.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("applications").addColumn("application_status_message", "text").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("applications").dropColumn("application_status_message").execute();
}
