/**
 * Build servers (issue 27 item 4): `deployments.build_server_id` is the build server whose agent
 * built the deployment's image (the application's `buildServerId` when it ran); null when the
 * image was built where it runs, or not built at all. A removed server leaves the record (set
 * null), as a removed target server does.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("deployments")
    .addColumn("build_server_id", "text", (c) => c.references("servers.server_id").onDelete("set null"))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("deployments").dropColumn("build_server_id").execute();
}
