/**
 * Losing a copy (issue 40 item 1): the per-session rate limit is kept in PostgreSQL, so a session
 * spread over several control planes has one bucket, not one per copy. UNLOGGED: a bucket is
 * written on most requests and worth nothing after a crash (an emptied table starts every
 * session full, which is what a restart did before).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unlogged table session_rate_buckets (
    session_id text primary key,
    tokens double precision not null,
    granted integer not null,
    updated_at timestamptz not null default now()
  )`.execute(db);
  await db.schema
    .createIndex("session_rate_buckets_updated_at_idx")
    .on("session_rate_buckets")
    .column("updated_at")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("session_rate_buckets").execute();
}
