/**
 * Invalidation of the in-process project trees (projects/tree-cache.ts): every write to a table
 * the tree reads (projects, environments, and each service kind's summary table), also through
 * cascades, sends a NOTIFY on `platform_project_trees`, delivered at commit to every control
 * plane on the database. Any update notifies, not only one of a summary's columns, so a column
 * later added to a summary needs no new trigger. The cache checks at run time that the summary
 * table of every registered service kind has its trigger (projects/tree-cache.ts).
 */
import { type Kysely, sql } from "kysely";

const TREE_TABLES = ["projects", "environments", "applications", "database_services"];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function platform_notify_project_trees() returns trigger language plpgsql as $$
    begin
      perform pg_notify('platform_project_trees', tg_table_name);
      return null;
    end $$`.execute(db);
  for (const table of TREE_TABLES) {
    await sql`create trigger ${sql.id(`${table}_notify_project_trees`)}
      after insert or update or delete or truncate on ${sql.table(table)}
      for each statement execute function platform_notify_project_trees()`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TREE_TABLES) {
    await sql`drop trigger if exists ${sql.id(`${table}_notify_project_trees`)} on ${sql.table(table)}`.execute(
      db,
    );
  }
  await sql`drop function if exists platform_notify_project_trees()`.execute(db);
}
