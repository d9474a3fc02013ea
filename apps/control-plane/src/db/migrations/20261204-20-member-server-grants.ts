/**
 * members.accessed_servers / accessed_git_providers (user.assignPermissions, Dokploy CLI 0.30.7):
 * the remote servers and git providers a member may use. NULL is not restricted, as the other
 * accessed_* lists, so an upgrade changes no member's reach.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("members")
    .addColumn("accessed_servers", sql`text[]`)
    .addColumn("accessed_git_providers", sql`text[]`)
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("members")
    .dropColumn("accessed_servers")
    .dropColumn("accessed_git_providers")
    .execute();
}
