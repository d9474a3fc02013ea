/**
 * settings (spec 4.9), the web server and proxy part: administrators only, self-hosted edition
 * only. The settings are one row for the whole instance and, with this machine and its proxy,
 * belong to the instance administrator (organizations/instance.ts); the proxy procedures act on
 * this machine's proxy unless a serverId of the caller's organization is given, whose own
 * administrators may act on it.
 */
import { AGENT_VERSION } from "@platform/agent-protocol";
import { DASHBOARD_PORT, hostSchema, isWildcardHost, parseStaticConfig } from "@platform/traefik-config";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { databaseIsUp } from "../db/database.ts";
import { diskUsageItemSchema, getDiskUsage } from "../docker-objects/index.ts";
import { ApiError, badRequest, forbidden } from "../errors.ts";
import { checkGpuStatus, gpuSetupSchema, gpuStatusSchema, setupGpuSupport } from "../gpu/gpu-support.ts";
import { buildsConcurrencySchema, setBuildsConcurrency } from "../maintenance/builds-concurrency.ts";
import { setDockerCleanup } from "../maintenance/cleanup-schedule.ts";
import { reloadControlPlane, updateControlPlane } from "../maintenance/control-plane-service.ts";
import { CLEANUP_KINDS, cleanServer, cleanupReportSchema } from "../maintenance/docker-cleanup.ts";
import {
  additionalProxyPorts,
  infrastructureHealth,
  proxyDashboardPublished,
  proxyEnvironment,
  saveServerIp,
} from "../maintenance/instance-info.ts";
import { cleanDeploymentQueue, releaseTag, updateData } from "../maintenance/instance-settings.ts";
import {
  clearInstanceSshPrivateKey,
  redactedSshPrivateKey,
  saveInstanceSshPrivateKey,
} from "../maintenance/instance-ssh-key.ts";
import { logCleanupCronSchema } from "../maintenance/log-cleanup.ts";
import { createLocalPlatformNetwork, platformNetworkSchema } from "../maintenance/platform-network.ts";
import {
  readStatsLogs,
  readStatsLogsInput,
  requestLoggingState,
  setRequestLogging,
  statsLogsSchema,
} from "../maintenance/request-log.ts";
import { loadMonitoringConfig, metricsConfigSchema } from "../monitoring/monitoring-config.ts";
import { cleanMonitoring, monitoringCleanedSchema } from "../monitoring/server-health.ts";
import { openApiDocumentOf } from "../openapi.ts";
import { isInstanceAdmin, isInstanceOrganization } from "../organizations/instance.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { assignControlPlaneDomain } from "../proxy/control-plane-route.ts";
import { parseProxyEnv, setProxyEnv, setProxyPorts } from "../proxy/proxy-extras.ts";
import { setProxyDashboard } from "../proxy/proxy-service.ts";
import { loadWebServerSettings } from "../proxy/static-config.ts";
import { invalidTraefikConfig } from "../proxy/sync.ts";
import {
  dynamicFileName,
  MIDDLEWARES_FILE_NAME,
  proxyFileTree,
  readLocalPlatformFile,
  readProxyDynamicFile,
  WEB_SERVER_FILE_NAME,
  writeLocalPlatformFile,
  writeProxyDynamicFile,
} from "../proxy/traefik-files.ts";
import { organizationHasServersOrProjects } from "../servers/listing.ts";
import { setRemoteServersOnly } from "../servers/placement.ts";
import { agentServerId } from "../servers/repository.ts";
import { keyTextSchema } from "../servers/schemas.ts";

const SELF_HOSTED = ["self-hosted"] as const;

const optionalServerId = z.object({ serverId: z.string().min(1).max(64).nullish() }).optional();

