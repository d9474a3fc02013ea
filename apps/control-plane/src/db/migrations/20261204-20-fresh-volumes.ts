/** deployments.fresh_volumes: a stack deployment that first removes the stack's own volumes (compose.deploy freshVolumes). */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("deployments")
    .addColumn("fresh_volumes", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("deployments").dropColumn("fresh_volumes").execute();
}
