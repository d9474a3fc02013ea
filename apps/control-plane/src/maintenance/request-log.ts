/**
 * Request logging of a server's proxy (settings.toggleRequests, haveActivateRequests,
 * readStatsLogs): the `accessLog` section of its traefik.yml switched on (JSON, the User-Agent
 * header kept) or off, checked against Traefik's schema and applied by restarting the proxy,
 * and the log read back a page at a time by the server's agent. A proxy's log holds the
 * requests of every application it serves, so it is read only by whoever owns the server
 * (this machine's: the instance administrator), as routers/settings.ts decides.
 */

import type { AccessLogSortField } from "@platform/agent-protocol";
import { ACCESS_LOG_PATH, parseStaticConfig, toYaml } from "@platform/traefik-config";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { invalidTraefikConfig } from "../proxy/sync.ts";

/** The access log section toggleRequests writes. */
export const REQUEST_LOG_SETTINGS = {
  filePath: ACCESS_LOG_PATH,
  format: "json",
  fields: { headers: { names: { "User-Agent": "keep" } } },
} as const;

export const DEFAULT_STATS_PAGE_SIZE = 10;

const SORT_FIELDS = ["timestamp", "method", "path", "status", "duration", "ip", "userAgent", "host"] as const;
/** Dokploy's tables sort by Traefik's field names: they mean the same columns. */
const TRAEFIK_SORT_NAMES: Record<string, AccessLogSortField> = {
  time: "timestamp",
  StartUTC: "timestamp",
  RequestMethod: "method",
  RequestPath: "path",
  DownstreamStatus: "status",
  Duration: "duration",
  ClientHost: "ip",
  ClientAddr: "ip",
  "request_User-Agent": "userAgent",
  RequestHost: "host",
};

const statusFilterSchema = z.string().regex(/^([1-5]\d\d|[1-5]xx|info|success|redirect|client|server)$/, {
  message: 'must be a status ("404"), a class ("4xx") or info, success, redirect, client, server',
});

export const readStatsLogsInput = z.object({
  /** 1-based page number (spec), or Dokploy's table state {pageIndex (0-based), pageSize}. */
  page: z
    .union([
      z.number().int().min(1).max(1_000_000),
      z.object({
        pageIndex: z.number().int().min(0).max(1_000_000),
        pageSize: z.number().int().min(1).max(1000),
      }),
    ])
    .default(1),
  sort: z
    .object({
      id: z.enum([...SORT_FIELDS, ...(Object.keys(TRAEFIK_SORT_NAMES) as [string, ...string[]])]),
      desc: z.boolean(),
    })
    .optional(),
  search: z.string().max(256).optional(),
  /** One status filter or several (any may match). */
  status: z.union([statusFilterSchema, z.array(statusFilterSchema).max(16)]).optional(),
  dateRange: z
    .object({
      start: z.iso.datetime({ offset: true }).optional(),
      end: z.iso.datetime({ offset: true }).optional(),
    })
    .optional(),
  serverId: z.string().min(1).max(64).nullish(),
});
export type ReadStatsLogsInput = z.output<typeof readStatsLogsInput>;

export const statsLogsSchema = z.object({
  data: z.array(
    z.object({
      timestamp: z.string(),
      method: z.string(),
      path: z.string(),
      status: z.number().int(),
      /** Nanoseconds, as Traefik's Duration. */
      duration: z.number(),
      ip: z.string(),
      userAgent: z.string(),
      host: z.string(),
    }),
  ),
  totalCount: z.number().int().nonnegative(),
});

export async function readStatsLogs(ctx: ServiceContext, serverId: string, input: ReadStatsLogsInput) {
  const { page, pageSize } =
    typeof input.page === "number"
      ? { page: input.page, pageSize: DEFAULT_STATS_PAGE_SIZE }
      : { page: input.page.pageIndex + 1, pageSize: input.page.pageSize };
  const sortId = input.sort?.id ?? "timestamp";
  const sortField = TRAEFIK_SORT_NAMES[sortId] ?? (sortId as AccessLogSortField);
  const start = input.dateRange?.start ? Date.parse(input.dateRange.start) : 0;
  const end = input.dateRange?.end ? Date.parse(input.dateRange.end) : 0;
  if (start && end && start > end) {
    throw new ApiError("BAD_REQUEST", "Invalid input: dateRange: start is after end", {
      fields: ["dateRange"],
    });
  }
  const result = await callAgent(
    serverId,
    () =>
      ctx.agents.client.readAccessLog(serverId, {
        page,
        pageSize,
        search: input.search ?? "",
        status: input.status === undefined ? [] : [input.status].flat(),
        startUnixMs: start,
        endUnixMs: end,
        sortField,
        // Newest first unless the caller says otherwise.
        sortDescending: input.sort?.desc ?? true,
      }),
    ctx.logger,
  );
  return { data: result.entries, totalCount: result.totalCount };
}

/** The server's traefik.yml as an object; 404 when the proxy has none. */
async function readStaticConfig(ctx: ServiceContext, serverId: string): Promise<Record<string, unknown>> {
  const file = await callAgent(
    serverId,
    () => ctx.agents.client.readProxyFile(serverId, "static", ""),
    ctx.logger,
  );
  if (!file.exists)
    throw new ApiError("NOT_FOUND", `The proxy is not installed on server ${serverId}`, { serverId });
  const parsed = parseStaticConfig(file.content);
  if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
  return parsed.config as Record<string, unknown>;
}

export async function requestLoggingState(ctx: ServiceContext, serverId: string) {
  const config = await readStaticConfig(ctx, serverId).catch((error) => {
    if (error instanceof ApiError && error.code === "NOT_FOUND") return {} as Record<string, unknown>;
    throw error;
  });
  const accessLog = config.accessLog as { filePath?: unknown } | undefined;
  const filePath = typeof accessLog?.filePath === "string" ? accessLog.filePath : null;
  return { enabled: accessLog !== undefined, filePath };
}

/** Sets or removes traefik.yml's accessLog (schema-checked), then restarts the proxy. */
export async function setRequestLogging(ctx: ServiceContext, serverId: string, enable: boolean) {
  const config = await readStaticConfig(ctx, serverId);
  if (enable) config.accessLog = structuredClone(REQUEST_LOG_SETTINGS);
  else delete config.accessLog;
  const yaml = toYaml(config);
  const checked = parseStaticConfig(yaml);
  if (!checked.ok) throw invalidTraefikConfig(checked.errors);
  await callAgent(serverId, () => ctx.agents.client.writeProxyFile(serverId, "static", "", yaml), ctx.logger);
  await callAgent(serverId, () => ctx.agents.client.reloadProxy(serverId), ctx.logger);
  return { success: true as const, enabled: enable };
}
