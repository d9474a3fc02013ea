/**
 * user.getContainerMetrics reads an agent's container series through the same function as
 * server.getServerMetrics (monitoring/monitoring-config.ts fetchServerMetrics: the outbound
 * guard, the own-address rule, the agent's token): only the endpoint differs, as in Dokploy,
 * `<url>/metrics/containers?appName=<appName>`.
 */
import type { Caller, ServiceContext } from "../context.ts";
import { fetchServerMetrics } from "../monitoring/monitoring-config.ts";

export function containerMetricsUrl(url: string, appName: string): string {
  const target = new URL(url);
  target.pathname = `${target.pathname.replace(/\/+$/, "")}/metrics/containers`;
  target.searchParams.set("appName", appName);
  return target.toString();
}

export function fetchContainerMetrics(
  ctx: Pick<ServiceContext, "config" | "db" | "secrets">,
  caller: Pick<Caller, "organizationId" | "role">,
  input: { url: string; token: string; appName: string; dataPoints: string },
): Promise<unknown[]> {
  return fetchServerMetrics(ctx, caller, {
    url: containerMetricsUrl(input.url, input.appName),
    token: input.token,
    dataPoints: input.dataPoints,
  });
}
