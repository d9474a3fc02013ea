/**
 * Invalidation of the in-process caller cache (auth/caller-cache.ts): every write that can
 * change who a credential stands for (a session revoked, expired or moved to another
 * organization, an API key deleted or its expiry or limits changed, a membership added, changed
 * or removed, a user changed or deleted, also through cascades) sends a NOTIFY on
 * `platform_callers`, delivered at commit to every control plane on the database.
 *
 * api_keys notify only for the columns that decide whether and until when a key may be cached:
 * spending a use or a rate-limit token (every request of a limited key) must not flush them.
 */
import { type Kysely, sql } from "kysely";

const STATEMENT_TRIGGERS = [
  ["sessions", "update or delete"],
  ["api_keys", "delete"],
  ["members", "insert or update or delete"],
  ["users", "update or delete"],
] as const;

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function platform_notify_callers() returns trigger language plpgsql as $$
    begin
      perform pg_notify('platform_callers', tg_table_name);
      return null;
    end $$`.execute(db);
  for (const [table, events] of STATEMENT_TRIGGERS) {
    await sql`create trigger ${sql.id(`${table}_notify_callers`)} after ${sql.raw(events)} on ${sql.table(table)}
      for each statement execute function platform_notify_callers()`.execute(db);
  }
  await sql`create trigger api_keys_update_notify_callers after update on api_keys for each row
    when (old.expires_at is distinct from new.expires_at
      or old.user_id <> new.user_id
      or old.organization_id <> new.organization_id
      or old.key_hash <> new.key_hash
      or (old.remaining is null) <> (new.remaining is null)
      or old.rate_limit_enabled <> new.rate_limit_enabled
      or old.rate_limit_max is distinct from new.rate_limit_max
      or old.rate_limit_time_window_ms is distinct from new.rate_limit_time_window_ms)
    execute function platform_notify_callers()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists api_keys_update_notify_callers on api_keys`.execute(db);
  for (const [table] of STATEMENT_TRIGGERS) {
    await sql`drop trigger if exists ${sql.id(`${table}_notify_callers`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists platform_notify_callers()`.execute(db);
}
