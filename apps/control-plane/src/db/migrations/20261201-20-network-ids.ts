/**
 * networkIds (issue 39 item 4) on database services and compose stacks as applications have it:
 * ids of the organization's networks (the networks table) the service joins besides the
 * platform network. Applications stored engine names until now: an entry naming a recorded
 * network's engine name becomes that network's id (engine names carry the organization's
 * prefix, so one names at most one row).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ["database_services", "compose"]) {
    await db.schema
      .alterTable(table)
      .addColumn("network_ids", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
      .execute();
  }
  await sql`
    update applications set network_ids = array(
      select coalesce(n.network_id, entry)
      from unnest(applications.network_ids) with ordinality as e(entry, position)
      left join networks n on n.docker_name = e.entry
      order by e.position
    )
    where cardinality(network_ids) > 0`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["database_services", "compose"]) {
    await db.schema.alterTable(table).dropColumn("network_ids").execute();
  }
}
