/**
 * server (spec 4.8): the machines deployments run on. A server is registered with an address,
 * SSH user and key (status `inactive`); server.setup installs its agent over SSH, and the
 * server turns `active` once that agent enrolled and validates. validate and security ask the
 * agent; another organization's server is a 404.
 */
import { isIP } from "node:net";
import { AgentProtocolError, type BuilderTool, builderFix } from "@platform/agent-protocol";
import { z } from "zod";
import { markActiveIfValid } from "../agents/activation.ts";
import { callAgent } from "../agents/errors.ts";
import { serverBelongsTo, sshKeyBelongsTo } from "../applications/repository.ts";
import type { ServiceContext } from "../context.ts";
import { ApiError, badRequest, conflict, notFound } from "../errors.ts";
import { buildsConcurrencySchema, setBuildsConcurrency } from "../maintenance/builds-concurrency.ts";
import {
  fetchServerMetrics,
  metricsConfigSchema,
  setupMonitoring,
  shownMonitoringConfig,
} from "../monitoring/monitoring-config.ts";
import {
  defineRouter,
  type HandlerArgs,
  mutation,
  noInput,
  query,
  success,
  successSchema,
} from "../procedure.ts";
import { onlyGrantedServers } from "../projects/permissions.ts";
import { ensureProxyOn } from "../proxy/proxy-service.ts";
import { removeStoredCertificatesOf } from "../proxy/stored-certificates.ts";
import { installScript } from "../servers/agent-artifact.ts";
import {
  countServersOfOwnedOrganizations,
  listServersForPermissions,
  listServersWithSshKey,
  servicesOnServer,
} from "../servers/listing.ts";
import { controlPlanePublicIp } from "../servers/public-ip.ts";
import {
  deleteServer,
  findServer,
  insertServer,
  listServers,
  type ServerPatch,
  toServerViews,
  updateServer,
} from "../servers/repository.ts";
import {
  descriptionSchema,
  idSchema,
  ipAddressSchema,
  nameSchema,
  portSchema,
  securityResultSchema,
  serverDetailSchema,
  serverSchema,
  serverTypeSchema,
  usernameSchema,
  validateResultSchema,
} from "../servers/schemas.ts";
import { countApplicationsBuildingOn, countServicesByServer } from "../servers/service-count.ts";
import { controlPlaneUrlForAgents, refusedAddressReason, runSetupOverSsh } from "../servers/ssh-setup.ts";

/** validate and security answer within this, so a silent agent is an error, not a hang. */
const AGENT_QUERY_TIMEOUT_MS = 15_000;
/** How long server.setup waits for the new agent to answer before it reports. */
const AGENT_WAIT_AFTER_SETUP_MS = 30_000;

const serverIdInput = z.object({ serverId: idSchema });

async function requireServer(ctx: ServiceContext, organizationId: string, serverId: string) {
  const server = await findServer(ctx.db, organizationId, serverId);
  if (!server) throw notFound("Server");
  return server;
}

/** A sshKeyId must name a key of the caller's organization (another's is a 404). */
async function checkSshKey(ctx: ServiceContext, organizationId: string, sshKeyId: string | null | undefined) {
  if (!sshKeyId) return;
  if (!(await sshKeyBelongsTo(ctx.db, organizationId, sshKeyId))) {
    throw new ApiError("NOT_FOUND", "SSH key not found", { fields: ["sshKeyId"] });
  }
}

/** Literal IPs that can never be a server (link-local/metadata, unspecified, multicast). */
function checkAddress(ctx: ServiceContext, ipAddress: string | undefined) {
  if (ipAddress === undefined || !isIP(ipAddress)) return;
  const reason = refusedAddressReason(ipAddress, ctx.config.edition);
  if (reason) throw badRequest(`ipAddress ${reason}`, { fields: ["ipAddress"] });
}

/** Polls until the agent of `serverId` answers a ping, or `timeoutMs` passed. */
async function agentAnswers(ctx: ServiceContext, serverId: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await ctx.agents.client.ping(serverId, 2000);
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  return false;
}

