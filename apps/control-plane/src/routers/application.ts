/**
 * application (spec 4.1): the application row, its deployments (deploy and redeploy queue a
 * job and answer at once; see deployments/), its service (start/stop/reload through the agent)
 * and its Traefik file. Procedures not listed here are not registered until they do their
 * work. An application of another organization is a 404.
 */
import { applicationOwner } from "@platform/ownership";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { checkBuildSettings } from "../applications/build-settings.ts";
import { applicationOneSchema } from "../applications/detail-cache.ts";
import { checkGitSource, requireOwnProvider } from "../applications/git-source-checks.ts";
import { checkRenamable } from "../applications/rename.ts";
import {
  APP_NAME_CONSTRAINT,
  type Application,
  type ApplicationUpdate,
  deleteApplication,
  findApplication,
  findApplicationByAppName,
  generateAppName,
  insertApplication,
  type LocatedApplication,
  newRefreshToken,
  searchApplications,
  serverBelongsTo,
  updateApplication,
} from "../applications/repository.ts";
import {
  reloadApplicationService,
  startApplicationService,
  stopApplicationService,
} from "../applications/runtime.ts";
import {
  applicationIdInput,
  applicationSchema,
  applicationSummarySchema,
  createInput,
  deletedSchema,
  moveInput,
  saveBitbucketProviderInput,
  saveBuildTypeInput,
  saveDockerProviderInput,
  saveEnvironmentInput,
  saveGiteaProviderInput,
  saveGithubProviderInput,
  saveGitlabProviderInput,
  saveGitProviderInput,
  searchInput,
  updateInput,
} from "../applications/schemas.ts";
import { startApplicationDeployment } from "../applications/start-deployment.ts";
import { teardownApplication } from "../applications/teardown.ts";
import { appNameSchema, plainTextSchema, swarmJsonColumns } from "../applications/validation.ts";
import {
  type ApplicationSecretField,
  sealApplicationSecret,
  toApplicationView,
} from "../applications/views.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { databaseAppNameTaken } from "../databases/repository.ts";
import type { Db } from "../db/database.ts";
import type { ApplicationStatus } from "../db/schema.ts";
import { deleteFinishedDeployments } from "../deployments/repository.ts";
import { serverOf } from "../deployments/runtime.ts";
import type { DeploymentKind } from "../deployments/start.ts";
import {
  cancelServiceDeployment,
  dropWaitingDeployments,
  stopRunningDeployment,
} from "../deployments/stop.ts";
import { addGeneratedApplicationDomain } from "../domains/service.ts";
import { checkUserTraefikConfig } from "../domains/user-traefik-config.ts";
import { badRequest, conflict, notFound } from "../errors.ts";
import {
  appMonitoringSchema,
  readAppContainerStats,
  summarizeAppMonitoring,
} from "../monitoring/app-monitoring.ts";
import { readRuntimeLogs, runtimeLogInput, runtimeLogsSchema } from "../monitoring/runtime-logs.ts";
import { checkNetworkIds } from "../networks/index.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import {
  grantCreated,
  grantsOf,
  requireCanCreateServices,
  requireCanDeleteServices,
  requireEnvironmentAccess,
  requireFeature,
  requireServiceAccess,
} from "../projects/permissions.ts";
import { findEnvironment, isUniqueViolation } from "../projects/repository.ts";
import { readApplicationTraefikConfig, updateApplicationTraefikConfig } from "../proxy/application-config.ts";
import { moveApplicationProxy } from "../proxy/sync.ts";
import { checkRegistryReferences } from "../registries/repository.ts";
import { checkSwarmInput, type SwarmInput } from "../servers/swarm-input.ts";

const JSON_COLUMNS = new Set(["watchPaths", "args", "previewLabels", ...swarmJsonColumns]);

/** Write-only inputs and the sealed columns that keep them. */
const SEALED_COLUMNS = {
  password: "passwordSealed",
  buildSecrets: "buildSecretsSealed",
  previewBuildSecrets: "previewBuildSecretsSealed",
  webhookSecret: "webhookSecretSealed",
} as const satisfies Record<ApplicationSecretField, keyof ApplicationUpdate>;

