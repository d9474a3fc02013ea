/**
 * The events table as a durable outbox (issue 24). Emitters write an event in the transaction of
 * its cause (deployments/events.ts) and go on; this dispatcher, on every control plane, then
 * - fans out each new event once: one pending delivery per channel of the organization whose
 *   toggle for the event is on and whose project / service limits take it (row locks with SKIP
 *   LOCKED: one control plane fans out each event, in one transaction with the deliveries);
 * - sends due deliveries under a lease (lease_owner, lease_until) taken with one conditional
 *   write, so two control planes never send the same delivery while its lease holds; a control
 *   plane killed mid-send leaves a lease that runs out (or that it drops at its next start, under
 *   the same instance id), and the delivery is sent again: at least once;
 * - retries a failed delivery after PLATFORM_NOTIFICATION_RETRY_MS, doubled per attempt (at
 *   most an hour), and abandons it after MAX_ATTEMPTS;
 * - prunes delivered and abandoned deliveries, and events without pending ones, older than
 *   PLATFORM_NOTIFICATION_RETENTION_DAYS.
 */
import { sql } from "kysely";
import type { ServiceContext } from "../context.ts";
import type { EventKind } from "../db/schema.ts";
import { DeliveryError } from "./http.ts";
import { kindDef, type Notice } from "./kinds.ts";
import { channelFields, type Notification } from "./repository.ts";

export const MAX_ATTEMPTS = 10;
const MAX_BACKOFF_MS = 3_600_000;
/** How long a delivery's lease holds: longer than one send can take (DELIVERY_TIMEOUT_MS). */
export const DELIVERY_LEASE_MS = 30_000;
const BATCH = 50;
const PRUNE_EVERY_MS = 3_600_000;

const TITLES: Record<EventKind, (data: Notice["data"]) => string> = {
  appDeploy: (d) => `Deployed ${d.applicationName}`,
  appBuildError: (d) => `Deployment of ${d.applicationName} failed`,
  databaseBackup: (d) => `Database backup of ${d.applicationName}: ${d.status}`,
  volumeBackup: (d) => `Volume backup of ${d.applicationName}: ${d.status}`,
  platformRestart: (d) => `${d.applicationName || "The platform"} restarted`,
  platformBackup: (d) => `Backup of ${d.applicationName}: ${d.status}`,
  dockerCleanup: (d) => `Docker cleanup${d.status === "error" ? " failed" : " ran"}`,
  serverThreshold: (d) => `Threshold exceeded on ${d.applicationName}`,
};

/** The notice a channel sends for an event, with the link to the deployments (PLATFORM_URL). */
export function noticeOf(
  ctx: Pick<ServiceContext, "config">,
  event: { kind: EventKind; createdAt: string; payload: Notice["data"] },
): Notice {
  const data = { ...event.payload };
  const base = ctx.config.platformUrl?.replace(/\/+$/, "");
  if (base && data.serviceId && (event.kind === "appDeploy" || event.kind === "appBuildError")) {
    const input =
      data.serviceType === "application"
        ? { applicationId: data.serviceId }
        : { id: data.serviceId, type: data.serviceType ?? "" };
    const procedure = data.serviceType === "application" ? "deployment.all" : "deployment.allByType";
    data.deploymentUrl = `${base}/api/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`;
  }
  return {
    event: event.kind,
    timestamp: new Date(event.createdAt).toISOString(),
    data,
    title: TITLES[event.kind](data),
  };
}

/** Sends one notice through a stored channel. */
export async function sendThroughChannel(
  ctx: Pick<ServiceContext, "config" | "db" | "secrets">,
  channel: Notification,
  notice: Notice,
): Promise<void> {
  await kindDef(channel.kind).send(channelFields(ctx, channel), notice, {
    ctx,
    organizationId: channel.organizationId,
  });
}

export interface OutboxOptions {
  /** How often due work is looked for (default 1 s). */
  pollMs?: number;
}

