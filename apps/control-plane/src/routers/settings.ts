/**
 * settings (spec 4.9), the web server and proxy part: administrators only, self-hosted edition
 * only. The settings are one row for the whole instance and, with this machine and its proxy,
 * belong to the instance administrator (organizations/instance.ts); the proxy procedures act on
 * this machine's proxy unless a serverId of the caller's organization is given, whose own
 * administrators may act on it.
 */
import { DASHBOARD_PORT, hostSchema, isWildcardHost, parseStaticConfig } from "@platform/traefik-config";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { ApiError, forbidden } from "../errors.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { assignControlPlaneDomain } from "../proxy/control-plane-route.ts";
import { ensureProxyOn, loadWebServerSettings } from "../proxy/proxy-service.ts";
import { invalidTraefikConfig } from "../proxy/sync.ts";
import { agentServerId } from "../servers/repository.ts";

const SELF_HOSTED = ["self-hosted"] as const;
const REDACTED = "[redacted]";

const optionalServerId = z.object({ serverId: z.string().min(1).max(64).nullish() }).optional();

/** Instance-wide settings and this machine are the instance administrator's alone. */
async function requireInstanceAdmin(services: ServiceContext, caller: Caller): Promise<void> {
  if (!(await isInstanceAdmin(services.db, caller))) {
    throw forbidden(
      "Instance settings and this machine's proxy belong to the instance administrator " +
        "(owner or administrators of the first organization); pass the serverId of one of your servers",
    );
  }
}

/**
 * The agent to ask: the caller's organization's server, or this machine's (no serverId) for the
 * instance administrator only.
 */
async function targetServer(services: ServiceContext, caller: Caller, serverId?: string | null) {
  // This machine's proxy is an instance setting: say so (403) before agentServerId's 400.
  if (!serverId || serverId === LOCAL_SERVER_ID) await requireInstanceAdmin(services, caller);
  return agentServerId(services, caller.organizationId, serverId);
}

async function reloadProxy(services: ServiceContext, serverId: string) {
  return callAgent(serverId, () => services.agents.client.reloadProxy(serverId), services.logger);
}

export const settingsRouter = defineRouter("settings", {
  getWebServerSettings: query({
    summary: "The web server settings; the SSH private key is shown redacted",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: z.object({
      host: z.string().nullable(),
      letsEncryptEmail: z.string().nullable(),
      certificateType: z.enum(["letsencrypt", "custom", "none"]),
      https: z.boolean(),
      serverIp: z.string().nullable(),
      sshPrivateKey: z.string().nullable(),
      enableDockerCleanup: z.boolean(),
      metricsConfig: z.null(),
      enableDashboard: z.boolean(),
      traefikImage: z.string(),
      wildcardDomain: z.string(),
    }),
    handler: async ({ services, caller }) => {
      await requireInstanceAdmin(services, caller);
      const settings = await loadWebServerSettings(services.db);
      return {
        host: settings.host,
        letsEncryptEmail: settings.letsEncryptEmail,
        certificateType: settings.certificateType,
        https: settings.https,
        serverIp: settings.serverIp,
        sshPrivateKey: settings.sshPrivateKeySealed ? REDACTED : null,
        enableDockerCleanup: settings.enableDockerCleanup,
        metricsConfig: null,
        enableDashboard: settings.dashboardEnabled,
        traefikImage: settings.traefikImage,
        wildcardDomain: settings.wildcardDomain,
      };
    },
  }),

  assignDomainServer: mutation({
    summary: "Serve the control plane under `host` through this machine's proxy",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({
      host: hostSchema.refine((host) => !isWildcardHost(host), "must not be a wildcard host"),
      certificateType: z.enum(["letsencrypt", "custom", "none"]),
      https: z.boolean().default(false),
      letsEncryptEmail: z.email().max(254).nullish(),
    }),
    output: successSchema,
    handler: async ({ services, caller, input }) => {
      await requireInstanceAdmin(services, caller);
      await assignControlPlaneDomain(services, input);
      return success;
    },
  }),

  reloadTraefik: mutation({
    summary: "Restart the proxy (this machine's, or serverId's)",
    access: "admin",
    editions: SELF_HOSTED,
    input: optionalServerId,
    output: successSchema,
    handler: async ({ services, caller, input }) => {
      const serverId = await targetServer(services, caller, input?.serverId);
      const reloaded = await reloadProxy(services, serverId);
      if (!reloaded.found)
        throw new ApiError("NOT_FOUND", `The proxy is not installed on server ${serverId}`);
      return success;
    },
  }),

  toggleDashboard: mutation({
    summary: `Turn the proxy dashboard (port ${DASHBOARD_PORT}) on or off; installs or updates the proxy`,
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({
      enableDashboard: z.boolean().default(false),
      serverId: z.string().min(1).max(64).nullish(),
    }),
    output: successSchema,
    handler: async ({ services, caller, input }) => {
      const serverId = await targetServer(services, caller, input.serverId);
      await services.db.transaction().execute(async (trx) => {
        if (serverId === LOCAL_SERVER_ID) {
          await trx
            .updateTable("webServerSettings")
            .set({ dashboardEnabled: input.enableDashboard })
            .where("id", "=", 1)
            .execute();
        } else {
          await trx
            .updateTable("servers")
            .set({ proxyDashboardEnabled: input.enableDashboard })
            .where("serverId", "=", serverId)
            .execute();
        }
        await ensureProxyOn({ ...services, db: trx }, serverId);
      });
      return success;
    },
  }),

  readTraefikConfig: query({
    summary: 'The proxy\'s static configuration (traefik.yml) as YAML text; "" when there is none',
    access: "admin",
    editions: SELF_HOSTED,
    input: optionalServerId,
    output: z.string(),
    handler: async ({ services, caller, input }) => {
      const serverId = await targetServer(services, caller, input?.serverId);
      const file = await callAgent(
        serverId,
        () => services.agents.client.readProxyFile(serverId, "static", ""),
        services.logger,
      );
      return file.exists ? file.content : "";
    },
  }),

  updateTraefikConfig: mutation({
    summary: "Replace the static configuration (checked against Traefik's schema) and restart the proxy",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({
      traefikConfig: z.string().max(256 * 1024),
      serverId: z.string().min(1).max(64).nullish(),
    }),
    output: successSchema,
    handler: async ({ services, caller, input }) => {
      const serverId = await targetServer(services, caller, input.serverId);
      const parsed = parseStaticConfig(input.traefikConfig);
      if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
      await callAgent(
        serverId,
        () => services.agents.client.writeProxyFile(serverId, "static", "", input.traefikConfig),
        services.logger,
      );
      await reloadProxy(services, serverId);
      return success;
    },
  }),
});