/** Seals the write-only fields `input` gives (null or "" clears) into `patch`. */
function sealSecrets(
  ctx: ServiceContext,
  application: LocatedApplication,
  input: Partial<Record<ApplicationSecretField, string | null | undefined>>,
  patch: ApplicationUpdate,
): ApplicationUpdate {
  for (const [field, column] of Object.entries(SEALED_COLUMNS) as [ApplicationSecretField, string][]) {
    const value = input[field];
    if (value === undefined) continue;
    (patch as Record<string, unknown>)[column] = sealApplicationSecret(
      ctx.secrets,
      field,
      application,
      value,
    );
  }
  return patch;
}

/** The columns an input sets: absent fields are left alone, null clears, lists are stored as JSON. */
function columnsOf(input: Record<string, unknown>): ApplicationUpdate {
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || key === "applicationId") continue;
    const column = key === "customGitSSHKeyId" ? "customGitSshKeyId" : key;
    patch[column] = JSON_COLUMNS.has(key) && value !== null ? JSON.stringify(value) : value;
  }
  return patch as ApplicationUpdate;
}

/** The application, when it belongs to the caller's organization and the caller may see it (404 otherwise). */
async function load(db: Db, caller: Caller, applicationId: string): Promise<LocatedApplication> {
  const application = await findApplication(db, caller.organizationId, applicationId);
  if (!application) throw notFound("Application");
  await requireServiceAccess(db, caller, serviceOf(application));
  return application;
}

const serviceOf = (application: { applicationId: string; environmentId: string; projectId: string }) => ({
  serviceId: application.applicationId,
  environmentId: application.environmentId,
  projectId: application.projectId,
});

/** Another environment of the organization the caller may see, for moving an application there. */
async function targetEnvironment(ctx: ServiceContext, caller: Caller, environmentId: string) {
  const target = await findEnvironment(ctx.db, caller.organizationId, environmentId);
  if (!target) throw notFound("Environment");
  await requireEnvironmentAccess(ctx.db, caller, target);
  return target;
}

/** Runs a write that may set appName; a taken appName (by any service) is a 409 naming the field. */
async function withUniqueAppName<T>(
  db: Db,
  appName: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  if (appName !== undefined && (await databaseAppNameTaken(db, appName))) {
    throw conflict(`The appName "${appName}" is already in use`, { fields: ["appName"] });
  }
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, APP_NAME_CONSTRAINT)) {
      throw conflict(`The appName "${appName}" is already in use`, { fields: ["appName"] });
    }
    throw error;
  }
}

/** Loads the application, applies `patch` and answers `{success: true}`. */
async function patchApplication(
  ctx: ServiceContext,
  caller: Caller,
  applicationId: string,
  patch: (application: LocatedApplication) => ApplicationUpdate | Promise<ApplicationUpdate>,
) {
  const application = await load(ctx.db, caller, applicationId);
  await updateApplication(ctx.db, application.applicationId, await patch(application));
  return success;
}

/** What application.start and application.stop answer (spec 4.1). */
const serviceStatusSchema = z.object({
  applicationId: z.string(),
  name: z.string(),
  appName: z.string(),
  applicationStatus: z.enum(["idle", "running", "done", "error"]),
});

/** Sets the status after a start/stop and answers it. */
async function serviceStatus(ctx: ServiceContext, application: Application, status: ApplicationStatus) {
  await updateApplication(ctx.db, application.applicationId, { applicationStatus: status });
  const { applicationId, name, appName } = application;
  return { applicationId, name, appName, applicationStatus: status };
}

/** Git fields back to their defaults (disconnectGitProvider). */
const DISCONNECTED_GIT: ApplicationUpdate = {
  sourceType: "github",
  githubId: null,
  repository: null,
  owner: null,
  branch: null,
  buildPath: "/",
  triggerType: "push",
  watchPaths: null,
  enableSubmodules: false,
  gitlabId: null,
  gitlabProjectId: null,
  gitlabRepository: null,
  gitlabOwner: null,
  gitlabBranch: null,
  gitlabBuildPath: "/",
  gitlabPathNamespace: null,
  bitbucketId: null,
  bitbucketRepository: null,
  bitbucketRepositorySlug: null,
  bitbucketOwner: null,
  bitbucketBranch: null,
  bitbucketBuildPath: "/",
  giteaId: null,
  giteaRepository: null,
  giteaOwner: null,
  giteaBranch: null,
  giteaBuildPath: "/",
  customGitUrl: null,
  customGitBranch: null,
  customGitBuildPath: null,
  customGitSshKeyId: null,
};

