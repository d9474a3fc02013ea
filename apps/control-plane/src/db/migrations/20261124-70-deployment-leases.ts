/**
 * deployment_leases: which control plane follows a running deployment, until when (renewed
 * while it does). Several control planes on one database: recovery takes over only a
 * deployment whose lease ran out (its control plane died), and exactly one of them does.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("deployment_leases")
    .addColumn("deployment_id", "text", (column) =>
      column.primaryKey().references("deployments.deployment_id").onDelete("cascade"),
    )
    .addColumn("owner", "text", (column) => column.notNull())
    .addColumn("until", "timestamptz", (column) => column.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("deployment_leases").execute();
}