/** Dokploy Cloud lists only active servers here; a self-hosted instance lists inactive ones too. */
function serversWithSshKey(ctx: ServiceContext, organizationId: string, serverType: "deploy" | "build") {
  return listServersWithSshKey(ctx.db, organizationId, serverType, ctx.config.edition === "cloud");
}

/** Servers whose setup runs in this process: a second concurrent setup is refused. */
const runningSetups = new Set<string>();

async function setup(args: HandlerArgs<{ serverId: string }, "admin">) {
  const { serverId } = args.input;
  if (runningSetups.has(serverId)) throw conflict("A setup of this server is already running");
  runningSetups.add(serverId);
  try {
    return await runSetup(args);
  } finally {
    runningSetups.delete(serverId);
  }
}

function requireControlPlaneUrl(ctx: ServiceContext): string {
  const controlPlaneUrl = controlPlaneUrlForAgents(ctx, controlPlanePublicIp(ctx.config));
  if (!controlPlaneUrl) {
    throw new ApiError(
      "CONFLICT",
      "The control plane does not know the URL its agents reach it at: set PLATFORM_URL (or PLATFORM_PUBLIC_IP)",
    );
  }
  return controlPlaneUrl;
}

/** Installs (or updates) the server's proxy; answers the failure's message, or undefined. */
async function installProxy(ctx: ServiceContext, serverId: string): Promise<string | undefined> {
  try {
    await ensureProxyOn(ctx, serverId);
    return undefined;
  } catch (error) {
    ctx.logger.warn({ err: error, serverId }, "the proxy was not installed");
    return error instanceof Error ? error.message : String(error);
  }
}

async function runSetup({ ctx, caller, input, logger }: HandlerArgs<{ serverId: string }, "admin">) {
  const server = await requireServer(ctx, caller.organizationId, input.serverId);
  const controlPlaneUrl = requireControlPlaneUrl(ctx);
  const outcome = await runSetupOverSsh(ctx, server, controlPlaneUrl);
  logger.info({ serverId: server.serverId, installed: outcome.installed }, "server setup ran");
  if (!outcome.installed) {
    return { serverId: server.serverId, serverStatus: server.serverStatus, message: outcome.failure };
  }
  if (!(await agentAnswers(ctx, server.serverId, AGENT_WAIT_AFTER_SETUP_MS))) {
    return {
      serverId: server.serverId,
      serverStatus: server.serverStatus,
      message: "The agent is installed but does not answer yet; the server turns active once it connects",
    };
  }
  const activation = await markActiveIfValid(ctx, server.serverId);
  if (activation.serverStatus !== "active") {
    const message = `The agent is connected, but the server lacks ${activation.missing.join(", ")}`;
    return { serverId: server.serverId, serverStatus: activation.serverStatus, message };
  }
  const proxyFailure = await installProxy(ctx, server.serverId);
  const message = proxyFailure
    ? `The agent is connected and validation passed, but the proxy was not installed: ${proxyFailure}`
    : "Server is set up: its agent is connected, validation passed and the proxy is installed";
  return { serverId: server.serverId, serverStatus: activation.serverStatus, message };
}