const deployInput = z.object({
  applicationId: z.string().min(1).max(100),
  title: plainTextSchema(200).optional(),
  description: plainTextSchema(1000).optional(),
});
const deployStartedSchema = z.object({ success: z.literal(true), deploymentId: z.string() });

async function queueDeployment(
  ctx: ServiceContext,
  caller: Caller,
  kind: DeploymentKind,
  input: z.infer<typeof deployInput>,
) {
  const application = await load(ctx.db, caller, input.applicationId);
  const { deploymentId } = await startApplicationDeployment(ctx, {
    applicationId: application.applicationId,
    kind,
    title: input.title,
    description: input.description,
  });
  return { success: true as const, deploymentId };
}

/** The quickstart's image when PLATFORM_QUICKSTART_IMAGE names none, and the port it serves on. */
const QUICKSTART_IMAGE = "nginx:alpine";
const QUICKSTART_PORT = 80;

/** An application created for the caller in an environment they may create services in, with `columns` set too. */
async function createApplication(
  ctx: ServiceContext,
  caller: Caller,
  input: z.infer<typeof createInput>,
  columns: { dockerImage?: string } = {},
) {
  const environment = await findEnvironment(ctx.db, caller.organizationId, input.environmentId);
  if (!environment) throw notFound("Environment");
  requireCanCreateServices(await requireEnvironmentAccess(ctx.db, caller, environment));
  const serverId = input.serverId ?? null;
  if (serverId === null && ctx.config.edition === "cloud") {
    throw badRequest("serverId is required on the cloud edition", { fields: ["serverId"] });
  }
  if (serverId !== null && !(await serverBelongsTo(ctx.db, caller.organizationId, serverId))) {
    throw notFound("Server");
  }
  const appName = input.appName ?? generateAppName(input.name);
  const application = await withUniqueAppName(ctx.db, appName, () =>
    insertApplication(ctx.db, {
      name: input.name,
      appName,
      description: input.description ?? null,
      environmentId: environment.environmentId,
      serverId,
      ...(input.sourceType ? { sourceType: input.sourceType } : {}),
      ...columns,
    }),
  );
  await grantCreated(ctx.db, caller, "services", application.applicationId);
  return application;
}

