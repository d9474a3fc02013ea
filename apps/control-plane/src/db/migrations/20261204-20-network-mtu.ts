/** networks.mtu: the MTU an organization network was created with (Dokploy CLI's network.create --mtu). */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("networks").addColumn("mtu", "integer").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("networks").dropColumn("mtu").execute();
}
