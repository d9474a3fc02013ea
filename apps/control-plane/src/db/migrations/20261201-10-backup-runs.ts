/**
 * Backup runs get their own table (issue 38 item 6): what a run of a backup, a web-server backup
 * or a volume backup moved to or from a destination (and a restore's or verification's target
 * and check) was kept in columns of `deployments`, null for every deployment of a service.
 * `backup_runs` holds them, one row per such run (kinds backup, restore, verify, volumeBackup,
 * volumeRestore), taken with its deployment; the columns keep their names, types and foreign
 * keys' behaviour (a removed backup, volume backup or destination leaves its runs, naming none).
 */
import { type Kysely, sql } from "kysely";

const RUN_KINDS = ["backup", "restore", "verify", "volumeBackup", "volumeRestore"];

/** The moved columns, in the order they were added to deployments. */
const COLUMNS = [
  "backup_id",
  "backup_destination_id",
  "backup_file",
  "backup_database_name",
  "backup_size_bytes",
  "backup_check",
  "volume_backup_id",
  "backup_volume_name",
];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("backup_runs")
    .addColumn("deployment_id", "text", (c) =>
      c.primaryKey().references("deployments.deployment_id").onDelete("cascade"),
    )
    .addColumn("backup_id", "text", (c) => c.references("backups.backup_id").onDelete("set null"))
    .addColumn("backup_destination_id", "text", (c) =>
      c.references("destinations.destination_id").onDelete("set null"),
    )
    .addColumn("backup_file", "text")
    .addColumn("backup_database_name", "text")
    .addColumn("backup_size_bytes", "bigint")
    .addColumn("backup_check", "text")
    .addColumn("volume_backup_id", "text", (c) =>
      c.references("volume_backups.volume_backup_id").onDelete("set null"),
    )
    .addColumn("backup_volume_name", "text")
    .execute();
  await db.schema.createIndex("backup_runs_backup_idx").on("backup_runs").column("backup_id").execute();
  await db.schema
    .createIndex("backup_runs_volume_backup_idx")
    .on("backup_runs")
    .column("volume_backup_id")
    .execute();
  const columns = sql.join(COLUMNS.map((column) => sql.ref(column)));
  // Every run of those kinds (also one whose backup is gone), and any other row naming a file.
  await sql`insert into backup_runs (deployment_id, ${columns})
    select deployment_id, ${columns} from deployments
    where kind in (${sql.join(RUN_KINDS.map((kind) => sql.lit(kind)))})
       or num_nonnulls(${columns}) > 0`.execute(db);
  await db.schema.dropIndex("deployments_backup_idx").ifExists().execute();
  await db.schema.dropIndex("deployments_volume_backup_idx").ifExists().execute();
  for (const column of COLUMNS) await db.schema.alterTable("deployments").dropColumn(column).execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
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
    .addColumn("volume_backup_id", "text", (c) =>
      c.references("volume_backups.volume_backup_id").onDelete("set null"),
    )
    .addColumn("backup_volume_name", "text")
    .execute();
  await sql`update deployments set ${sql.join(
    COLUMNS.map((column) => sql`${sql.ref(column)} = ${sql.ref(`backup_runs.${column}`)}`),
  )} from backup_runs where backup_runs.deployment_id = deployments.deployment_id`.execute(db);
  await db.schema
    .createIndex("deployments_backup_idx")
    .on("deployments")
    .columns(["backup_id", "created_at"])
    .execute();
  await db.schema
    .createIndex("deployments_volume_backup_idx")
    .on("deployments")
    .columns(["volume_backup_id", "created_at"])
    .execute();
  await db.schema.dropTable("backup_runs").execute();
}
