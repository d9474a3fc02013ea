/**
 * Notification channels in the database: a kind's plain fields in `config`, its secret fields
 * sealed together in `secrets_sealed` (bound to the row and the organization), and the view
 * notification.getAll answers, where secrets are absent (redacted) and only their names show.
 */

import type { Selectable } from "kysely";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { EventKind, NotificationTable } from "../db/schema.ts";
import { kindDef, type NotificationKind } from "./kinds.ts";

export const EVENT_TOGGLES = [
  "appDeploy",
  "appBuildError",
  "databaseBackup",
  "volumeBackup",
  "platformRestart",
  "platformBackup",
  "dockerCleanup",
  "serverThreshold",
] as const satisfies readonly EventKind[];

export type Toggles = Record<(typeof EVENT_TOGGLES)[number], boolean>;
export type Notification = Selectable<NotificationTable>;

export interface ChannelInput {
  name: string;
  toggles: Toggles;
  fields: Record<string, unknown>;
  projectIds: string[] | null;
  serviceIds: string[] | null;
}

const context = (notificationId: string, organizationId: string) => ({
  table: "notifications",
  rowId: notificationId,
  organizationId,
});

/** Splits a kind's fields into plain ones and the sealed secrets. */
function seal(
  ctx: Pick<ServiceContext, "secrets">,
  kind: string,
  id: string,
  org: string,
  fields: Record<string, unknown>,
) {
  const secretNames = new Set(kindDef(kind).secrets);
  const plain: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    (secretNames.has(key) ? secret : plain)[key] = value;
  }
  return {
    config: JSON.stringify(plain),
    secretsSealed: ctx.secrets.encrypt(JSON.stringify(secret), context(id, org)),
  };
}

/** Every field of a channel, secrets opened: for sending only. */
export function channelFields(
  ctx: Pick<ServiceContext, "secrets">,
  row: Notification,
): Record<string, unknown> {
  const secret = JSON.parse(
    ctx.secrets.decrypt(row.secretsSealed, context(row.notificationId, row.organizationId)),
  );
  return { ...(row.config as Record<string, unknown>), ...secret };
}

export async function insertChannel(
  ctx: Pick<ServiceContext, "db" | "secrets">,
  organizationId: string,
  kind: NotificationKind,
  input: ChannelInput,
): Promise<Notification> {
  const notificationId = newId();
  return ctx.db
    .insertInto("notifications")
    .values({
      notificationId,
      organizationId,
      kind,
      name: input.name,
      ...input.toggles,
      ...seal(ctx, kind, notificationId, organizationId, input.fields),
      projectIds: input.projectIds,
      serviceIds: input.serviceIds,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findChannel(db: Db, organizationId: string, notificationId: string, kind?: string) {
  let query = db
    .selectFrom("notifications")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .where("notificationId", "=", notificationId);
  if (kind) query = query.where("kind", "=", kind);
  return query.executeTakeFirst();
}

export async function updateChannel(
  ctx: Pick<ServiceContext, "db" | "secrets">,
  row: Notification,
  input: ChannelInput,
): Promise<void> {
  await ctx.db
    .updateTable("notifications")
    .set({
      name: input.name,
      ...input.toggles,
      ...seal(ctx, row.kind, row.notificationId, row.organizationId, input.fields),
      projectIds: input.projectIds,
      serviceIds: input.serviceIds,
    })
    .where("notificationId", "=", row.notificationId)
    .where("organizationId", "=", row.organizationId)
    .execute();
}

export function listChannels(db: Db, organizationId: string) {
  return db
    .selectFrom("notifications")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .execute();
}

/** Deletes a channel of the organization, its deliveries with it (ON DELETE CASCADE); false when none. */
export async function deleteChannel(
  db: Db,
  organizationId: string,
  notificationId: string,
): Promise<boolean> {
  const deleted = await db
    .deleteFrom("notifications")
    .where("organizationId", "=", organizationId)
    .where("notificationId", "=", notificationId)
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** The organization's deliveries (of one channel when `notificationId` is given), newest event first. */
export function listDeliveries(
  db: Db,
  organizationId: string,
  filter: { notificationId?: string | undefined; limit: number },
) {
  let query = db
    .selectFrom("notificationDeliveries as d")
    .innerJoin("events", "events.eventId", "d.eventId")
    .select([
      "d.eventId",
      "d.notificationId",
      "events.kind as event",
      "d.status",
      "d.attempts",
      "d.lastError",
      "d.nextAttemptAt",
      "d.updatedAt",
      "events.createdAt",
    ])
    .where("d.organizationId", "=", organizationId);
  if (filter.notificationId) query = query.where("d.notificationId", "=", filter.notificationId);
  return query.orderBy("events.createdAt", "desc").limit(filter.limit).execute();
}

/** A channel as getAll answers it (Dokploy's shape: the kind's object beside the common fields). */
export function channelView(row: Notification) {
  const kind = row.kind;
  const subId = `${kind}Id`;
  const toggles = Object.fromEntries(EVENT_TOGGLES.map((t) => [t, row[t]])) as Toggles;
  return {
    notificationId: row.notificationId,
    name: row.name,
    notificationType: kind,
    ...toggles,
    createdAt: row.createdAt,
    organizationId: row.organizationId,
    projectIds: row.projectIds,
    serviceIds: row.serviceIds,
    [subId]: row.notificationId,
    [kind]: { [subId]: row.notificationId, ...(row.config as Record<string, unknown>) },
    /** The kind's secret fields that are set (their values are never answered). */
    redacted: [...kindDef(kind).secrets],
  };
}
