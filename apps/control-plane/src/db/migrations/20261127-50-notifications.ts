/**
 * Notification channels (spec 2.11, 4.11) and the events table as a durable outbox (issue 24):
 * - notifications: one row per channel, its kind, the seven event toggles (false by default),
 *   the kind's plain fields (`config`) and its secrets sealed as one value (`secrets_sealed`),
 *   and optional project / service limits (null: every event of the organization);
 * - events.fanned_out_at: set once the event's deliveries were written (one per channel whose
 *   toggle is on), by one control plane (row locks, SKIP LOCKED);
 * - notification_deliveries: one per event and channel, with its attempts, its next attempt and
 *   the lease of the control plane sending it, so two control planes never both send it;
 * - control_plane_runs: whether this instance stopped cleanly (platformRestart after a crash).
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`;
  await db.schema
    .createTable("notifications")
    .addColumn("notification_id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) =>
      c.notNull().references("organizations.organization_id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("app_deploy", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("app_build_error", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("database_backup", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("volume_backup", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("platform_restart", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("docker_cleanup", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("server_threshold", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("config", "jsonb", (c) => c.notNull())
    .addColumn("secrets_sealed", "text", (c) => c.notNull())
    .addColumn("project_ids", sql`text[]`)
    .addColumn("service_ids", sql`text[]`)
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex("notifications_organization_idx")
    .on("notifications")
    .column("organization_id")
    .execute();

  await db.schema.alterTable("events").addColumn("fanned_out_at", "timestamptz").execute();
  await sql`create index events_pending_fan_out_idx on events (created_at) where fanned_out_at is null`.execute(
    db,
  );

  await db.schema
    .createTable("notification_deliveries")
    .addColumn("event_id", "text", (c) => c.notNull().references("events.event_id").onDelete("cascade"))
    .addColumn("notification_id", "text", (c) =>
      c.notNull().references("notifications.notification_id").onDelete("cascade"),
    )
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) =>
      c.notNull().check(sql`status in ('pending', 'delivered', 'abandoned')`),
    )
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("lease_owner", "text")
    .addColumn("lease_until", "timestamptz")
    .addColumn("last_error", "text")
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addPrimaryKeyConstraint("notification_deliveries_pk", ["event_id", "notification_id"])
    .execute();
  await sql`create index notification_deliveries_due_idx on notification_deliveries (next_attempt_at) where status = 'pending'`.execute(
    db,
  );
  await db.schema
    .createIndex("notification_deliveries_organization_idx")
    .on("notification_deliveries")
    .columns(["organization_id", "updated_at"])
    .execute();

  await db.schema
    .createTable("control_plane_runs")
    .addColumn("instance_id", "text", (c) => c.primaryKey())
    .addColumn("running", "boolean", (c) => c.notNull())
    .addColumn("started_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("control_plane_runs").ifExists().execute();
  await db.schema.dropTable("notification_deliveries").ifExists().execute();
  await db.schema.alterTable("events").dropColumn("fanned_out_at").execute();
  await db.schema.dropTable("notifications").ifExists().execute();
}
