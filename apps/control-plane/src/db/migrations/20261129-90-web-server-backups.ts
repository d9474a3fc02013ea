/**
 * The control plane's own database as a backup target (Dokploy's "web-server" backup, issue 32
 * item 2): a backup row of databaseType `web-server` names no database service (database_id is
 * null exactly for it). Its runs are deployments of target kind `webServer` whose target is the
 * backup itself (web_server_backup_id, taken with the backup: its runs go one at a time and apart
 * from every service's deployments).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table backups drop constraint backups_database_type_check`.execute(db);
  await sql`alter table backups add constraint backups_database_type_check check (database_type in ('postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'web-server'))`.execute(
    db,
  );
  await sql`alter table backups alter column database_id drop not null`.execute(db);
  await sql`alter table backups add constraint backups_web_server check ((database_type = 'web-server') = (database_id is null))`.execute(
    db,
  );
  await db.schema
    .alterTable("deployments")
    .addColumn("web_server_backup_id", "text", (c) => c.references("backups.backup_id").onDelete("cascade"))
    .execute();
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id, compose_id, schedule_id, preview_deployment_id, web_server_backup_id) = 1)`.execute(
    db,
  );
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id) or
    (target_kind = 'database' and database_id = target_id) or
    (target_kind = 'compose' and compose_id = target_id) or
    (target_kind = 'schedule' and schedule_id = target_id) or
    (target_kind = 'preview' and preview_deployment_id = target_id) or
    (target_kind = 'webServer' and web_server_backup_id = target_id))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom("deployments").where("web_server_backup_id", "is not", null).execute();
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id) or
    (target_kind = 'database' and database_id = target_id) or
    (target_kind = 'compose' and compose_id = target_id) or
    (target_kind = 'schedule' and schedule_id = target_id) or
    (target_kind = 'preview' and preview_deployment_id = target_id))`.execute(db);
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id, compose_id, schedule_id, preview_deployment_id) = 1)`.execute(
    db,
  );
  await db.schema.alterTable("deployments").dropColumn("web_server_backup_id").execute();
  await db.deleteFrom("backups").where("database_type", "=", "web-server").execute();
  await sql`alter table backups drop constraint backups_web_server`.execute(db);
  await sql`alter table backups alter column database_id set not null`.execute(db);
  await sql`alter table backups drop constraint backups_database_type_check`.execute(db);
  await sql`alter table backups add constraint backups_database_type_check check (database_type in ('postgres', 'mysql', 'mariadb', 'mongo', 'redis'))`.execute(
    db,
  );
}
