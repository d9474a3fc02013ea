/**
 * libsql (issue 41): a sixth database kind in database_services (sqld, Dokploy's libsql
 * router). Its own columns: the sqld node role (primary or replica), the primary's URL a replica
 * follows, whether namespaces are enabled, and the two further ports sqld can publish (gRPC
 * 5001, admin 5000). The kind checks of database_services and backups are widened to take it.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("database_services")
    .addColumn("sqld_node", "text", (c) =>
      c.notNull().defaultTo("primary").check(sql`sqld_node in ('primary', 'replica')`),
    )
    .addColumn("sqld_primary_url", "text")
    .addColumn("enable_namespaces", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("external_grpc_port", "integer")
    .addColumn("external_admin_port", "integer")
    .execute();
  await sql`alter table database_services drop constraint database_services_kind_check`.execute(db);
  await sql`alter table database_services add constraint database_services_kind_check check (kind in ('postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'libsql'))`.execute(
    db,
  );
  await sql`alter table backups drop constraint backups_database_type_check`.execute(db);
  await sql`alter table backups add constraint backups_database_type_check check (database_type in ('postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'web-server', 'libsql'))`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table backups drop constraint backups_database_type_check`.execute(db);
  await sql`alter table backups add constraint backups_database_type_check check (database_type in ('postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'web-server'))`.execute(
    db,
  );
  await sql`alter table database_services drop constraint database_services_kind_check`.execute(db);
  await sql`alter table database_services add constraint database_services_kind_check check (kind in ('postgres', 'mysql', 'mariadb', 'mongo', 'redis'))`.execute(
    db,
  );
  await db.schema
    .alterTable("database_services")
    .dropColumn("sqld_node")
    .dropColumn("sqld_primary_url")
    .dropColumn("enable_namespaces")
    .dropColumn("external_grpc_port")
    .dropColumn("external_admin_port")
    .execute();
}
