/**
 * Dokploy's mounts (issue 27): named volumes, file mounts and (instance organization only) bind
 * mounts of a service. A mount belongs to one application or one database service (cascade:
 * the mount goes with its service); compose stacks add their column when they exist. One
 * mountPath per service.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("mounts")
    .addColumn("mount_id", "text", (c) => c.primaryKey())
    .addColumn("type", "text", (c) => c.notNull().check(sql`type in ('volume', 'file', 'bind')`))
    .addColumn("volume_name", "text")
    .addColumn("file_path", "text")
    .addColumn("content", "text")
    .addColumn("host_path", "text")
    .addColumn("mount_path", "text", (c) => c.notNull())
    .addColumn("service_type", "text", (c) => c.notNull())
    .addColumn("application_id", "text", (c) =>
      c.references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("database_id", "text", (c) =>
      c.references("database_services.database_id").onDelete("cascade"),
    )
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(db.fn("now")))
    .addCheckConstraint("mounts_one_service", sql`num_nonnulls(application_id, database_id) = 1`)
    .execute();
  await db.schema
    .createIndex("mounts_service_mount_path_unique")
    .on("mounts")
    .expression(sql`coalesce(application_id, database_id), mount_path`)
    .unique()
    .execute();
  await db.schema.createIndex("mounts_volume_name").on("mounts").column("volume_name").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("mounts").execute();
}
