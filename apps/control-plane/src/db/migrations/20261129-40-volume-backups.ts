/**
 * Volume backups (issue 32, Dokploy's `volumeBackups` router): a named volume of an application,
 * a database service or a compose stack archived to a destination on a croner schedule, with
 * retention (`keep_latest_count`) and optionally the service stopped while the volume is read
 * (`turn_off`). Its runs are deployments of the service of kind volumeBackup (the archive
 * written) or volumeRestore (an archive written into a volume, `backup_volume_name`), naming the
 * volume backup (`volume_backup_id`) and reusing the backup columns for the destination and
 * the object (`backup_destination_id`, `backup_file`, `backup_size_bytes`).
 */
import { type Kysely, sql } from "kysely";

const KINDS_BEFORE = ["deploy", "redeploy", "rebuild", "backup", "restore", "verify", "rollback"];
const KINDS = [...KINDS_BEFORE, "volumeBackup", "volumeRestore"];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("volume_backups")
    .addColumn("volume_backup_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("volume_name", "text", (c) => c.notNull())
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("app_name", "text", (c) => c.notNull().unique())
    .addColumn("service_name", "text")
    .addColumn("turn_off", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("cron_expression", "text", (c) => c.notNull())
    .addColumn("keep_latest_count", "integer")
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("service_type", "text", (c) =>
      c
        .notNull()
        .check(
          sql`service_type in ('application', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'compose')`,
        ),
    )
    .addColumn("application_id", "text", (c) =>
      c.references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("database_id", "text", (c) =>
      c.references("database_services.database_id").onDelete("cascade"),
    )
    .addColumn("compose_id", "text", (c) => c.references("compose.compose_id").onDelete("cascade"))
    .addColumn("destination_id", "text", (c) =>
      c.notNull().references("destinations.destination_id").onDelete("cascade"),
    )
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      "volume_backups_one_service",
      sql`num_nonnulls(application_id, database_id, compose_id) = 1`,
    )
    .execute();
  await db.schema
    .createIndex("volume_backups_service_idx")
    .on("volume_backups")
    .columns(["application_id", "database_id", "compose_id"])
    .execute();
  await db.schema
    .alterTable("deployments")
    .addColumn("volume_backup_id", "text", (c) =>
      c.references("volume_backups.volume_backup_id").onDelete("set null"),
    )
    .addColumn("backup_volume_name", "text")
    .execute();
  await db.schema
    .createIndex("deployments_volume_backup_idx")
    .on("deployments")
    .columns(["volume_backup_id", "created_at"])
    .execute();
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in (${sql.join(
    KINDS.map((kind) => sql.lit(kind)),
  )}))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from deployments where kind in ('volumeBackup', 'volumeRestore')`.execute(db);
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in (${sql.join(
    KINDS_BEFORE.map((kind) => sql.lit(kind)),
  )}))`.execute(db);
  await db.schema.dropIndex("deployments_volume_backup_idx").ifExists().execute();
  await db.schema.alterTable("deployments").dropColumn("backup_volume_name").execute();
  await db.schema.alterTable("deployments").dropColumn("volume_backup_id").execute();
  await db.schema.dropTable("volume_backups").ifExists().execute();
}