/** Instance-wide settings and this machine are the instance administrator's alone. */
async function requireInstanceAdmin(ctx: ServiceContext, caller: Caller): Promise<void> {
  if (!(await isInstanceAdmin(ctx.db, caller))) {
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
async function targetServer(ctx: ServiceContext, caller: Caller, serverId?: string | null) {
  // This machine's proxy is an instance setting: say so (403) before agentServerId's 400.
  if (!serverId || serverId === LOCAL_SERVER_ID) await requireInstanceAdmin(ctx, caller);
  return agentServerId(ctx, caller.organizationId, serverId);
}

async function reloadProxy(ctx: ServiceContext, serverId: string) {
  return callAgent(serverId, () => ctx.agents.client.reloadProxy(serverId), ctx.logger);
}

const webServerSettingsSchema = z.object({
  host: z.string().nullable(),
  letsEncryptEmail: z.string().nullable(),
  certificateType: z.enum(["letsencrypt", "custom", "none"]),
  https: z.boolean(),
  serverIp: z.string().nullable(),
  sshPrivateKey: z.string().nullable(),
  enableDockerCleanup: z.boolean(),
  metricsConfig: metricsConfigSchema.nullable(),
  enableDashboard: z.boolean(),
  traefikImage: z.string(),
  wildcardDomain: z.string(),
  remoteServersOnly: z.boolean(),
  buildsConcurrency: z.number().int().nullable(),
  logCleanupCron: z.string().nullable(),
});

async function webServerSettingsView(ctx: ServiceContext, caller: Caller) {
  const settings = await loadWebServerSettings(ctx.db);
  return {
    host: settings.host,
    letsEncryptEmail: settings.letsEncryptEmail,
    certificateType: settings.certificateType,
    https: settings.https,
    serverIp: settings.serverIp,
    sshPrivateKey: redactedSshPrivateKey(settings),
    enableDockerCleanup: settings.enableDockerCleanup,
    metricsConfig: await loadMonitoringConfig(ctx, caller.organizationId, LOCAL_SERVER_ID),
    enableDashboard: settings.dashboardEnabled,
    traefikImage: settings.traefikImage,
    wildcardDomain: settings.wildcardDomain,
    remoteServersOnly: settings.remoteServersOnly,
    buildsConcurrency: settings.buildsConcurrency,
    logCleanupCron: settings.logCleanupCron,
  };
}

const componentHealthSchema = z.object({
  status: z.enum(["healthy", "unhealthy"]),
  message: z.string().optional(),
});

/** One of settings.clean*: prunes `serverId` (default this machine), see maintenance/docker-cleanup.ts. */
function cleanupProcedure(name: keyof typeof CLEANUP_KINDS, summary: string) {
  return mutation({
    summary: `${summary} on the server (this machine, or serverId's); answers what was reclaimed`,
    access: "admin",
    editions: SELF_HOSTED,
    input: optionalServerId,
    output: cleanupReportSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return cleanServer(ctx, caller.organizationId, serverId, CLEANUP_KINDS[name]);
    },
  });
}

const treeFileSchema = z.object({ id: z.string(), name: z.string(), type: z.enum(["file", "directory"]) });
/** Dokploy's TreeDataItem: the dynamic directory and its files (one level, no sub-directories). */
const treeItemSchema = treeFileSchema.extend({ children: z.array(treeFileSchema).optional() });
const traefikPathSchema = z.string().min(1).max(512);
const dynamicConfigSchema = z
  .string()
  .min(1)
  .max(256 * 1024);

/** settings.read…TraefikConfig of a platform file of this machine's proxy (instance administrator). */
function localPlatformFileRead(fileName: string, what: string) {
  return query({
    summary: `${what} (dynamic/${fileName}) of this machine's proxy as YAML text; "" when there is none`,
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: z.string(),
    handler: async ({ ctx, caller }) => {
      await requireInstanceAdmin(ctx, caller);
      return readLocalPlatformFile(ctx, fileName);
    },
  });
}

function localPlatformFileWrite(fileName: string, what: string) {
  return mutation({
    summary: `Replace ${what} (dynamic/${fileName}) of this machine's proxy, checked against Traefik's schema`,
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ traefikConfig: dynamicConfigSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireInstanceAdmin(ctx, caller);
      await writeLocalPlatformFile(ctx, fileName, input.traefikConfig);
      return success;
    },
  });
}

