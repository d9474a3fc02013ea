/**
 * Dokploy's member permissions (user.assignPermissions): the projects, environments and
 * services a member may see and act on, and the flags. A NULL list means "not restricted" (every
 * project, environment or service of the organization), which is what members had before these
 * columns; an owner restricts a member by assigning a list. Creating services and environments
 * stays allowed by default for the same reason.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("members")
    .addColumn("accessed_projects", sql`text[]`)
    .addColumn("accessed_environments", sql`text[]`)
    .addColumn("accessed_services", sql`text[]`)
    .addColumn("can_create_services", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("can_delete_services", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("can_create_environments", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("can_delete_environments", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("can_access_to_docker", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("can_access_to_traefik_files", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("can_access_to_api", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("can_access_to_ssh_keys", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("can_access_to_git_providers", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [
    "accessed_projects",
    "accessed_environments",
    "accessed_services",
    "can_create_services",
    "can_delete_services",
    "can_create_environments",
    "can_delete_environments",
    "can_access_to_docker",
    "can_access_to_traefik_files",
    "can_access_to_api",
    "can_access_to_ssh_keys",
    "can_access_to_git_providers",
  ]) {
    await db.schema.alterTable("members").dropColumn(column).execute();
  }
}
