/**
 * The instance-wide web server settings (one row) and the proxy's static configuration made
 * from them.
 */
import {
  ACCESS_LOG_PATH,
  ACME_STORAGE_PATH,
  DASHBOARD_ENTRYPOINT,
  DASHBOARD_PORT,
  DYNAMIC_CONFIG_DIRECTORY,
  LETSENCRYPT_RESOLVER,
  parseStaticConfig,
  staticConfigFor,
  toYaml,
} from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import type { WebServerSettings } from "../db/schema.ts";

export async function loadWebServerSettings(db: Db): Promise<WebServerSettings> {
  const row = await db.selectFrom("webServerSettings").selectAll().where("id", "=", 1).executeTakeFirst();
  if (row) return row;
  // The migration inserts the row; this only covers a database where it was deleted by hand.
  return db
    .insertInto("webServerSettings")
    .values({ id: 1 })
    .onConflict((conflict) => conflict.column("id").doNothing())
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Whether the dashboard of `serverId`'s proxy is on (this machine's flag is in the settings row). */
export async function dashboardEnabledOn(
  ctx: ServiceContext,
  settings: WebServerSettings,
  serverId: string,
): Promise<boolean> {
  if (serverId === LOCAL_SERVER_ID) return settings.dashboardEnabled;
  const server = await ctx.db
    .selectFrom("servers")
    .select("proxyDashboardEnabled")
    .where("serverId", "=", serverId)
    .executeTakeFirst();
  return server?.proxyDashboardEnabled ?? false;
}

/** The static configuration the platform generates for a server's proxy. */
export function generatedStaticConfig(settings: WebServerSettings, dashboardEnabled: boolean) {
  return staticConfigFor({
    letsEncryptEmail: settings.letsEncryptEmail,
    acmeStoragePath: ACME_STORAGE_PATH,
    dynamicConfigDirectory: DYNAMIC_CONFIG_DIRECTORY,
    accessLogPath: ACCESS_LOG_PATH,
    dashboardEnabled,
  });
}

/**
 * The static configuration to install: the server's current traefik.yml when it is valid (an
 * administrator may have edited it with settings.updateTraefikConfig), with the dashboard, the
 * `letsencrypt` resolver and its ACME email set from the platform's state; otherwise the
 * generated one.
 */
export async function staticConfigToInstall(
  ctx: ServiceContext,
  settings: WebServerSettings,
  serverId: string,
  dashboardEnabled: boolean,
): Promise<string> {
  const generated = generatedStaticConfig(settings, dashboardEnabled);
  const current = await callAgent(
    serverId,
    () => ctx.agents.client.readProxyFile(serverId, "static", ""),
    ctx.logger,
  );
  const parsed = current.exists ? parseStaticConfig(current.content) : undefined;
  if (!parsed?.ok) return toYaml(generated);

  const config = parsed.config as Record<string, Record<string, unknown> | undefined>;
  const entryPoints = { ...(config.entryPoints ?? {}) };
  if (dashboardEnabled) {
    entryPoints[DASHBOARD_ENTRYPOINT] = { address: `:${DASHBOARD_PORT}` };
    config.api = { ...(config.api ?? {}), dashboard: true, insecure: true };
  } else {
    delete entryPoints[DASHBOARD_ENTRYPOINT];
    delete config.api;
  }
  config.entryPoints = entryPoints;
  // Domains name the `letsencrypt` resolver: it is put back when an edit dropped it.
  const resolvers = { ...(config.certificatesResolvers ?? {}) } as Record<
    string,
    { acme?: Record<string, unknown> }
  >;
  const acme = resolvers[LETSENCRYPT_RESOLVER]?.acme;
  if (!acme) {
    resolvers[LETSENCRYPT_RESOLVER] = generated.certificatesResolvers[LETSENCRYPT_RESOLVER]!;
  } else if (settings.letsEncryptEmail) {
    acme.email = settings.letsEncryptEmail;
  } else {
    delete acme.email;
  }
  config.certificatesResolvers = resolvers;
  return toYaml(config);
}