export class NotificationOutbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private lastPruneAt = 0;
  private readonly pollMs: number;

  constructor(
    private readonly ctx: ServiceContext,
    /** This control plane's instance id (stable across its restarts). */
    private readonly owner: string,
    options: OutboxOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 1_000;
  }

  /** Drops the leases this instance held before a restart, then polls. */
  async start(): Promise<void> {
    await this.ctx.db
      .updateTable("notificationDeliveries")
      .set({ leaseOwner: null, leaseUntil: null })
      .where("leaseOwner", "=", this.owner)
      .where("status", "=", "pending")
      .execute()
      .catch(() => {});
    this.schedule(0);
  }

  /** Runs one pass now (tests, and after an emitter wants its event out quickly). */
  kick(): void {
    if (this.closed || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delay: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .catch((error) => this.ctx.logger.warn({ err: error }, "notification outbox pass failed"))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.pollMs);
        });
    }, delay);
    this.timer.unref();
  }

  /** One pass: fan out new events, send due deliveries, prune now and then. */
  async pass(): Promise<void> {
    while ((await this.fanOut()) === BATCH) {}
    while ((await this.deliverDue()) === BATCH && !this.closed) {}
    const now = Date.now();
    if (now - this.lastPruneAt > PRUNE_EVERY_MS) {
      this.lastPruneAt = now;
      await this.prune();
    }
  }

  /** Writes the deliveries of up to BATCH new events; answers how many events it took. */
  async fanOut(): Promise<number> {
    return this.ctx.db.transaction().execute(async (trx) => {
      const events = await trx
        .selectFrom("events")
        .select(["eventId", "organizationId", "kind", "payload"])
        .where("fannedOutAt", "is", null)
        .orderBy("createdAt")
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute();
      if (events.length === 0) return 0;
      const organizations = [...new Set(events.map((e) => e.organizationId))];
      const channels = await trx
        .selectFrom("notifications")
        .selectAll()
        .where("organizationId", "in", organizations)
        .execute();
      const rows = events.flatMap((event) =>
        channels
          .filter((channel) => channel.organizationId === event.organizationId && channel[event.kind])
          .filter((channel) => takes(channel, event.payload as Record<string, string>))
          .map((channel) => ({
            eventId: event.eventId,
            notificationId: channel.notificationId,
            organizationId: event.organizationId,
            status: "pending" as const,
          })),
      );
      if (rows.length > 0) {
        await trx
          .insertInto("notificationDeliveries")
          .values(rows)
          .onConflict((c) => c.doNothing())
          .execute();
      }
      await trx
        .updateTable("events")
        .set({ fannedOutAt: sql<string>`now()` })
        .where(
          "eventId",
          "in",
          events.map((e) => e.eventId),
        )
        .execute();
      return events.length;
    });
  }

  /** Takes the leases of up to BATCH due deliveries and sends them; answers how many it took. */
  async deliverDue(): Promise<number> {
    const claimed = await this.ctx.db
      .updateTable("notificationDeliveries")
      .set({
        leaseOwner: this.owner,
        leaseUntil: sql<string>`now() + ${`${DELIVERY_LEASE_MS} milliseconds`}::interval`,
        attempts: sql<number>`attempts + 1`,
        updatedAt: sql<string>`now()`,
      })
      .where(({ eb, selectFrom }) =>
        eb(
          sql`(event_id, notification_id)`,
          "in",
          selectFrom("notificationDeliveries")
            .select(["eventId", "notificationId"])
            .where("status", "=", "pending")
            .where("nextAttemptAt", "<=", sql<string>`now()`)
            .where((w) => w.or([w("leaseUntil", "is", null), w("leaseUntil", "<", sql<string>`now()`)]))
            .orderBy("nextAttemptAt")
            .limit(BATCH)
            .forUpdate()
            .skipLocked(),
        ),
      )
      .returning(["eventId", "notificationId", "attempts"])
      .execute();
    await Promise.all(claimed.map((delivery) => this.send(delivery)));
    return claimed.length;
  }

  private async send(delivery: { eventId: string; notificationId: string; attempts: number }): Promise<void> {
    const { db } = this.ctx;
    const event = await db
      .selectFrom("events")
      .select(["kind", "createdAt", "payload"])
      .where("eventId", "=", delivery.eventId)
      .executeTakeFirst();
    const channel = await db
      .selectFrom("notifications")
      .selectAll()
      .where("notificationId", "=", delivery.notificationId)
      .executeTakeFirst();
    let failure: string | null = null;
    if (!event || !channel) failure = "the event or the channel is gone";
    else {
      try {
        await sendThroughChannel(this.ctx, channel, noticeOf(this.ctx, event as never));
      } catch (error) {
        failure = error instanceof DeliveryError ? error.message : "the delivery failed";
        if (!(error instanceof DeliveryError)) {
          this.ctx.logger.warn(
            { err: error, notificationId: delivery.notificationId },
            "a notification failed",
          );
        }
      }
    }
    const keys = (q: ReturnType<typeof db.updateTable<"notificationDeliveries">>) =>
      q
        .where("eventId", "=", delivery.eventId)
        .where("notificationId", "=", delivery.notificationId)
        .where("leaseOwner", "=", this.owner);
    if (failure === null) {
      await keys(
        db.updateTable("notificationDeliveries").set({
          status: "delivered",
          leaseOwner: null,
          leaseUntil: null,
          lastError: null,
          updatedAt: sql<string>`now()`,
        }),
      ).execute();
      return;
    }
    const abandon = delivery.attempts >= MAX_ATTEMPTS || !event || !channel;
    const delay = Math.min(
      MAX_BACKOFF_MS,
      this.ctx.config.notifications.retryMs * 2 ** (delivery.attempts - 1),
    );
    await keys(
      db.updateTable("notificationDeliveries").set({
        status: abandon ? "abandoned" : "pending",
        leaseOwner: null,
        leaseUntil: null,
        lastError: failure,
        nextAttemptAt: sql<string>`now() + ${`${delay} milliseconds`}::interval`,
        updatedAt: sql<string>`now()`,
      }),
    ).execute();
  }

  /** Deletes delivered and abandoned deliveries, and settled events, past the retention. */
  async prune(): Promise<{ deliveries: number; events: number }> {
    const cutoff = sql<string>`now() - ${`${this.ctx.config.notifications.retentionDays} days`}::interval`;
    const deliveries = await this.ctx.db
      .deleteFrom("notificationDeliveries")
      .where("status", "in", ["delivered", "abandoned"])
      .where("updatedAt", "<", cutoff)
      .executeTakeFirst();
    const events = await this.ctx.db
      .deleteFrom("events")
      .where("fannedOutAt", "is not", null)
      .where("createdAt", "<", cutoff)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("notificationDeliveries")
              .select("eventId")
              .whereRef("notificationDeliveries.eventId", "=", "events.eventId"),
          ),
        ),
      )
      .executeTakeFirst();
    return { deliveries: Number(deliveries.numDeletedRows), events: Number(events.numDeletedRows) };
  }
}

/**
 * Whether a channel limited to projects or services takes an event. Events of no project
 * (serverThreshold, dockerCleanup, platformRestart) concern the organization's machines and go
 * to every channel whose toggle is on.
 */
export function takes(
  channel: Pick<Notification, "projectIds" | "serviceIds">,
  data: Record<string, string>,
): boolean {
  const projects = channel.projectIds ?? [];
  const services = channel.serviceIds ?? [];
  if (projects.length === 0 && services.length === 0) return true;
  if (!data.projectId) return true;
  return (
    projects.includes(data.projectId) || (data.serviceId !== undefined && services.includes(data.serviceId))
  );
}
