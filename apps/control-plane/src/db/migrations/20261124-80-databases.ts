/**
 * database_services: the postgres, mysql, mariadb, mongo and redis services of an environment
 * (spec 2.9), one table for the five kinds (databases/kinds.ts holds what differs). Passwords
 * are SecretBox-sealed. Deployments may now belong to a database service instead of an
 * application: exactly one of application_id and database_id is set, and a database service
 * adds the `rebuild` kind (data volume deleted first).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("database_services")
    .addColumn("database_id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) =>
      c.notNull().check(sql`kind in ('postgres', 'mysql', 'mariadb', 'mongo', 'redis')`),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("app_name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("environment_id", "text", (c) =>
      c.notNull().references("environments.environment_id").onDelete("cascade"),
    )
    .addColumn("server_id", "text", (c) => c.references("servers.server_id").onDelete("restrict"))
    .addColumn("database_name", "text")
    .addColumn("database_user", "text")
    .addColumn("database_password_sealed", "text", (c) => c.notNull())
    .addColumn("database_root_password_sealed", "text")
    .addColumn("docker_image", "text")
    .addColumn("replica_sets", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("application_status", "text", (c) =>
      c.notNull().defaultTo("idle").check(sql`application_status in ('idle', 'running', 'done', 'error')`),
    )
    .addColumn("external_port", "integer")
    .addColumn("memory_limit", "text")
    .addColumn("memory_reservation", "text")
    .addColumn("cpu_limit", "text")
    .addColumn("cpu_reservation", "text")
    .addColumn("env", "text")
    .addColumn("command", "text")
    .addColumn("args", "jsonb")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("database_services_app_name_unique", ["app_name"])
    .execute();
  await db.schema
    .createIndex("database_services_environment_idx")
    .on("database_services")
    .column("environment_id")
    .execute();
  await db.schema
    .createIndex("database_services_server_idx")
    .on("database_services")
    .column("server_id")
    .execute();

  await db.schema
    .alterTable("deployments")
    .addColumn("database_id", "text", (c) =>
      c.references("database_services.database_id").onDelete("cascade"),
    )
    .execute();
  await db.schema
    .alterTable("deployments")
    .alterColumn("application_id", (c) => c.dropNotNull())
    .execute();
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id) = 1)`.execute(
    db,
  );
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in ('deploy', 'redeploy', 'rebuild'))`.execute(
    db,
  );
  await db.schema
    .createIndex("deployments_database_idx")
    .on("deployments")
    .columns(["database_id", "created_at"])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom("deployments").where("database_id", "is not", null).execute();
  await db.schema.dropIndex("deployments_database_idx").ifExists().execute();
  await sql`alter table deployments drop constraint deployments_kind_check`.execute(db);
  await sql`alter table deployments add constraint deployments_kind_check check (kind in ('deploy', 'redeploy'))`.execute(
    db,
  );
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await db.schema
    .alterTable("deployments")
    .alterColumn("application_id", (c) => c.setNotNull())
    .execute();
  await db.schema.alterTable("deployments").dropColumn("database_id").execute();
  await db.schema.dropTable("database_services").ifExists().execute();
}
