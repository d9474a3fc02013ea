/**
 * Invalidation of the in-process application details (applications/detail-cache.ts): every write
 * to a table application.one's answer reads (the application, its environment and project, its
 * deployments and the database services they are joined with, its domains, ports and
 * credentials), also through cascades, sends a NOTIFY on `platform_application_details`,
 * delivered at commit to every control plane on the database. A separate channel from the
 * project trees', so that a deployment's progress does not empty the trees.
 */
import { type Kysely, sql } from "kysely";

const DETAIL_TABLES = [
  "applications",
  "environments",
  "projects",
  "deployments",
  "database_services",
  "domains",
  "ports",
  "security",
];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function platform_notify_application_details() returns trigger language plpgsql as $$
    begin
      perform pg_notify('platform_application_details', tg_table_name);
      return null;
    end $$`.execute(db);
  for (const table of DETAIL_TABLES) {
    await sql`create trigger ${sql.id(`${table}_notify_application_details`)}
      after insert or update or delete or truncate on ${sql.table(table)}
      for each statement execute function platform_notify_application_details()`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of DETAIL_TABLES) {
    await sql`drop trigger if exists ${sql.id(`${table}_notify_application_details`)} on ${sql.table(table)}`.execute(
      db,
    );
  }
  await sql`drop function if exists platform_notify_application_details()`.execute(db);
}