export const serverRouter = defineRouter("server", {
  create: mutation({
    summary: "Register a server (inactive until server.setup installs its agent)",
    access: "admin",
    input: z.object({
      name: nameSchema,
      description: descriptionSchema,
      ipAddress: ipAddressSchema,
      port: portSchema.default(22),
      username: usernameSchema,
      sshKeyId: idSchema.nullish(),
      serverType: serverTypeSchema.default("deploy"),
    }),
    output: serverSchema,
    handler: async ({ ctx, caller, input }) => {
      checkAddress(ctx, input.ipAddress);
      await checkSshKey(ctx, caller.organizationId, input.sshKeyId);
      const server = await insertServer(ctx.db, {
        organizationId: caller.organizationId,
        name: input.name,
        description: input.description ?? null,
        ipAddress: input.ipAddress,
        port: input.port,
        username: input.username,
        sshKeyId: input.sshKeyId ?? null,
        serverType: input.serverType,
      });
      const [view] = await toServerViews(ctx, [server]);
      return view!;
    },
  }),

  one: query({
    summary:
      "A server with its connection state, the output of its last setup and its monitoring (the token for administrators only)",
    access: "member",
    input: serverIdInput,
    output: serverDetailSchema,
    handler: async ({ ctx, caller, input }) => {
      const server = await requireServer(ctx, caller.organizationId, input.serverId);
      const [view] = await toServerViews(ctx, [server]);
      const metricsConfig = await shownMonitoringConfig(ctx, caller, server.serverId);
      return { ...view!, setupLog: server.setupLog, metricsConfig };
    },
  }),

  all: query({
    summary: "Every server of the organization with totalSum (services on it), newest first",
    access: "member",
    input: noInput,
    output: z.array(serverSchema),
    handler: async ({ ctx, caller }) =>
      toServerViews(
        ctx,
        await onlyGrantedServers(ctx.db, caller, await listServers(ctx.db, caller.organizationId)),
      ),
  }),

  update: mutation({
    summary: "Change a server's name, address, port, SSH user or key, or type",
    access: "admin",
    input: z.object({
      serverId: idSchema,
      name: nameSchema.optional(),
      description: descriptionSchema,
      ipAddress: ipAddressSchema.optional(),
      port: portSchema.optional(),
      username: usernameSchema.optional(),
      sshKeyId: idSchema.nullish(),
      serverType: serverTypeSchema.optional(),
    }),
    output: serverSchema,
    handler: async ({ ctx, caller, input }) => {
      checkAddress(ctx, input.ipAddress);
      await checkSshKey(ctx, caller.organizationId, input.sshKeyId);
      if (input.serverType !== undefined && input.serverType !== "build") {
        const building = await countApplicationsBuildingOn(ctx.db, input.serverId);
        if (building > 0 && (await serverBelongsTo(ctx.db, caller.organizationId, input.serverId))) {
          throw badRequest(
            `serverType: the server is the build server of ${building} application${building === 1 ? "" : "s"}; clear their buildServerId first`,
            { fields: ["serverType"] },
          );
        }
      }
      const patch: ServerPatch = {};
      for (const field of ["name", "ipAddress", "port", "username", "serverType"] as const) {
        if (input[field] !== undefined) (patch as Record<string, unknown>)[field] = input[field];
      }
      if (input.description !== undefined) patch.description = input.description;
      if (input.sshKeyId !== undefined) patch.sshKeyId = input.sshKeyId;
      const server = await updateServer(ctx.db, caller.organizationId, input.serverId, patch);
      if (!server) throw notFound("Server");
      const [view] = await toServerViews(ctx, [server]);
      return view!;
    },
  }),

  updateBuildsConcurrency: mutation({
    summary: "How many deployments build on the server at once (1 to 100); answers the server",
    access: "admin",
    input: z.object({ serverId: idSchema, buildsConcurrency: buildsConcurrencySchema }),
    output: serverSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireServer(ctx, caller.organizationId, input.serverId);
      await setBuildsConcurrency(ctx, caller.organizationId, input.serverId, input.buildsConcurrency);
      const server = await requireServer(ctx, caller.organizationId, input.serverId);
      const [view] = await toServerViews(ctx, [server]);
      return view!;
    },
  }),

  remove: mutation({
    summary: "Delete a server; refused while services are placed on it",
    access: "admin",
    input: serverIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const server = await requireServer(ctx, caller.organizationId, input.serverId);
      const totalSum = (await countServicesByServer(ctx.db, [server.serverId])).get(server.serverId) ?? 0;
      if (totalSum > 0) {
        throw conflict(
          `Server has ${totalSum} service${totalSum === 1 ? "" : "s"} on it; delete or move them first`,
          { totalSum },
        );
      }
      const building = await countApplicationsBuildingOn(ctx.db, server.serverId);
      if (building > 0) {
        throw conflict(
          `Server is the build server of ${building} application${building === 1 ? "" : "s"}; clear their buildServerId first`,
          { buildingApplications: building },
        );
      }
      await removeStoredCertificatesOf(ctx, server.serverId);
      await deleteServer(ctx.db, caller.organizationId, server.serverId);
      return success;
    },
  }),

  publicIp: query({
    summary: "The control plane machine's public IP (empty on the cloud edition)",
    access: "member",
    input: noInput,
    output: z.object({ publicIp: z.string() }),
    handler: ({ ctx }) => ({ publicIp: controlPlanePublicIp(ctx.config) }),
  }),

  validate: query({
    summary: "What the server's agent finds installed (Docker, Swarm, network, build tools)",
    access: "member",
    input: serverIdInput,
    output: validateResultSchema,
    handler: async ({ ctx, caller, input, logger }) => {
      const server = await requireServer(ctx, caller.organizationId, input.serverId);
      const result = await callAgent(
        server.serverId,
        () => ctx.agents.client.validateServer(server.serverId, AGENT_QUERY_TIMEOUT_MS),
        logger,
      );
      // A tool the agent's answer leaves out (a message field is optional on the wire) is missing.
      const tool = (status: { enabled: boolean; version?: string } = { enabled: false }) => ({
        enabled: status.enabled,
        version: status.version ?? null,
      });
      const builder = (
        status: { enabled: boolean; version?: string } | undefined,
        executable: BuilderTool,
      ) => ({
        ...tool(status),
        fix: status?.enabled ? null : builderFix(executable),
      });
      return {
        ...result,
        docker: tool(result.docker),
        rclone: tool(result.rclone),
        nixpacks: builder(result.nixpacks, "nixpacks"),
        buildpacks: builder(result.buildpacks, "pack"),
        railpack: builder(result.railpack, "railpack"),
        buildx: tool(result.buildx),
        compose: tool(result.compose),
      };
    },
  }),

  security: query({
    summary: "The server's security audit (ufw, ssh, sudo user, unattended upgrades, fail2ban)",
    access: "member",
    input: serverIdInput,
    output: securityResultSchema,
    handler: async ({ ctx, caller, input, logger }) => {
      const server = await requireServer(ctx, caller.organizationId, input.serverId);
      return callAgent(
        server.serverId,
        async () => {
          const audit = await ctx.agents.client.securityAudit(server.serverId, AGENT_QUERY_TIMEOUT_MS);
          const { ufw, ssh, nonRootUser, unattendedUpgrades, fail2ban } = audit;
          if (!ufw || !ssh || !nonRootUser || !unattendedUpgrades || !fail2ban) {
            throw new AgentProtocolError("the agent's security audit is missing a group");
          }
          return { ufw, ssh, nonRootUser, unattendedUpgrades, fail2ban };
        },
        logger,
      );
    },
  }),

  enrollmentCommand: mutation({
    summary: "A one-time enrollment token and the command that installs the agent by hand on the server",
    access: "admin",
    input: serverIdInput,
    output: z.object({ token: z.string(), expiresAt: z.string(), command: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const server = await requireServer(ctx, caller.organizationId, input.serverId);
      const controlPlaneUrl = requireControlPlaneUrl(ctx);
      const { token, expiresAt } = await ctx.agents.createEnrollmentToken(server.serverId);
      const command =
        `curl -fsSL ${controlPlaneUrl}/agent/install.sh | sudo sh -s -- ` +
        `--control-plane-url ${controlPlaneUrl} --enrollment-token ${token}`;
      return { token, expiresAt, command };
    },
  }),

  setup: mutation({
    summary: "Install the agent over SSH; the server turns active once its agent enrolls and validates",
    access: "admin",
    input: serverIdInput,
    output: z.object({
      serverId: z.string(),
      serverStatus: z.enum(["inactive", "active"]),
      message: z.string(),
    }),
    handler: setup,
  }),

  setupMonitoring: mutation({
    summary: "Collect and serve the server's metrics with `metricsConfig` (applied live by its agent)",
    access: "admin",
    input: z.object({ serverId: idSchema, metricsConfig: metricsConfigSchema }),
    output: z.object({ success: z.boolean(), message: z.string() }),
    handler: async ({ ctx, caller, input, logger }) => {
      const server = await requireServer(ctx, caller.organizationId, input.serverId);
      const { port } = await setupMonitoring(
        ctx,
        caller.organizationId,
        server.serverId,
        input.metricsConfig,
        logger,
      );
      return { success: true, message: `Monitoring runs; metrics are served on port ${port}` };
    },
  }),

  getServerMetrics: query({
    summary:
      "The metrics a server's agent serves at `url` (…/metrics, or …/metrics/containers?appName=…), read with the Bearer `token` (without it, the stored token of the caller's server at that address and port)",
    access: "member",
    input: z.object({
      url: z.url({ protocol: /^https?$/ }).max(2048),
      token: z.string().min(1).max(512).optional(),
      dataPoints: z.string().regex(/^(all|[1-9]\d{0,5})$/, 'must be a number from 1 or "all"'),
    }),
    output: z.array(z.record(z.string(), z.unknown())),
    handler: ({ ctx, caller, input }) =>
      fetchServerMetrics(ctx, caller, input) as Promise<Record<string, unknown>[]>,
  }),

  count: query({
    summary: "How many servers the organizations the caller owns have together (0 when they own none)",
    access: "member",
    input: noInput,
    output: z.number().int(),
    handler: ({ ctx, caller }) => countServersOfOwnedOrganizations(ctx.db, caller.userId),
  }),

  withSSHKey: query({
    summary:
      "The organization's deploy servers that have an SSH key, newest first (active ones only on the cloud edition)",
    access: "member",
    input: noInput,
    output: z.array(serverSchema),
    handler: async ({ ctx, caller }) =>
      toServerViews(
        ctx,
        await onlyGrantedServers(
          ctx.db,
          caller,
          await serversWithSshKey(ctx, caller.organizationId, "deploy"),
        ),
      ),
  }),

  buildServers: query({
    summary:
      "The organization's build servers that have an SSH key, newest first (active ones only on the cloud edition)",
    access: "member",
    input: noInput,
    output: z.array(serverSchema),
    handler: async ({ ctx, caller }) =>
      toServerViews(
        ctx,
        await onlyGrantedServers(
          ctx.db,
          caller,
          await serversWithSshKey(ctx, caller.organizationId, "build"),
        ),
      ),
  }),

  allForPermissions: query({
    summary: "Every server of the organization with its id, name, address and type (to grant access with)",
    access: "admin",
    input: noInput,
    output: z.array(
      z.object({
        serverId: z.string(),
        name: z.string(),
        ipAddress: z.string(),
        serverType: serverTypeSchema,
      }),
    ),
    handler: ({ ctx, caller }) => listServersForPermissions(ctx.db, caller.organizationId),
  }),

  getServerTime: query({
    summary: "The control plane's current time and time zone (scheduled jobs and cleanups run on its clock)",
    access: "member",
    input: noInput,
    output: z.object({ time: z.string(), timezone: z.string() }),
    handler: ({ ctx }) => ({
      time: ctx.now().toISOString(),
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    }),
  }),

  getDefaultCommand: query({
    summary:
      "The script server.setup runs on the server (deploy/agent/install.sh): it installs Docker, Swarm and the agent",
    access: "member",
    input: serverIdInput,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      await requireServer(ctx, caller.organizationId, input.serverId);
      return installScript();
    },
  }),

  getServices: query({
    summary:
      "The services (applications, databases, compose stacks) placed on the server, with their project and environment",
    access: "member",
    input: serverIdInput,
    output: z.array(
      z.object({
        id: z.string(),
        type: z.enum(["application", "postgres", "mysql", "mariadb", "mongo", "redis", "libsql", "compose"]),
        name: z.string(),
        projectId: z.string(),
        projectName: z.string(),
        environmentId: z.string(),
        environmentName: z.string(),
        url: z.string(),
      }),
    ),
    handler: async ({ ctx, caller, input }) => {
      const server = await requireServer(ctx, caller.organizationId, input.serverId);
      return servicesOnServer(ctx.db, caller, server.serverId);
    },
  }),
});
