/**
 * Monitoring set-up on the control plane (spec 2.13, 4.8, 4.9, 4.10): a server's metricsConfig
 * is kept sealed in monitoring_configs (its token is a secret: only the organization owning the
 * server reads it back, and only its owner and administrators), then sent to the server's agent,
 * which applies it live. This machine's configuration (`local`) belongs to the instance
 * organization (admin.setupMonitoring). serverThreshold events the agents publish are recorded
 * in `events` for notification delivery.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import {
  type AgentEvent,
  METRICS_ERRORS,
  type MetricsConfig,
  metricsConfigSchema,
} from "@platform/agent-protocol";
import {
  carriedIPv4,
  checkOutboundHost,
  normalizeHost,
  OutboundRefusedError,
  systemResolver,
} from "@platform/outbound-guard";
import type { Logger } from "pino";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { recordEvent } from "../deployments/events.ts";
import { ApiError, badRequest } from "../errors.ts";
import { instanceOrganizationId, isInstanceOrganization } from "../organizations/instance.ts";
import { checkUserTarget, hostInterfaceAddresses } from "../outbound/own-addresses.ts";
import { loadWebServerSettings } from "../proxy/static-config.ts";
import { controlPlanePublicIp } from "../servers/public-ip.ts";

export { metricsConfigSchema };

const sealContext = (serverId: string, organizationId: string) => ({
  table: "monitoring_configs",
  rowId: serverId,
  organizationId,
});

/** The stored configuration of a server of `organizationId`, or null when not set up. */
export async function loadMonitoringConfig(
  ctx: Pick<ServiceContext, "db" | "secrets">,
  organizationId: string,
  serverId: string,
): Promise<MetricsConfig | null> {
  const row = await ctx.db
    .selectFrom("monitoringConfigs")
    .select("configSealed")
    .where("serverId", "=", serverId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  if (!row) return null;
  return JSON.parse(ctx.secrets.decrypt(row.configSealed, sealContext(serverId, organizationId)));
}

/** The callback must pass the outbound guard (no link-local or metadata targets). */
async function checkCallback(ctx: Pick<ServiceContext, "config">, urlCallback: string): Promise<void> {
  try {
    await checkOutboundHost(new URL(urlCallback).hostname, ctx.config.outboundAllow);
  } catch (error) {
    if (!(error instanceof OutboundRefusedError)) throw error;
    throw badRequest(`Invalid input: metricsConfig.server.urlCallback: ${error.message}`, {
      fields: ["metricsConfig.server.urlCallback"],
    });
  }
}

/**
 * Keeps `config` for `serverId` (already checked to be the caller's, or `local` for the
 * instance organization) and applies it on the server's agent; answers the agent's port.
 */
export async function setupMonitoring(
  ctx: ServiceContext,
  organizationId: string,
  serverId: string,
  config: MetricsConfig,
  logger?: Logger,
): Promise<{ port: number }> {
  await checkCallback(ctx, config.server.urlCallback);
  await storeMonitoringConfig(ctx, organizationId, serverId, config);
  return callAgent(
    serverId,
    () => ctx.agents.client.setupMonitoring(serverId, JSON.stringify(config), 20_000),
    logger,
  );
}

/** Keeps `config` sealed for `serverId` (what setupMonitoring stores before applying it). */
export async function storeMonitoringConfig(
  ctx: Pick<ServiceContext, "db" | "secrets" | "now">,
  organizationId: string,
  serverId: string,
  config: MetricsConfig,
): Promise<void> {
  const configSealed = ctx.secrets.encrypt(JSON.stringify(config), sealContext(serverId, organizationId));
  await ctx.db
    .insertInto("monitoringConfigs")
    .values({ serverId, organizationId, configSealed, updatedAt: ctx.now().toISOString() })
    .onConflict((conflict) =>
      conflict
        .column("serverId")
        .doUpdateSet({ organizationId, configSealed, updatedAt: ctx.now().toISOString() }),
    )
    .execute();
}

/** Shown in place of the monitoring token to those who may not read it. */
export const REDACTED_TOKEN = "[redacted]";

/**
 * A remote server's configuration as server.one answers it (Dokploy answers the server row's
 * metricsConfig): null when never set up; the token only to the organization's owner and
 * administrators, who set it (members read the rest with the token `[redacted]`).
 */
export async function shownMonitoringConfig(
  ctx: Pick<ServiceContext, "db" | "secrets">,
  caller: { organizationId: string; role: string },
  serverId: string,
): Promise<MetricsConfig | null> {
  const config = await loadMonitoringConfig(ctx, caller.organizationId, serverId);
  if (!config || caller.role !== "member") return config;
  return { ...config, server: { ...config.server, token: REDACTED_TOKEN } };
}

/** The organization a server belongs to (`local`: the instance organization). */
async function organizationOfServer(ctx: ServiceContext, serverId: string) {
  if (serverId === LOCAL_SERVER_ID) {
    const organizationId = await instanceOrganizationId(ctx.db);
    return organizationId ? { organizationId, name: "this machine" } : null;
  }
  const server = await ctx.db
    .selectFrom("servers")
    .select(["organizationId", "name"])
    .where("serverId", "=", serverId)
    .executeTakeFirst();
  return server ?? null;
}

/** What a threshold alert says (the agent's event attributes, receiveNotification's input). */
export interface ThresholdAttributes {
  type: string;
  value: string;
  threshold: string;
  message: string;
}

/** Records one threshold alert of `serverId` as a serverThreshold event of its organization. */
export async function recordServerThreshold(
  ctx: ServiceContext,
  serverId: string,
  attributes: ThresholdAttributes,
  at: Date,
): Promise<boolean> {
  const owner = await organizationOfServer(ctx, serverId);
  if (!owner) return false;
  await recordEvent(
    ctx.db,
    {
      organizationId: owner.organizationId,
      kind: "serverThreshold",
      applicationId: null,
      payload: { applicationName: owner.name, status: "alert", serverId, ...attributes },
    },
    at,
  );
  return true;
}

/**
 * The server whose monitoring token is `token` (`local` for this machine's, a remote server's
 * otherwise), or null: each stored configuration is unsealed and compared in constant time.
 */
export async function serverOfMonitoringToken(
  ctx: Pick<ServiceContext, "db" | "secrets">,
  token: string,
  where: "local" | "remote",
): Promise<string | null> {
  let query = ctx.db.selectFrom("monitoringConfigs").select(["serverId", "organizationId"]);
  query =
    where === "local"
      ? query.where("serverId", "=", LOCAL_SERVER_ID)
      : query.where("serverId", "!=", LOCAL_SERVER_ID);
  const wanted = createHash("sha256").update(token).digest();
  for (const row of await query.execute()) {
    const config = await loadMonitoringConfig(ctx, row.organizationId, row.serverId);
    const stored = config?.server.token;
    if (stored && timingSafeEqual(createHash("sha256").update(stored).digest(), wanted)) return row.serverId;
  }
  return null;
}

/** Records each serverThreshold event of an agent as an event of the server's organization. */
export function recordThresholdEvents(ctx: ServiceContext): void {
  ctx.agents.onAgentEvent((event: AgentEvent) => {
    if (event.kind !== "serverThreshold") return;
    const { type = "", value = "", threshold = "", message = "" } = event.attributes;
    recordServerThreshold(
      ctx,
      event.serverId,
      { type, value, threshold, message },
      new Date(event.timeUnixMs || Date.now()),
    ).catch((error) =>
      ctx.logger.warn({ err: error, serverId: event.serverId }, "serverThreshold event not recorded"),
    );
  });
}

const METRICS_FETCH_TIMEOUT_MS = 10_000;
const MAX_METRICS_ANSWER_BYTES = 32 * 1024 * 1024;

/** Every failure of a metrics read that would tell a port's state answers this one error. */
const metricsUnreachable = () => badRequest("The metrics endpoint could not be reached", { fields: ["url"] });

/** The agent's own answer to a wrong token (apps/agent monitoring/http.ts). */
const isAgentTokenRefusal = (status: number, body: unknown) =>
  status === 401 && (body as { error?: { code?: unknown } } | null)?.error?.code === "UNAUTHORIZED";

/** A host as compared with a server's address: bare, lower case, an IPv4 carried in IPv6 unwrapped. */
const comparableHost = (host: string) => {
  const bare = normalizeHost(host) ?? host.toLowerCase();
  return carriedIPv4(bare) ?? bare;
};

/** Whether `host` names this machine: one of its addresses, serverIp, its public IP, or resolving to one. */
async function isThisMachine(ctx: Pick<ServiceContext, "config" | "db">, host: string): Promise<boolean> {
  const settings = await loadWebServerSettings(ctx.db);
  const known = new Set(
    [...hostInterfaceAddresses(), settings.serverIp ?? "", controlPlanePublicIp(ctx.config)]
      .filter(Boolean)
      .map(comparableHost),
  );
  if (known.has(host)) return true;
  const addresses = await systemResolver.resolve(host).catch(() => [] as string[]);
  return addresses.some((address) => known.has(comparableHost(address)));
}

const tokenRequired = (why: string) => badRequest(`Invalid input: token: ${why}`, { fields: ["token"] });

/**
 * The monitoring token server.getServerMetrics uses when its caller sends none (the dashboard,
 * which keeps tokens out of URLs): the stored token of the caller's organization's server whose
 * address and metrics port `url` names (this machine for the instance organization). Only
 * those who may read that token (owner and administrators; instance administrators for this
 * machine) may use it; another organization's token is never looked at.
 */
export async function storedMetricsToken(
  ctx: Pick<ServiceContext, "config" | "db" | "secrets">,
  caller: Pick<Caller, "organizationId" | "role">,
  url: URL,
): Promise<string> {
  const host = comparableHost(url.hostname);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const servers = await ctx.db
    .selectFrom("servers")
    .innerJoin("monitoringConfigs", "monitoringConfigs.serverId", "servers.serverId")
    .select(["servers.serverId", "servers.ipAddress"])
    .where("servers.organizationId", "=", caller.organizationId)
    .where("monitoringConfigs.organizationId", "=", caller.organizationId)
    .execute();
  const candidates = servers
    .filter((server) => comparableHost(server.ipAddress) === host)
    .map((server) => server.serverId);
  if ((await isInstanceOrganization(ctx.db, caller.organizationId)) && (await isThisMachine(ctx, host)))
    candidates.push(LOCAL_SERVER_ID);
  const tokens = new Set<string>();
  for (const serverId of candidates) {
    const config = await loadMonitoringConfig(ctx, caller.organizationId, serverId);
    if (config && config.server.port === port) tokens.add(config.server.token);
  }
  if (tokens.size === 0)
    throw tokenRequired("token is required for a url that is not one of your servers' metrics endpoints");
  if (caller.role === "member")
    throw tokenRequired(
      "token is required: only the organization's owner and administrators read metrics with the stored token",
    );
  if (tokens.size > 1)
    throw tokenRequired("token is required: more than one of your servers' metrics endpoints is at this url");
  return [...tokens][0]!;
}

/**
 * server.getServerMetrics: GET `<url>?limit=<dataPoints>` with the Bearer token (the given one,
 * else storedMetricsToken's), through the outbound guard and the own-address rule (redirects are not followed). Only an agent's
 * own answers are told apart (its token refusal and its 7.5 messages); a refused, timed out,
 * reset or TLS-failed connection, garbage or any other HTTP answer is one "could not be
 * reached", so the URL cannot tell which ports of a host are open.
 */
export async function fetchServerMetrics(
  ctx: Pick<ServiceContext, "config" | "db" | "secrets">,
  caller: Pick<Caller, "organizationId" | "role">,
  input: { url: string; token?: string | undefined; dataPoints: string },
): Promise<unknown[]> {
  const base = new URL(input.url);
  const port = Number(base.port || (base.protocol === "https:" ? 443 : 80));
  try {
    await checkUserTarget(ctx, caller.organizationId, { host: base.hostname, port });
  } catch (error) {
    if (!(error instanceof OutboundRefusedError)) throw error;
    throw badRequest(`Invalid input: url: ${error.message}`, { fields: ["url"] });
  }
  const token = input.token ?? (await storedMetricsToken(ctx, caller, base));
  // As Dokploy: the url names the endpoint (…/metrics or …/metrics/containers?appName=…).
  const target = new URL(base);
  target.searchParams.set("limit", input.dataPoints);
  let status: number;
  let text: string;
  try {
    const response = await fetch(target, {
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(METRICS_FETCH_TIMEOUT_MS),
    });
    status = response.status;
    text = await response.text();
  } catch {
    throw metricsUnreachable();
  }
  if (text.length > MAX_METRICS_ANSWER_BYTES)
    throw badRequest("The metrics answer is too large", { fields: ["dataPoints"] });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw metricsUnreachable();
  }
  if (isAgentTokenRefusal(status, body))
    throw badRequest("The metrics endpoint refused the token", { fields: ["token"] });
  if (status === 200 && Array.isArray(body)) return body;
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  const known = Object.values(METRICS_ERRORS).find((candidate) => candidate === message);
  if (known && (status === 404 || status === 400))
    throw new ApiError(status === 404 ? "NOT_FOUND" : "BAD_REQUEST", known);
  throw metricsUnreachable();
}
