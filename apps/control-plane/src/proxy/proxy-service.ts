import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { rewriteControlPlaneRoute } from "./control-plane-route.ts";
import { dashboardEnabledOn, loadWebServerSettings, staticConfigToInstall } from "./static-config.ts";

/**
 * Creates or updates the proxy's Swarm service on `serverId` with the settings' image and host
 * ports (the container listens on 80, 443 and DASHBOARD_PORT whatever is published).
 */
export async function ensureProxyOn(ctx: ServiceContext, serverId: string): Promise<void> {
  const settings = await loadWebServerSettings(ctx.db);
  const dashboard = await dashboardEnabledOn(ctx, settings, serverId);
  const staticConfig = await staticConfigToInstall(ctx, settings, serverId, dashboard);
  await callAgent(
    serverId,
    () =>
      ctx.agents.client.ensureProxy(serverId, {
        image: settings.traefikImage,
        staticConfig,
        dashboard,
        httpPort: settings.proxyHttpPort,
        httpsPort: settings.proxyHttpsPort,
        dashboardPort: settings.proxyDashboardPort,
      }),
    ctx.logger,
  );
}

/**
 * Turns the dashboard of `serverId`'s proxy (this machine's, or a server already found in
 * `organizationId`) on or off and installs or updates the proxy with it; a failed update keeps
 * the flag as it was.
 */
export async function setProxyDashboard(
  ctx: ServiceContext,
  organizationId: string,
  serverId: string,
  enabled: boolean,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (serverId === LOCAL_SERVER_ID) {
      await trx
        .updateTable("webServerSettings")
        .set({ dashboardEnabled: enabled })
        .where("id", "=", 1)
        .execute();
    } else {
      await trx
        .updateTable("servers")
        .set({ proxyDashboardEnabled: enabled })
        .where("serverId", "=", serverId)
        .where("organizationId", "=", organizationId)
        .execute();
    }
    await ensureProxyOn({ ...ctx, db: trx }, serverId);
  });
}

/**
 * The embedded default of the self-hosted edition: at start, this machine's proxy is installed
 * (or brought up to date) in the background. A failure (no Docker, no Swarm, a taken port) is
 * logged with its reason and does not stop the control plane; settings.toggleDashboard and
 * settings.reloadTraefik try again.
 */
export async function installLocalProxy(ctx: ServiceContext): Promise<void> {
  try {
    await ensureProxyOn(ctx, LOCAL_SERVER_ID);
    await rewriteControlPlaneRoute(ctx);
    ctx.logger.info("the proxy of this machine is installed");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    ctx.logger.warn(`the proxy of this machine was not installed: ${reason}`);
  }
}
