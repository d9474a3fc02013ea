/**
 * At most one running deployment per service (issue 40 item 6e): a partial unique index on the
 * running deployments of a target, so that the claim `idle -> running` of a second job of one
 * service is refused by the database itself, whichever copy makes it and whatever the queue
 * handed out (a JetStream message delivered again after its ack wait, a waiting job another
 * copy picked up). A database left with two running deployments of one service (only a copy
 * that died could leave that) keeps the newest running; the older ones end in error, saying so,
 * as the index could not be made otherwise.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update deployments set
      status = 'error',
      error_message = 'Interrupted: another deployment of this service was running at the same time',
      completed_at = now()
    where status = 'running'
      and exists (
        select 1 from deployments newer
        where newer.status = 'running'
          and newer.target_kind = deployments.target_kind
          and newer.target_id = deployments.target_id
          and (newer.created_at, newer.deployment_id) > (deployments.created_at, deployments.deployment_id)
      )`.execute(db);
  await sql`create unique index deployments_one_running_per_target
    on deployments (target_kind, target_id) where status = 'running'`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists deployments_one_running_per_target`.execute(db);
}
