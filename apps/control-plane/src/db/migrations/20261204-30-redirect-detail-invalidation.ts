/**
 * application.one answers the application's redirects (as Dokploy's does, issue 42): a write to
 * `redirects` must empty the application details too (applications/detail-cache.ts), as the
 * other tables the answer reads do (20261127-10-application-detail-invalidation).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create trigger redirects_notify_application_details
    after insert or update or delete or truncate on redirects
    for each statement execute function platform_notify_application_details()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists redirects_notify_application_details on redirects`.execute(db);
}
