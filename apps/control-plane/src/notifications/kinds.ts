/**
 * The notification kinds (spec 4.11 and 8, Dokploy's field names, and Mattermost): each kind's
 * input fields, which of them are secrets (sealed at rest, absent from notification.getAll),
 * which are URLs (checked by the outbound guard at create, update, test and every send), and
 * how a notice is written in the receiving service's own documented format.
 */
import nodemailer from "nodemailer";
import { z } from "zod";
import type { EventKind } from "../db/schema.ts";
import {
  checkChannelTarget,
  checkChannelUrl,
  DELIVERY_TIMEOUT_MS,
  DeliveryError,
  type OutboundContext,
  postToChannel,
} from "./http.ts";

/**
 * What a channel sends: an event of spec 6.1 with its `data` (applicationName, status, message,
 * ...), or a mail to one person (an invitation, an email confirmation) whose `data.actionUrl` is
 * the secret link it carries.
 */
export interface Notice {
  event: EventKind | "test" | "invitation" | "emailConfirmation";
  timestamp: string;
  data: { applicationName: string; status: string; message: string; [key: string]: string };
  /** A short headline (Email subject, card title). */
  title: string;
}

export interface SendContext {
  ctx: OutboundContext;
  organizationId: string;
}

type Fields = Record<string, unknown>;

interface KindDef {
  /** The procedure suffix (createSlack) and Dokploy's notificationType (slack). */
  suffix: string;
  /** Input fields of create (the toggles and name come on top). */
  shape: z.ZodRawShape;
  /** Fields stored sealed, never answered. */
  secrets: readonly string[];
  /** Fields that are URLs a request goes to (guarded at create, update and test). */
  urls: readonly string[];
  /** Cross-field rules (Pushover's priority 2); answers [field, message] or null. */
  refine?: (fields: Fields) => [string, string] | null;
  send(fields: Fields, notice: Notice, context: SendContext): Promise<void>;
}

const url = z.string().trim().min(1).max(2048);
const text = z.string().max(1024);
const required = z.string().trim().min(1).max(1024);

const STATUS_COLORS: Record<string, string> = { success: "#2eb67d", error: "#e01e5a", alert: "#ecb22e" };
const colorOf = (notice: Notice) => STATUS_COLORS[notice.data.status] ?? "#4a90d9";
const EMOJI: Record<string, string> = { success: "✅", error: "❌", alert: "⚠️" };
const emojiOf = (notice: Notice) => EMOJI[notice.data.status] ?? "ℹ️";

/** The notice's `data` as label/value pairs, in a stable order, without empty values. */
export function factsOf(notice: Notice): Array<[string, string]> {
  const labels: Record<string, string> = {
    projectName: "Project",
    environmentName: "Environment",
    applicationName: "Service",
    serviceType: "Type",
    status: "Status",
    deploymentUrl: "Deployment",
  };
  return Object.entries(labels)
    .map(([key, label]) => [label, notice.data[key] ?? ""] as [string, string])
    .filter(([, value]) => value !== "");
}