export const applicationRouter = defineRouter("application", {
  create: mutation({
    summary: "Create an application in an environment (status idle)",
    access: "member",
    input: createInput,
    output: applicationSchema,
    handler: async ({ ctx, caller, input }) => toApplicationView(await createApplication(ctx, caller, input)),
  }),

  deployNginxQuickstart: mutation({
    summary:
      "Create a Hello World application from the quickstart image, route a generated domain to it and queue its deployment",
    access: "member",
    input: z.object({ environmentId: createInput.shape.environmentId, serverId: createInput.shape.serverId }),
    output: z.object({
      applicationId: z.string(),
      appName: z.string(),
      domainId: z.string(),
      domainUrl: z.string(),
      deploymentId: z.string(),
    }),
    handler: async ({ ctx, caller, input }) => {
      const application = await createApplication(
        ctx,
        caller,
        {
          name: "Hello World",
          appName: generateAppName("hello-world"),
          environmentId: input.environmentId,
          serverId: input.serverId,
          sourceType: "docker",
        },
        { dockerImage: ctx.config.quickstartImage ?? QUICKSTART_IMAGE },
      );
      const { applicationId } = application;
      const domain = await addGeneratedApplicationDomain(ctx, caller, applicationId, QUICKSTART_PORT);
      const { deploymentId } = await startApplicationDeployment(ctx, {
        applicationId,
        kind: "deploy",
        title: "Quickstart",
      });
      return {
        applicationId,
        appName: application.appName,
        domainId: domain.domainId,
        domainUrl: `http://${domain.host}`,
        deploymentId,
      };
    },
  }),

  one: query({
    summary: "An application with its environment, project, deployments, domains, ports and credentials",
    access: "member",
    input: applicationIdInput,
    output: applicationOneSchema,
    handler: async ({ ctx, caller, input }) => {
      const detail = await ctx.applicationDetails.get(ctx.db, caller.organizationId, input.applicationId);
      if (!detail) throw notFound("Application");
      // Checked per caller on every read, cached answer or not.
      await requireServiceAccess(ctx.db, caller, detail.service);
      return detail.answer;
    },
  }),

  update: mutation({
    summary: "Change an application's settings",
    access: "member",
    input: updateInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const {
        webhookSecret,
        password,
        buildSecrets,
        previewBuildSecrets,
        createdAt,
        refreshToken,
        applicationStatus,
        ...rest
      } = input;
      if (createdAt !== undefined) {
        throw badRequest("createdAt cannot be changed", { fields: ["createdAt"] });
      }
      if (refreshToken !== undefined) {
        throw badRequest("refreshToken cannot be chosen: application.refreshToken makes a new one", {
          fields: ["refreshToken"],
        });
      }
      let before: LocatedApplication | undefined;
      const result = await withUniqueAppName(ctx.db, input.appName, () =>
        patchApplication(ctx, caller, input.applicationId, async (application) => {
          before = application;
          // The status is what the platform observes: sent back unchanged it is fine, changed
          // it would also unlock checkRenamable.
          if (applicationStatus !== undefined && applicationStatus !== application.applicationStatus) {
            throw badRequest("applicationStatus is set by deploy, start and stop, not by update", {
              fields: ["applicationStatus"],
            });
          }
          await checkRenamable(ctx.db, application, input);
          await checkRegistryReferences(ctx.db, caller.organizationId, input);
          await checkGitSource(ctx, caller, input);
          if (
            input.buildServerId &&
            !(await serverBelongsTo(ctx.db, caller.organizationId, input.buildServerId))
          ) {
            throw notFound("Server");
          }
          if (input.environmentId !== undefined && input.environmentId !== application.environmentId) {
            await targetEnvironment(ctx, caller, input.environmentId);
          }
          await checkBuildSettings(ctx, caller.organizationId, application, input);
          await checkSwarmInput(
            ctx,
            {
              serverId: application.serverId,
              except: { applicationId: application.applicationId },
            },
            input as SwarmInput,
          );
          await checkNetworkIds(
            ctx,
            caller.organizationId,
            { serverId: application.serverId, swarm: true },
            input.networkIds,
          );
          const secrets = { webhookSecret, password, buildSecrets, previewBuildSecrets };
          return sealSecrets(ctx, application, secrets, columnsOf(rest));
        }),
      );
      // A new appName or server moves the application's Traefik file.
      if (before) await moveApplicationProxy(ctx, before);
      return result;
    },
  }),

  search: query({
    summary: "Search the organization's applications",
    access: "member",
    input: searchInput,
    output: z.object({ items: z.array(applicationSummarySchema), total: z.number().int() }),
    handler: async ({ ctx, caller, input }) =>
      searchApplications(ctx.db, caller.organizationId, input, await grantsOf(ctx.db, caller)),
  }),

  saveGithubProvider: mutation({
    summary: "Build from a GitHub repository",
    access: "member",
    input: saveGithubProviderInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, async () => ({
        ...(await requireOwnProvider(ctx, caller, "github", input.githubId)),
        ...columnsOf(input),
        sourceType: "github",
      })),
  }),

  saveGitlabProvider: mutation({
    summary: "Build from a GitLab repository",
    access: "member",
    input: saveGitlabProviderInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, async () => ({
        ...(await requireOwnProvider(ctx, caller, "gitlab", input.gitlabId)),
        ...columnsOf(input),
        sourceType: "gitlab",
      })),
  }),

  saveBitbucketProvider: mutation({
    summary: "Build from a Bitbucket repository",
    access: "member",
    input: saveBitbucketProviderInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, async () => ({
        ...(await requireOwnProvider(ctx, caller, "bitbucket", input.bitbucketId)),
        ...columnsOf(input),
        sourceType: "bitbucket",
      })),
  }),

  saveGiteaProvider: mutation({
    summary: "Build from a Gitea repository",
    access: "member",
    input: saveGiteaProviderInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, async () => ({
        ...(await requireOwnProvider(ctx, caller, "gitea", input.giteaId)),
        ...columnsOf(input),
        sourceType: "gitea",
      })),
  }),

  saveGitProvider: mutation({
    summary: "Build from a custom Git URL (HTTPS or SSH with a stored key)",
    access: "member",
    input: saveGitProviderInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, async () => {
        await checkGitSource(ctx, caller, input);
        return { ...columnsOf(input), sourceType: "git" };
      }),
  }),

  saveDockerProvider: mutation({
    summary: "Run a Docker image (with registry credentials when needed)",
    access: "member",
    input: saveDockerProviderInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, (application) => {
        const { password, ...rest } = input;
        return sealSecrets(ctx, application, { password }, { ...columnsOf(rest), sourceType: "docker" });
      }),
  }),

  disconnectGitProvider: mutation({
    summary: "Remove the Git source: every Git field back to its default",
    access: "member",
    input: applicationIdInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, () => DISCONNECTED_GIT),
  }),

  saveBuildType: mutation({
    summary: "Choose how the application is built",
    access: "member",
    input: saveBuildTypeInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, () => ({
        ...columnsOf(input),
        dockerBuildStage: input.dockerBuildStage || null,
      })),
  }),

  saveEnvironment: mutation({
    summary: "Set the application's variables, build arguments and build secrets",
    access: "member",
    input: saveEnvironmentInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, (application) => {
        const { buildSecrets, ...rest } = input;
        return sealSecrets(ctx, application, { buildSecrets }, columnsOf(rest));
      }),
  }),

  start: mutation({
    summary: "Start the application's service again (status done)",
    access: "member",
    input: applicationIdInput,
    output: serviceStatusSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      await startApplicationService(ctx, application);
      return serviceStatus(ctx, application, "done");
    },
  }),

  stop: mutation({
    summary: "Stop the application's service: scale it to 0 (status idle)",
    access: "member",
    input: applicationIdInput,
    output: serviceStatusSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      await stopApplicationService(ctx, application);
      return serviceStatus(ctx, application, "idle");
    },
  }),

  reload: mutation({
    summary: "Restart the application's tasks with the same configuration (no rebuild)",
    access: "member",
    input: applicationIdInput.extend({ appName: appNameSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      if (input.appName !== application.appName) {
        throw badRequest("appName is not the application's appName", { fields: ["appName"] });
      }
      await reloadApplicationService(ctx, application);
      return success;
    },
  }),

  readAppMonitoring: query({
    summary:
      "The CPU, memory and network use of the application's containers: the newest collected sample, or one taken now when monitoring does not collect it",
    access: "member",
    editions: ["self-hosted"],
    input: z.object({ appName: appNameSchema }),
    output: appMonitoringSchema,
    handler: async ({ ctx, caller, input, logger }) => {
      const application = await findApplicationByAppName(ctx.db, caller.organizationId, input.appName);
      if (!application) throw notFound("Application");
      await requireServiceAccess(ctx.db, caller, serviceOf(application));
      const serverId = serverOf(application);
      const stats = await callAgent(
        serverId,
        () =>
          readAppContainerStats(
            ctx.agents.client,
            serverId,
            application.appName,
            applicationOwner(caller.organizationId, application.applicationId),
          ),
        logger,
      );
      return summarizeAppMonitoring(stats, application.cpuLimit, ctx.now().getTime());
    },
  }),

  readLogs: query({
    summary:
      "The newest lines the application's containers printed (every replica, on every node), one `<time> <task> | <text>` line each",
    access: "member",
    input: applicationIdInput.extend(runtimeLogInput),
    output: runtimeLogsSchema,
    handler: async ({ ctx, caller, input, logger }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      const owner = applicationOwner(caller.organizationId, application.applicationId);
      const target = { serverId: serverOf(application), owner, swarmServiceName: application.appName };
      return readRuntimeLogs(ctx.agents.client, target, input, logger);
    },
  }),

  markRunning: mutation({
    summary: "Set the application's status to running by hand",
    access: "member",
    input: applicationIdInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, () => ({ applicationStatus: "running" })),
  }),

  move: mutation({
    summary: "Move the application to another environment of the organization",
    access: "member",
    input: moveInput,
    output: applicationSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      const target = await targetEnvironment(ctx, caller, input.targetEnvironmentId);
      const moved = await updateApplication(ctx.db, application.applicationId, {
        environmentId: target.environmentId,
      });
      if (!moved) throw notFound("Application");
      return toApplicationView(moved);
    },
  }),

  refreshToken: mutation({
    summary: "Replace the webhook token (the old webhook URL stops working)",
    access: "member",
    input: applicationIdInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchApplication(ctx, caller, input.applicationId, () => ({ refreshToken: newRefreshToken() })),
  }),

  delete: mutation({
    summary: "Delete the application (irreversible)",
    access: "member",
    input: applicationIdInput,
    output: deletedSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      requireCanDeleteServices(await grantsOf(ctx.db, caller));
      await teardownApplication(ctx, application, "The application was deleted");
      await deleteApplication(ctx.db, application.applicationId);
      return {
        applicationId: application.applicationId,
        name: application.name,
        appName: application.appName,
      };
    },
  }),

  deploy: mutation({
    summary: "Queue a deployment of the application; answers at once with its deploymentId",
    access: "member",
    input: deployInput,
    output: deployStartedSchema,
    handler: ({ ctx, caller, input }) => queueDeployment(ctx, caller, "deploy", input),
  }),

  redeploy: mutation({
    summary: "Queue a rebuild (clears the build cache first when cleanCache is on); answers at once",
    access: "member",
    input: deployInput,
    output: deployStartedSchema,
    handler: ({ ctx, caller, input }) => queueDeployment(ctx, caller, "redeploy", input),
  }),

  cancelDeployment: mutation({
    summary: "Stop the application's running deployment (every edition)",
    access: "member",
    input: applicationIdInput,
    output: z.object({ success: z.boolean(), message: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      return cancelServiceDeployment(ctx, application.applicationId, "application");
    },
  }),

  killBuild: mutation({
    summary: "Stop the application's running deployment and its build",
    access: "member",
    input: applicationIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      await stopRunningDeployment(ctx, application.applicationId, "Killed by application.killBuild");
      return success;
    },
  }),

  cleanQueues: mutation({
    summary: "Drop the application's waiting deployments (a running one goes on)",
    access: "member",
    input: applicationIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      await dropWaitingDeployments(
        ctx,
        application.applicationId,
        "Removed from the queue by application.cleanQueues",
      );
      return success;
    },
  }),

  clearDeployments: mutation({
    summary: "Delete the application's finished deployments except the newest successful one",
    access: "member",
    input: applicationIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await load(ctx.db, caller, input.applicationId);
      requireCanDeleteServices(await grantsOf(ctx.db, caller));
      await deleteFinishedDeployments(ctx.db, { applicationId: application.applicationId });
      return success;
    },
  }),

  readTraefikConfig: query({
    summary: "The application's Traefik file on its server as YAML text (null when it has none)",
    access: "member",
    input: applicationIdInput,
    output: z.string().nullable(),
    handler: async ({ ctx, caller, input }) => {
      requireFeature(caller, "traefikFiles");
      return readApplicationTraefikConfig(ctx, await load(ctx.db, caller, input.applicationId));
    },
  }),

  updateTraefikConfig: mutation({
    summary: "Replace the application's Traefik file (YAML checked against Traefik's file-provider schema)",
    access: "member",
    input: z.object({ applicationId: z.string().min(1).max(64), traefikConfig: z.string().max(256 * 1024) }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      requireFeature(caller, "traefikFiles");
      const application = await load(ctx.db, caller, input.applicationId);
      await checkUserTraefikConfig(ctx, caller, application, input.traefikConfig);
      await updateApplicationTraefikConfig(ctx, application, input.traefikConfig);
      return success;
    },
  }),
});
