/**
 * Rollbacks of compose stacks (issue 27 item 2): a rollback belongs to an application or to a
 * stack (exactly one). A stack's rollback keeps several images, one per service
 * (`stack_images`: [{service, image, imageId}], each platform-rollback/<appName>-<service>:<tag>);
 * `image`/`image_id` are an application rollback's one image; `spec_sealed` holds the stack's
 * converted file (its images replaced by the kept ones) and its file mounts, sealed.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("rollbacks")
    .addColumn("compose_id", "text", (c) => c.references("compose.compose_id").onDelete("cascade"))
    .addColumn("stack_images", "jsonb")
    .execute();
  await sql`alter table rollbacks alter column application_id drop not null`.execute(db);
  await sql`alter table rollbacks alter column image drop not null`.execute(db);
  await sql`alter table rollbacks alter column image_id drop not null`.execute(db);
  await sql`alter table rollbacks add constraint rollbacks_one_service_check check (
    (application_id is not null and compose_id is null and image is not null and image_id is not null)
    or (application_id is null and compose_id is not null and stack_images is not null)
  )`.execute(db);
  await db.schema
    .createIndex("rollbacks_compose_idx")
    .on("rollbacks")
    .columns(["compose_id", "created_at"])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from rollbacks where compose_id is not null`.execute(db);
  await sql`alter table rollbacks drop constraint rollbacks_one_service_check`.execute(db);
  await db.schema.dropIndex("rollbacks_compose_idx").ifExists().execute();
  await db.schema.alterTable("rollbacks").dropColumn("compose_id").dropColumn("stack_images").execute();
  await sql`alter table rollbacks alter column application_id set not null`.execute(db);
  await sql`alter table rollbacks alter column image set not null`.execute(db);
  await sql`alter table rollbacks alter column image_id set not null`.execute(db);
}
