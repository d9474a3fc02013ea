/**
 * Backups (issue 26): destinations (S3-compatible buckets of an organization, the secret key
 * sealed), database backups (Dokploy's `backup` row: schedule, prefix, retention, the database
 * it dumps, and our restore verification), and their runs as deployments: a run is a row of
 * the deployment queue of kind backup, restore or verify, naming its backup (`backup_id`) and destination (`backup_destination_id`) and
 * keeping the object it wrote or read (`backup_file`, `backup_size_bytes`) and, for a verified
 * restore, what the check found (`backup_check`).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("destinations")
    .addColumn("destination_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("access_key", "text", (c) => c.notNull())
    .addColumn("secret_access_key_sealed", "text", (c) => c.notNull())
    .addColumn("bucket", "text", (c) => c.notNull())
    .addColumn("region", "text", (c) => c.notNull())
    .addColumn("endpoint", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("destinations_organization_idx")
    .on("destinations")
    .column("organization_id")
    .execute();

  await db.schema
    .createTable("backups")
    .addColumn("backup_id", "text", (c) => c.primaryKey())
    .addColumn("app_name", "text", (c) => c.notNull().unique())
    .addColumn("schedule", "text", (c) => c.notNull())
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("database", "text", (c) => c.notNull())
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("service_name", "text")
    .addColumn("destination_id", "text", (c) =>
      c.notNull().references("destinations.destination_id").onDelete("cascade"),
    )
    .addColumn("keep_latest_count", "integer")
    .addColumn("backup_type", "text", (c) =>
      c.notNull().defaultTo("database").check(sql`backup_type in ('database', 'compose')`),
    )
    .addColumn("database_type", "text", (c) =>
      c.notNull().check(sql`database_type in ('postgres', 'mysql', 'mariadb', 'mongo', 'redis')`),
    )
    .addColumn("database_id", "text", (c) =>
      c.notNull().references("database_services.database_id").onDelete("cascade"),
    )
    .addColumn("user_id", "text", (c) => c.references("users.user_id").onDelete("set null"))
    .addColumn("metadata", "jsonb")
    .addColumn("verify_restore", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("verify_table", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("backups_database_idx").on("backups").column("database_id").execute();
  await db.schema.createIndex("backups_destination_idx").on("backups").column("destination_id").execute();

  await db.schema
    .alterTable("deployments")
    .addColumn("backup_id", "text", (c) => c.references("backups.backup_id").onDelete("set null"))
    .addColumn("backup_destination_id", "text", (c) =>
      c.references("destinations.destination_id").onDelete("set null"),
    )
    .addColumn("backup_file", "text")
    .addColumn("backup_database_name", "text")
    .addColumn("backup_size_bytes", "bigint")
    .addColumn("backup_check", "text")
    .execute();
  await db.schema
    .createIndex("deployments_backup_idx")
    .on("deployments")
    .columns(["backup_id", "created_at"])
    .execute();
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in ('deploy', 'redeploy', 'rebuild', 'backup', 'restore', 'verify'))`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from deployments where kind in ('backup', 'restore', 'verify')`.execute(db);
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in ('deploy', 'redeploy', 'rebuild'))`.execute(
    db,
  );
  await db.schema.dropIndex("deployments_backup_idx").ifExists().execute();
  for (const column of [
    "backup_check",
    "backup_size_bytes",
    "backup_database_name",
    "backup_file",
    "backup_destination_id",
    "backup_id",
  ]) {
    await db.schema.alterTable("deployments").dropColumn(column).execute();
  }
  await db.schema.dropTable("backups").ifExists().execute();
  await db.schema.dropTable("destinations").ifExists().execute();
}