const escapeHtml = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function postJson(context: SendContext, field: string, target: string, body: unknown, headers = {}) {
  return postToChannel(context.ctx, context.organizationId, {
    field,
    url: target,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Slack's incoming webhook: one attachment with a colour bar, title, text and fields. */
function slackBody(notice: Notice, extra: Fields) {
  return {
    ...extra,
    text: `${emojiOf(notice)} ${notice.title}`,
    attachments: [
      {
        color: colorOf(notice),
        title: notice.title,
        text: notice.data.message,
        fields: factsOf(notice).map(([title, value]) => ({ title, value, short: title !== "Deployment" })),
        ts: Math.floor(Date.parse(notice.timestamp) / 1000),
      },
    ],
  };
}

const optionalText = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

export const KINDS = {
  slack: {
    suffix: "Slack",
    shape: { webhookUrl: url, channel: text.optional() },
    secrets: ["webhookUrl"],
    urls: ["webhookUrl"],
    send: (f, notice, context) =>
      postJson(
        context,
        "webhookUrl",
        f.webhookUrl as string,
        slackBody(notice, { channel: optionalText(f.channel) }),
      ),
  },
  mattermost: {
    suffix: "Mattermost",
    shape: { webhookUrl: url, channel: text.optional(), username: text.optional() },
    secrets: ["webhookUrl"],
    urls: ["webhookUrl"],
    send: (f, notice, context) =>
      postJson(
        context,
        "webhookUrl",
        f.webhookUrl as string,
        slackBody(notice, { channel: optionalText(f.channel), username: optionalText(f.username) }),
      ),
  },
  discord: {
    suffix: "Discord",
    shape: { webhookUrl: url, decoration: z.boolean().optional() },
    secrets: ["webhookUrl"],
    urls: ["webhookUrl"],
    send: (f, notice, context) =>
      postJson(context, "webhookUrl", f.webhookUrl as string, {
        embeds: [
          {
            title: f.decoration ? `${emojiOf(notice)} ${notice.title}` : notice.title,
            description: notice.data.message,
            color: Number.parseInt(colorOf(notice).slice(1), 16),
            fields: factsOf(notice).map(([name, value]) => ({ name, value, inline: name !== "Deployment" })),
            timestamp: notice.timestamp,
            footer: { text: notice.event },
          },
        ],
      }),
  },
  telegram: {
    suffix: "Telegram",
    shape: {
      botToken: required.regex(/^[0-9]+:[A-Za-z0-9_-]+$/, "must be a bot token (123456:ABC...)"),
      chatId: required,
      messageThreadId: text.optional(),
    },
    secrets: ["botToken"],
    urls: [],
    send: (f, notice, context) => {
      const lines = [
        `<b>${escapeHtml(`${emojiOf(notice)} ${notice.title}`)}</b>`,
        escapeHtml(notice.data.message),
        ...factsOf(notice).map(([label, value]) => `<b>${escapeHtml(label)}:</b> ${escapeHtml(value)}`),
      ];
      const thread = optionalText(f.messageThreadId);
      return postJson(
        context,
        "botToken",
        `${context.ctx.config.notifications.apis.telegram}/bot${f.botToken as string}/sendMessage`,
        {
          chat_id: f.chatId,
          text: lines.join("\n"),
          parse_mode: "HTML",
          disable_web_page_preview: true,
          ...(thread ? { message_thread_id: Number(thread) } : {}),
        },
      );
    },
  },
  email: {
    suffix: "Email",
    shape: {
      smtpServer: required.max(253),
      smtpPort: z.number().int().min(1).max(65535),
      username: required,
      password: required,
      fromAddress: z.email().max(320),
      toAddresses: z.array(z.email().max(320)).min(1).max(50),
    },
    secrets: ["password"],
    urls: ["smtpServer"],
    send: (f, notice, context) => sendMail(f, notice, context),
  },
  resend: {
    suffix: "Resend",
    shape: {
      apiKey: required,
      fromAddress: z.email().max(320),
      toAddresses: z.array(z.email().max(320)).min(1).max(50),
    },
    secrets: ["apiKey"],
    urls: [],
    send: (f, notice, context) =>
      postJson(
        context,
        "apiKey",
        `${context.ctx.config.notifications.apis.resend}/emails`,
        {
          from: f.fromAddress,
          to: f.toAddresses,
          subject: notice.title,
          html: emailHtml(notice),
          text: emailText(notice),
        },
        { authorization: `Bearer ${f.apiKey as string}` },
      ),
  },
  gotify: {
    suffix: "Gotify",
    shape: {
      serverUrl: url,
      appToken: required,
      priority: z.number().int().min(0).max(10).default(5),
      decoration: z.boolean().optional(),
    },
    secrets: ["appToken"],
    urls: ["serverUrl"],
    send: (f, notice, context) =>
      postJson(
        context,
        "serverUrl",
        `${(f.serverUrl as string).replace(/\/+$/, "")}/message`,
        {
          title: f.decoration ? `${emojiOf(notice)} ${notice.title}` : notice.title,
          message: [notice.data.message, ...factsOf(notice).map(([l, v]) => `**${l}:** ${v}`)].join("\n\n"),
          priority: f.priority ?? 5,
          extras: { "client::display": { contentType: "text/markdown" } },
        },
        { "x-gotify-key": f.appToken as string },
      ),
  },
  ntfy: {
    suffix: "Ntfy",
    shape: {
      serverUrl: url,
      topic: required.regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, - or _"),
      accessToken: text.optional(),
      priority: z.number().int().min(1).max(5).default(3),
    },
    secrets: ["accessToken"],
    urls: ["serverUrl"],
    send: (f, notice, context) => {
      const token = optionalText(f.accessToken);
      return postToChannel(context.ctx, context.organizationId, {
        field: "serverUrl",
        url: `${(f.serverUrl as string).replace(/\/+$/, "")}/${f.topic as string}`,
        headers: {
          "content-type": "text/plain; charset=utf-8",
          // HTTP headers are Latin-1: the title goes RFC 2047-encoded, as ntfy documents.
          title: `=?UTF-8?B?${Buffer.from(notice.title).toString("base64")}?=`,
          tags:
            notice.data.status === "success"
              ? "white_check_mark"
              : notice.data.status === "error"
                ? "x"
                : "warning",
          priority: String(f.priority ?? 3),
          ...(notice.data.deploymentUrl ? { click: notice.data.deploymentUrl } : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: [notice.data.message, ...factsOf(notice).map(([l, v]) => `${l}: ${v}`)].join("\n"),
      });
    },
  },
  pushover: {
    suffix: "Pushover",
    shape: {
      userKey: required,
      apiToken: required,
      priority: z.number().int().min(-2).max(2).default(0),
      retry: z.number().int().min(30).nullish(),
      expire: z.number().int().min(1).max(10800).nullish(),
    },
    secrets: ["userKey", "apiToken"],
    urls: [],
    refine: (f) => {
      if (f.priority !== 2) return null;
      if (f.retry == null) return ["retry", "is needed for priority 2 (at least 30 seconds)"];
      if (f.expire == null) return ["expire", "is needed for priority 2 (at most 10800 seconds)"];
      return null;
    },
    send: (f, notice, context) => {
      const form = new URLSearchParams({
        token: f.apiToken as string,
        user: f.userKey as string,
        title: notice.title,
        message: [
          escapeHtml(notice.data.message),
          ...factsOf(notice).map(([l, v]) => `<b>${escapeHtml(l)}:</b> ${escapeHtml(v)}`),
        ].join("\n"),
        html: "1",
        priority: String(f.priority ?? 0),
        timestamp: String(Math.floor(Date.parse(notice.timestamp) / 1000)),
      });
      if (f.priority === 2) {
        form.set("retry", String(f.retry));
        form.set("expire", String(f.expire));
      }
      if (notice.data.deploymentUrl) form.set("url", notice.data.deploymentUrl);
      return postToChannel(context.ctx, context.organizationId, {
        field: "apiToken",
        url: `${context.ctx.config.notifications.apis.pushover}/1/messages.json`,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form.toString(),
      });
    },
  },
  lark: {
    suffix: "Lark",
    shape: { webhookUrl: url },
    secrets: ["webhookUrl"],
    urls: ["webhookUrl"],
    send: (f, notice, context) =>
      postJson(context, "webhookUrl", f.webhookUrl as string, {
        msg_type: "interactive",
        card: {
          config: { wide_screen_mode: true },
          header: {
            title: { tag: "plain_text", content: `${emojiOf(notice)} ${notice.title}` },
            template:
              notice.data.status === "success" ? "green" : notice.data.status === "error" ? "red" : "orange",
          },
          elements: [
            { tag: "div", text: { tag: "lark_md", content: notice.data.message } },
            {
              tag: "div",
              fields: factsOf(notice).map(([l, v]) => ({
                is_short: l !== "Deployment",
                text: { tag: "lark_md", content: `**${l}:**\n${v}` },
              })),
            },
          ],
        },
      }),
  },
  teams: {
    suffix: "Teams",
    shape: { webhookUrl: url },
    secrets: ["webhookUrl"],
    urls: ["webhookUrl"],
    send: (f, notice, context) =>
      postJson(context, "webhookUrl", f.webhookUrl as string, {
        type: "message",
        attachments: [
          {
            contentType: "application/vnd.microsoft.card.adaptive",
            content: {
              $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
              type: "AdaptiveCard",
              version: "1.4",
              body: [
                {
                  type: "TextBlock",
                  size: "Medium",
                  weight: "Bolder",
                  text: `${emojiOf(notice)} ${notice.title}`,
                },
                { type: "TextBlock", text: notice.data.message, wrap: true },
                { type: "FactSet", facts: factsOf(notice).map(([title, value]) => ({ title, value })) },
              ],
            },
          },
        ],
      }),
  },
  custom: {
    suffix: "Custom",
    shape: {
      endpoint: url,
      headers: z
        .record(
          z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, "must be an HTTP header name"),
          z
            .string()
            .max(4096)
            .regex(/^[^\r\n]*$/, "must be one line"),
        )
        .optional(),
    },
    secrets: ["headers"],
    urls: ["endpoint"],
    send: (f, notice, context) =>
      postJson(
        context,
        "endpoint",
        f.endpoint as string,
        { event: notice.event, timestamp: notice.timestamp, data: notice.data },
        (f.headers as Record<string, string> | undefined) ?? {},
      ),
  },
} satisfies Record<string, KindDef>;

export type NotificationKind = keyof typeof KINDS;
export const KIND_NAMES = Object.keys(KINDS) as NotificationKind[];
export const kindDef = (kind: string): KindDef => (KINDS as Record<string, KindDef>)[kind]!;

function emailText(notice: Notice): string {
  // A mail to one person carries its link, not an event's facts.
  if (notice.data.actionUrl) return [notice.data.message, "", notice.data.actionUrl].join("\n");
  return [notice.data.message, "", ...factsOf(notice).map(([l, v]) => `${l}: ${v}`)].join("\n");
}

function emailHtml(notice: Notice): string {
  const rows = factsOf(notice)
    .map(([l, v]) => `<tr><th align="left">${escapeHtml(l)}</th><td>${escapeHtml(v)}</td></tr>`)
    .join("");
  const head = `<h2>${escapeHtml(notice.title)}</h2><p>${escapeHtml(notice.data.message)}</p>`;
  const link = notice.data.actionUrl;
  if (link) return `${head}<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`;
  return `${head}<table>${rows}</table>`;
}

/** SMTP through nodemailer: 465 is TLS from the start, other ports upgrade with STARTTLS when offered. */
async function sendMail(f: Fields, notice: Notice, context: SendContext): Promise<void> {
  const host = f.smtpServer as string;
  const port = f.smtpPort as number;
  await checkChannelTarget(context.ctx, context.organizationId, "smtpServer", { host, port });
  const transport = nodemailer.createTransport({
    host,
    port,
    secure: port === 465,
    auth: { user: f.username as string, pass: f.password as string },
    connectionTimeout: DELIVERY_TIMEOUT_MS,
    greetingTimeout: DELIVERY_TIMEOUT_MS,
    socketTimeout: DELIVERY_TIMEOUT_MS,
  });
  try {
    await transport.sendMail({
      from: f.fromAddress as string,
      to: f.toAddresses as string[],
      subject: notice.title,
      text: emailText(notice),
      html: emailHtml(notice),
    });
  } catch (error) {
    const code = (error as { code?: string; responseCode?: number }).code;
    const responseCode = (error as { responseCode?: number }).responseCode;
    throw new DeliveryError(
      `${host}:${port} refused the mail: ${responseCode ? `SMTP ${responseCode}` : (code ?? "connection failed")}`,
    );
  } finally {
    transport.close();
  }
}

/** Checks every URL field present in `fields`; throws DeliveryError naming the field. */
export async function checkKindUrls(
  kind: NotificationKind,
  fields: Fields,
  context: SendContext,
): Promise<void> {
  for (const field of kindDef(kind).urls) {
    const value = fields[field];
    if (typeof value !== "string") continue;
    if (field === "smtpServer") {
      await checkChannelTarget(context.ctx, context.organizationId, field, {
        host: value,
        port: (fields.smtpPort as number | undefined) ?? 587,
      });
    } else {
      await checkChannelUrl(context.ctx, context.organizationId, field, value);
    }
  }
}