export const settingsRouter = defineRouter("settings", {
  getWebServerSettings: query({
    summary: "The web server settings; the SSH private key is shown redacted",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: webServerSettingsSchema,
    handler: async ({ ctx, caller }) => {
      await requireInstanceAdmin(ctx, caller);
      return webServerSettingsView(ctx, caller);
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
    handler: async ({ ctx, caller, input }) => {
      await requireInstanceAdmin(ctx, caller);
      await assignControlPlaneDomain(ctx, input);
      return success;
    },
  }),

  reloadTraefik: mutation({
    summary: "Restart the proxy (this machine's, or serverId's)",
    access: "admin",
    editions: SELF_HOSTED,
    input: optionalServerId,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      const reloaded = await reloadProxy(ctx, serverId);
      if (!reloaded.found)
        throw new ApiError("NOT_FOUND", `The proxy is not installed on server ${serverId}`, { serverId });
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
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      await setProxyDashboard(ctx, caller.organizationId, serverId, input.enableDashboard);
      return success;
    },
  }),

  readTraefikConfig: query({
    summary: 'The proxy\'s static configuration (traefik.yml) as YAML text; "" when there is none',
    access: "admin",
    editions: SELF_HOSTED,
    input: optionalServerId,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      const file = await callAgent(
        serverId,
        () => ctx.agents.client.readProxyFile(serverId, "static", ""),
        ctx.logger,
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
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      const parsed = parseStaticConfig(input.traefikConfig);
      if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
      await callAgent(
        serverId,
        () => ctx.agents.client.writeProxyFile(serverId, "static", "", input.traefikConfig),
        ctx.logger,
      );
      await reloadProxy(ctx, serverId);
      return success;
    },
  }),

  readDirectories: query({
    summary:
      "The proxy's dynamic directory (this machine's, or serverId's) as a tree of the files you may read",
    access: "admin",
    editions: SELF_HOSTED,
    input: optionalServerId,
    output: z.array(treeItemSchema),
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return proxyFileTree(ctx, caller, serverId);
    },
  }),

  readTraefikFile: query({
    summary:
      "One dynamic file of the proxy as YAML text; null when there is none (or it is another organization's)",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ path: traefikPathSchema, serverId: z.string().min(1).max(64).nullish() }),
    output: z.string().nullable(),
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      return readProxyDynamicFile(ctx, caller, serverId, dynamicFileName(input.path));
    },
  }),

  updateTraefikFile: mutation({
    summary: "Write one dynamic file of the proxy after the checks its holder's files pass; Traefik loads it",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({
      path: traefikPathSchema,
      traefikConfig: dynamicConfigSchema,
      serverId: z.string().min(1).max(64).nullish(),
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      const fileName = dynamicFileName(input.path);
      await writeProxyDynamicFile(ctx, caller, serverId, fileName, input.traefikConfig);
      return success;
    },
  }),

  readMiddlewareTraefikConfig: localPlatformFileRead(MIDDLEWARES_FILE_NAME, "The shared middlewares file"),
  updateMiddlewareTraefikConfig: localPlatformFileWrite(MIDDLEWARES_FILE_NAME, "the shared middlewares file"),
  readWebServerTraefikConfig: localPlatformFileRead(WEB_SERVER_FILE_NAME, "The control plane's route file"),
  updateWebServerTraefikConfig: localPlatformFileWrite(
    WEB_SERVER_FILE_NAME,
    "the control plane's route file",
  ),

  cleanUnusedImages: cleanupProcedure("cleanUnusedImages", "Remove unused images"),
  cleanUnusedVolumes: cleanupProcedure("cleanUnusedVolumes", "Remove unused volumes"),
  cleanStoppedContainers: cleanupProcedure("cleanStoppedContainers", "Remove stopped containers"),
  cleanDockerBuilder: cleanupProcedure("cleanDockerBuilder", "Clear the build cache"),
  cleanAll: cleanupProcedure(
    "cleanAll",
    "Remove stopped containers, unused images and volumes and the build cache (a system prune)",
  ),
  cleanDockerPrune: cleanupProcedure(
    "cleanDockerPrune",
    "Prune the engine (stopped containers, unused images and volumes) and its build cache, as cleanAll",
  ),

  updateDockerCleanup: mutation({
    summary: "Turn the daily Docker cleanup (cleanAll at midnight) of the server on or off",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({
      enableDockerCleanup: z.boolean(),
      serverId: z.string().min(1).max(64).nullish(),
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      await setDockerCleanup(ctx, caller.organizationId, serverId, input.enableDockerCleanup);
      return success;
    },
  }),

  readStatsLogs: mutation({
    summary: "One page of the proxy's request log (this machine's, or serverId's), filtered and newest first",
    access: "admin",
    editions: SELF_HOSTED,
    input: readStatsLogsInput,
    output: statsLogsSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      return readStatsLogs(ctx, serverId, input);
    },
  }),

  toggleRequests: mutation({
    summary: "Turn the proxy's request log (JSON access log in traefik.yml) on or off and restart the proxy",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ enable: z.boolean(), serverId: z.string().min(1).max(64).nullish() }),
    output: z.object({ success: z.literal(true), enabled: z.boolean() }),
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      return setRequestLogging(ctx, serverId, input.enable);
    },
  }),

  haveActivateRequests: query({
    summary: "Whether the proxy logs requests, and to which file (inside the proxy's container)",
    access: "admin",
    input: optionalServerId,
    output: z.object({ enabled: z.boolean(), filePath: z.string().nullable() }),
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return requestLoggingState(ctx, serverId);
    },
  }),

  saveSSHPrivateKey: mutation({
    summary: "Store the instance's SSH private key (sealed at rest, shown redacted)",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ sshPrivateKey: keyTextSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireInstanceAdmin(ctx, caller);
      await saveInstanceSshPrivateKey(ctx, input.sshPrivateKey);
      return success;
    },
  }),

  cleanSSHPrivateKey: mutation({
    summary: "Forget the instance's stored SSH private key",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: successSchema,
    handler: async ({ ctx, caller }) => {
      await requireInstanceAdmin(ctx, caller);
      await clearInstanceSshPrivateKey(ctx);
      return success;
    },
  }),

  cleanAllDeploymentQueue: mutation({
    summary:
      "Drop the waiting deployments: the whole instance's for the instance administrator, else the organization's",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: successSchema,
    handler: async ({ ctx, caller }) => {
      await cleanDeploymentQueue(ctx, caller);
      return success;
    },
  }),

  getDockerDiskUsage: query({
    summary: "What images, containers, volumes and the build cache take on this machine's engine",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: z.array(diskUsageItemSchema),
    handler: async ({ ctx, caller }) => {
      await requireInstanceAdmin(ctx, caller);
      return getDiskUsage(ctx, caller);
    },
  }),

  updateRemoteServersOnly: mutation({
    summary: "Make this machine run no new deployment (every service deploys to a server), or allow it again",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ remoteServersOnly: z.boolean() }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireInstanceAdmin(ctx, caller);
      await setRemoteServersOnly(ctx.db, input.remoteServersOnly);
      return success;
    },
  }),

  updateBuildsConcurrency: mutation({
    summary:
      "How many deployments build on this machine at once (1 to 100); the queue starts the next one when a slot is free",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ buildsConcurrency: buildsConcurrencySchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireInstanceAdmin(ctx, caller);
      await setBuildsConcurrency(ctx, caller.organizationId, LOCAL_SERVER_ID, input.buildsConcurrency);
      return success;
    },
  }),

  getReleaseTag: query({
    summary: "The release tag this control plane runs (PLATFORM_RELEASE_TAG, else its version)",
    access: "member",
    input: noInput,
    output: z.string(),
    handler: ({ ctx }) => releaseTag(ctx),
  }),

  getUpdateData: mutation({
    summary:
      "Whether a newer release is known, from PLATFORM_RELEASE_URL (no update and no version when none is configured)",
    access: "member",
    input: noInput,
    output: z.object({ updateAvailable: z.boolean(), latestVersion: z.string().nullable() }),
    handler: ({ ctx }) => updateData(ctx),
  }),

  getDokployVersion: query({
    summary: "This platform's version (the control plane's and its agents')",
    access: "member",
    input: noInput,
    output: z.string(),
    handler: () => AGENT_VERSION,
  }),

  getIp: query({
    summary:
      'The address this machine is known by (settings.updateServerIp); "" when none is set, and for other organizations than the instance\'s',
    access: "member",
    input: noInput,
    output: z.string(),
    handler: async ({ ctx, caller }) => {
      if (ctx.config.edition === "cloud") return "";
      if (!(await isInstanceOrganization(ctx.db, caller.organizationId))) return "";
      return (await loadWebServerSettings(ctx.db)).serverIp ?? "";
    },
  }),

  updateServerIp: mutation({
    summary:
      'Set the address this machine is known by (domain.validateDomain checks DNS records against it); "" forgets it',
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ serverIp: z.union([z.ipv4(), z.ipv6(), z.literal("")]) }),
    output: webServerSettingsSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireInstanceAdmin(ctx, caller);
      await saveServerIp(ctx, input.serverIp);
      return webServerSettingsView(ctx, caller);
    },
  }),

  health: query({
    summary: 'Whether the control plane and its database answer: {status: "ok"}, or 503',
    access: "public",
    input: noInput,
    output: z.object({ status: z.literal("ok") }),
    handler: async ({ ctx }) => {
      if (!(await databaseIsUp(ctx.db))) {
        throw new ApiError("SERVICE_UNAVAILABLE", "The database does not answer");
      }
      return { status: "ok" as const };
    },
  }),

  checkInfrastructureHealth: query({
    summary: "The health of this machine's database and proxy, each checked (the proxy through its agent)",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: z.object({ postgres: componentHealthSchema, traefik: componentHealthSchema }),
    handler: async ({ ctx, caller }) => {
      await requireInstanceAdmin(ctx, caller);
      return infrastructureHealth(ctx);
    },
  }),

  isCloud: query({
    summary: "Whether this is the cloud edition (false on a self-hosted instance)",
    access: "public",
    input: noInput,
    output: z.boolean(),
    handler: ({ ctx }) => ctx.config.edition === "cloud",
  }),

  getDokployCloudIps: query({
    summary:
      "Addresses to allow into a server's firewall for the control plane: none, agents connect out to it",
    access: "admin",
    input: noInput,
    output: z.array(z.string()),
    handler: () => [],
  }),

  isUserSubscribed: query({
    summary: "Whether the organization has a server or a project yet",
    access: "member",
    input: noInput,
    output: z.boolean(),
    handler: ({ ctx, caller }) => organizationHasServersOrProjects(ctx.db, caller.organizationId),
  }),

  getLogCleanupStatus: query({
    summary:
      "The scheduled cleanup of this machine's proxy access log (settings.updateLogCleanup): its cron, or none; none for other organizations than the instance's",
    access: "member",
    input: noInput,
    output: z.object({ enabled: z.boolean(), cronExpression: z.string().nullable() }),
    handler: async ({ ctx, caller }) => {
      // This machine's cleanup is the instance's: other organizations are told none, as getIp.
      if (ctx.config.edition === "cloud" || !(await isInstanceOrganization(ctx.db, caller.organizationId)))
        return { enabled: false, cronExpression: null };
      const { logCleanupCron } = await loadWebServerSettings(ctx.db);
      return { enabled: logCleanupCron !== null, cronExpression: logCleanupCron };
    },
  }),

  updateLogCleanup: mutation({
    summary:
      "Empty this machine's proxy access log on a cron (5 fields, or 6 with seconds); null stops the cleanup",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ cronExpression: logCleanupCronSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireInstanceAdmin(ctx, caller);
      await ctx.logCleanup.update(input.cronExpression);
      return success;
    },
  }),

  cleanMonitoring: mutation({
    summary:
      "Delete every metrics sample the agent (this machine's, or serverId's) stored; collection goes on",
    access: "admin",
    editions: SELF_HOSTED,
    input: optionalServerId,
    output: monitoringCleanedSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return cleanMonitoring(ctx, serverId);
    },
  }),

  createPlatformNetwork: mutation({
    summary:
      "Create this machine's platform network (overlay, attachable) when it is missing, as the installer does; a deploy on this machine needs it",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: platformNetworkSchema,
    handler: async ({ ctx, caller }) => {
      await requireInstanceAdmin(ctx, caller);
      return createLocalPlatformNetwork(ctx);
    },
  }),

  reloadServer: mutation({
    summary:
      "Restart the control plane: a new task of its Swarm service (docker service update --force); a 400 when it runs otherwise",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: successSchema,
    handler: async ({ ctx, caller }) => {
      await requireInstanceAdmin(ctx, caller);
      await reloadControlPlane(ctx);
      return success;
    },
  }),

  updateServer: mutation({
    summary:
      "Roll the control plane's Swarm service to the newest release (getUpdateData) when it is newer; a 400 says why not",
    access: "admin",
    editions: SELF_HOSTED,
    input: noInput,
    output: successSchema,
    handler: async ({ ctx, caller }) => {
      await requireInstanceAdmin(ctx, caller);
      await updateControlPlane(ctx);
      return success;
    },
  }),

  haveTraefikDashboardPortEnabled: query({
    summary: `Whether the proxy (this machine's, or serverId's) publishes its dashboard (port ${DASHBOARD_PORT}), as Docker runs it`,
    access: "admin",
    input: optionalServerId,
    output: z.boolean(),
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return proxyDashboardPublished(ctx, serverId);
    },
  }),

  getTraefikPorts: query({
    summary:
      "The ports the proxy (this machine's, or serverId's) publishes beside its entry points 80 and 443, as Docker runs it",
    access: "admin",
    input: optionalServerId,
    output: z.array(
      z.object({
        targetPort: z.number().int(),
        publishedPort: z.number().int(),
        protocol: z.enum(["tcp", "udp", "sctp"]),
      }),
    ),
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return additionalProxyPorts(ctx, serverId);
    },
  }),

  readTraefikEnv: query({
    summary:
      "The proxy's environment (this machine's, or serverId's) as KEY=VALUE lines; \"\" when it has none",
    access: "admin",
    input: optionalServerId,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return proxyEnvironment(ctx, serverId);
    },
  }),

  updateTraefikPorts: mutation({
    summary:
      "Publish these ports (host mode) beside the proxy's entry points, replacing the extra ports it had",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({
      serverId: z.string().min(1).max(64).nullish(),
      additionalPorts: z
        .array(
          z.object({
            targetPort: z.number().int().min(1).max(65535),
            publishedPort: z.number().int().min(1).max(65535),
            protocol: z.enum(["tcp", "udp", "sctp"]),
          }),
        )
        .max(64),
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      await setProxyPorts(ctx, serverId, input.additionalPorts);
      return success;
    },
  }),

  writeTraefikEnv: mutation({
    summary: "Replace the proxy's environment with these KEY=VALUE lines (its task restarts with them)",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({
      env: z.string().max(256 * 1024),
      serverId: z.string().min(1).max(64).nullish(),
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input.serverId);
      await setProxyEnv(ctx, serverId, parseProxyEnv(input.env));
      return success;
    },
  }),

  checkGPUStatus: query({
    summary:
      "The NVIDIA GPU support of the server (this machine, or serverId's): driver, CUDA, container runtime and Swarm GPU resource, as its agent finds them",
    access: "admin",
    input: optionalServerId,
    output: gpuStatusSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return checkGpuStatus(ctx, serverId);
    },
  }),

  setupGPU: mutation({
    summary:
      "Make the server's engine run the nvidia runtime by default with its GPUs as Swarm resource (daemon.json); a 409 names a missing driver or runtime; the engine must then be restarted",
    access: "admin",
    input: optionalServerId,
    output: gpuSetupSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await targetServer(ctx, caller, input?.serverId);
      return setupGpuSupport(ctx, serverId);
    },
  }),

  updateEnforceSSO: mutation({
    summary:
      "Whether members must sign in through SSO: only false is accepted, since no SSO provider can be configured and enforcing it would lock every member out",
    access: "admin",
    editions: SELF_HOSTED,
    input: z.object({ enforceSSO: z.boolean() }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireInstanceAdmin(ctx, caller);
      // SSO is never enforced here: false is the state already, nothing to store.
      if (input.enforceSSO) {
        throw badRequest(
          "Invalid input: enforceSSO: cannot be true: this platform has no SSO providers, so enforcing SSO would lock every member out",
          { fields: ["enforceSSO"] },
        );
      }
      return success;
    },
  }),

  getOpenApiDocument: query({
    summary: "The OpenAPI document of this API (the one /api/openapi.json serves)",
    access: "member",
    input: noInput,
    output: z.record(z.string(), z.unknown()),
    handler: ({ ctx }) => {
      const document = openApiDocumentOf(ctx);
      if (!document) throw new ApiError("NOT_FOUND", "This control plane serves no OpenAPI document");
      return document;
    },
  }),
});
