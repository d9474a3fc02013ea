/**
 * Login throttling counters, shared by every control plane on the database: one row per
 * account (`account:<email>`) or client address (`address:<ip>`), counting attempts in a fixed
 * window that starts with the first attempt.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("login_throttle")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("window_started_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("login_throttle_window_idx")
    .on("login_throttle")
    .column("window_started_at")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("login_throttle").execute();
}
