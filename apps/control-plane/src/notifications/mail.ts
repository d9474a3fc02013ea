/**
 * Mails to one person through an Email or Resend channel of the organization: the invitation
 * with its secret accept link (user.sendInvitation) and the confirmation link of a requested new
 * account email (user.update). The channel's own server, credentials and sender are used; its
 * recipients are replaced by the one address. The link is built on PLATFORM_URL.
 */
import type { ServiceContext } from "../context.ts";
import { DeliveryError } from "./http.ts";
import { kindDef, type Notice } from "./kinds.ts";
import { channelFields, type Notification } from "./repository.ts";

/** The kinds that can reach one address. */
export const MAIL_KINDS: readonly string[] = ["email", "resend"];

/** PLATFORM_URL with `path` and the secret `token` (as Dokploy's links carry it), or null without PLATFORM_URL. */
export function secretLink(ctx: Pick<ServiceContext, "config">, path: string, token: string): string | null {
  const base = ctx.config.platformUrl?.replace(/\/+$/, "");
  if (!base) return null;
  return `${base}${path}?token=${encodeURIComponent(token)}`;
}

/** Sends `notice` to `to` through a stored Email or Resend channel; throws DeliveryError. */
export async function mailThroughChannel(
  ctx: Pick<ServiceContext, "config" | "db" | "secrets">,
  channel: Notification,
  to: string,
  notice: Notice,
): Promise<void> {
  if (!MAIL_KINDS.includes(channel.kind)) {
    throw new DeliveryError("notificationId: must be an Email or Resend channel", "notificationId");
  }
  const fields = { ...channelFields(ctx, channel), toAddresses: [to] };
  await kindDef(channel.kind).send(fields, notice, {
    ctx,
    organizationId: channel.organizationId,
  });
}

/** The organization's oldest Email or Resend channel, if it has one. */
export function firstMailChannel(db: ServiceContext["db"], organizationId: string) {
  return db
    .selectFrom("notifications")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .where("kind", "in", [...MAIL_KINDS])
    .orderBy("createdAt", "asc")
    .orderBy("notificationId", "asc")
    .limit(1)
    .executeTakeFirst();
}
