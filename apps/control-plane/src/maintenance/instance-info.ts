/**
 * What settings.* tells about the instance beside its web server settings: the address this
 * machine is known by (settings.getIp / updateServerIp, also what domain.validateDomain checks
 * DNS records against), the health of its database and proxy (checkInfrastructureHealth), and
 * the proxy's published ports and environment as Docker runs it (getTraefikPorts,
 * haveTraefikDashboardPortEnabled, readTraefikEnv).
 */
import { DASHBOARD_PORT } from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { databaseIsUp } from "../db/database.ts";
import { ApiError } from "../errors.ts";

/** Stores the address this machine is known by; "" forgets it. */
export async function saveServerIp(ctx: ServiceContext, serverIp: string): Promise<void> {
  await ctx.db
    .updateTable("webServerSettings")
    .set({ serverIp: serverIp === "" ? null : serverIp })
    .where("id", "=", 1)
    .execute();
}

/** The proxy's Swarm service on `serverId` as its agent reads it; 404 when it is not installed. */
export async function inspectInstalledProxy(ctx: ServiceContext, serverId: string) {
  const inspection = await callAgent(serverId, () => ctx.agents.client.inspectProxy(serverId), ctx.logger);
  if (!inspection.found)
    throw new ApiError("NOT_FOUND", `The proxy is not installed on server ${serverId}`, { serverId });
  return inspection;
}

/** The entry points' own ports (80 and 443) are not "additional" ports (Dokploy's readPorts). */
const ENTRY_POINT_TARGETS = new Set([80, 443]);

export async function additionalProxyPorts(ctx: ServiceContext, serverId: string) {
  const { ports } = await inspectInstalledProxy(ctx, serverId);
  return ports
    .filter((port) => !ENTRY_POINT_TARGETS.has(port.targetPort))
    .map((port) => ({
      targetPort: port.targetPort,
      publishedPort: port.publishedPort,
      protocol: port.protocol as "tcp" | "udp" | "sctp",
    }));
}

export async function proxyDashboardPublished(ctx: ServiceContext, serverId: string): Promise<boolean> {
  const { ports } = await inspectInstalledProxy(ctx, serverId);
  return ports.some((port) => port.targetPort === DASHBOARD_PORT);
}

export async function proxyEnvironment(ctx: ServiceContext, serverId: string): Promise<string> {
  return (await inspectInstalledProxy(ctx, serverId)).env.join("\n");
}

export interface ComponentHealth {
  status: "healthy" | "unhealthy";
  message?: string;
}

async function proxyHealth(ctx: ServiceContext): Promise<ComponentHealth> {
  try {
    const inspection = await ctx.agents.client.inspectProxy(LOCAL_SERVER_ID, 10_000);
    if (!inspection.found) return { status: "unhealthy", message: "The proxy's service is not installed" };
    if (inspection.runningTasks === 0)
      return { status: "unhealthy", message: "The proxy's task is not running" };
    return { status: "healthy" };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { status: "unhealthy", message: `This machine's agent did not answer: ${reason}` };
  }
}

/** This machine's database and proxy, each checked for real (nothing is assumed healthy). */
export async function infrastructureHealth(
  ctx: ServiceContext,
): Promise<{ postgres: ComponentHealth; traefik: ComponentHealth }> {
  const [database, traefik] = await Promise.all([databaseIsUp(ctx.db), proxyHealth(ctx)]);
  const postgres: ComponentHealth = database
    ? { status: "healthy" }
    : { status: "unhealthy", message: "The database does not answer" };
  return { postgres, traefik };
}
