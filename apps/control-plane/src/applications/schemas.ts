/** Applications as the API shows and accepts them (spec 2.3, 4.1). */

import { certResolverSchema } from "@platform/traefik-config";
import { z } from "zod";
import { envSchema } from "../env-vars.ts";
import { networkIdsSchema } from "../networks/index.ts";
import { descriptionSchema, nameSchema } from "../projects/schemas.ts";
import {
  appNameSchema,
  branchSchema,
  buildStageSchema,
  cpuSchema,
  dockerImageSchema,
  gitUrlSchema,
  healthCheckSwarmSchema,
  memorySchema,
  namespacePathSchema,
  plainTextSchema,
  providerIdSchema,
  registryUrlSchema,
  relativeFileSchema,
  relativePathSchema,
  repositoryNameSchema,
  restartPolicySwarmSchema,
  swarmSpecDetailFields,
  swarmUpdateFields,
  versionSchema,
  watchPathsSchema,
} from "./validation.ts";

export const applicationStatuses = ["idle", "running", "done", "error"] as const;
export const sourceTypes = ["github", "gitlab", "bitbucket", "gitea", "docker", "git", "drop"] as const;
export const buildTypes = [
  "dockerfile",
  "nixpacks",
  "heroku_buildpacks",
  "paketo_buildpacks",
  "railpack",
  "static",
] as const;
export const triggerTypes = ["push", "tag"] as const;
export const buildArchitectures = ["host", "amd64", "arm64", "multi"] as const;
export const certificateTypes = ["letsencrypt", "none", "custom"] as const;

export const idSchema = z.string().min(1).max(100);

/** A clearable text field: "" clears it like null (what forms send for an emptied field). */
const clearable = <T extends z.ZodType>(schema: T) =>
  z.union([z.literal("").transform(() => null), schema]).nullish();
export const applicationIdInput = z.object({ applicationId: idSchema });

export { appNameSchema, descriptionSchema, nameSchema };

export const createInput = z.object({
  name: nameSchema,
  environmentId: idSchema,
  appName: appNameSchema.optional(),
  description: descriptionSchema,
  serverId: clearable(idSchema),
  /** Dokploy clients may name the source kind up front; its details come with save*Provider. */
  sourceType: z.enum(sourceTypes).optional(),
});

/** application.update: the spec's fields plus the run settings that have no other setter. */
export const updateInput = z.object({
  applicationId: idSchema,
  name: nameSchema.optional(),
  appName: appNameSchema.optional(),
  description: descriptionSchema,
  env: envSchema.nullish(),
  memoryLimit: clearable(memorySchema),
  memoryReservation: clearable(memorySchema),
  cpuLimit: clearable(cpuSchema),
  cpuReservation: clearable(cpuSchema),
  command: plainTextSchema(10_000).nullish(),
  args: z.array(plainTextSchema(10_000)).max(1000).nullish(),
  autoDeploy: z.boolean().optional(),
  cleanCache: z.boolean().optional(),
  ...swarmUpdateFields,
  isPreviewDeploymentsActive: z.boolean().optional(),
  previewLimit: z.number().int().min(0).max(100).optional(),
  previewWildcard: z
    .string()
    .trim()
    .max(255)
    .regex(
      /^(?:\*\.)?[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?$/,
      "must be a domain such as *.preview.example.com",
    )
    .nullish(),
  previewPath: z
    .string()
    .trim()
    .max(500)
    .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/, "must be a URL path starting with '/'")
    .optional(),
  previewEnv: envSchema.nullish(),
  previewBuildArgs: envSchema.nullish(),
  previewPort: z.number().int().min(1).max(65535).optional(),
  previewHttps: z.boolean().optional(),
  previewLabels: z.array(plainTextSchema(200)).max(100).nullish(),
  previewRequireCollaboratorPermissions: z.boolean().optional(),
  /** Registries of the organization: pull from, push builds to, keep rollback images in. */
  registryId: clearable(idSchema),
  buildRegistryId: clearable(idSchema),
  rollbackRegistryId: clearable(idSchema),
  /** Verifies inbound deploy webhooks (GitHub/Gitea HMAC key, GitLab token); write-only, "" clears. */
  webhookSecret: z.string().max(1000).nullish(),

  // The rest of Dokploy's application fields (its update takes every column but serverId).
  /** Moves the application to another environment of the organization (as application.move). */
  environmentId: idSchema.optional(),
  applicationStatus: z.enum(applicationStatuses).optional(),
  sourceType: z.enum(sourceTypes).optional(),
  buildType: z.enum(buildTypes).optional(),
  githubId: clearable(providerIdSchema),
  repository: clearable(repositoryNameSchema),
  owner: clearable(repositoryNameSchema),
  branch: clearable(branchSchema),
  buildPath: relativePathSchema.optional(),
  triggerType: z.enum(triggerTypes).optional(),
  watchPaths: watchPathsSchema.nullish(),
  enableSubmodules: z.boolean().optional(),
  gitlabId: clearable(providerIdSchema),
  gitlabProjectId: z.number().int().min(1).nullish(),
  gitlabRepository: clearable(repositoryNameSchema),
  gitlabOwner: clearable(namespacePathSchema),
  gitlabBranch: clearable(branchSchema),
  gitlabBuildPath: relativePathSchema.optional(),
  gitlabPathNamespace: clearable(namespacePathSchema),
  bitbucketId: clearable(providerIdSchema),
  bitbucketRepository: clearable(repositoryNameSchema),
  bitbucketRepositorySlug: clearable(repositoryNameSchema),
  bitbucketOwner: clearable(repositoryNameSchema),
  bitbucketBranch: clearable(branchSchema),
  bitbucketBuildPath: relativePathSchema.optional(),
  giteaId: clearable(providerIdSchema),
  giteaRepository: clearable(repositoryNameSchema),
  giteaOwner: clearable(repositoryNameSchema),
  giteaBranch: clearable(branchSchema),
  giteaBuildPath: relativePathSchema.optional(),
  customGitUrl: clearable(gitUrlSchema),
  customGitBranch: clearable(branchSchema),
  customGitBuildPath: relativePathSchema.nullish(),
  customGitSSHKeyId: clearable(idSchema),
  dockerImage: clearable(dockerImageSchema),
  username: plainTextSchema(255).nullish(),
  /** The registry password: write-only, sealed; null or "" clears it. */
  password: plainTextSchema(10_000).nullish(),
  registryUrl: clearable(registryUrlSchema),
  dockerfile: relativeFileSchema.nullish(),
  dockerContextPath: relativePathSchema.nullish(),
  dockerBuildStage: clearable(buildStageSchema),
  publishDirectory: relativePathSchema.nullish(),
  isStaticSpa: z.boolean().optional(),
  herokuVersion: clearable(versionSchema),
  railpackVersion: clearable(versionSchema),
  buildArgs: envSchema.nullish(),
  /** Write-only, sealed; null or "" clears. */
  buildSecrets: envSchema.nullish(),
  createEnvFile: z.boolean().optional(),
  /** Write-only, sealed; null or "" clears. */
  previewBuildSecrets: envSchema.nullish(),
  previewCertificateType: z.enum(certificateTypes).optional(),
  previewCustomCertResolver: clearable(certResolverSchema),
  rollbackActive: z.boolean().optional(),
  buildArchitecture: z.enum(buildArchitectures).optional(),
  buildxBuilder: clearable(buildStageSchema),
  /** A build server of the organization: it builds and pushes to buildRegistryId; the app's server pulls (applications/build-server.ts). */
  buildServerId: clearable(idSchema),
  networkIds: networkIdsSchema.optional(),
  detachDokployNetwork: z.boolean().optional(),
  dropBuildPath: relativePathSchema.nullish(),
  title: plainTextSchema(255).nullish(),
  subtitle: plainTextSchema(255).nullish(),
  enabled: z.boolean().nullish(),
  /** An image as a data URL or URL; at most 2 MiB as in Dokploy. */
  icon: z
    .string()
    .max(2 * 1024 * 1024)
    .nullish(),
  /** Dokploy lets update overwrite these; we refuse them (400 naming the field), see the handler. */
  createdAt: z.unknown().optional(),
  refreshToken: z.unknown().optional(),
});

/** The filters of search (application.search, and the ones compose.search takes). */
export const searchFields = {
  q: z.string().max(200).optional(),
  name: z.string().max(200).optional(),
  appName: z.string().max(200).optional(),
  description: z.string().max(200).optional(),
  repository: z.string().max(200).optional(),
  owner: z.string().max(200).optional(),
  dockerImage: z.string().max(200).optional(),
  projectId: idSchema.optional(),
  environmentId: idSchema.optional(),
  limit: z.number().int().min(1).max(100).default(20),
  offset: z.number().int().min(0).default(0),
};

export const searchInput = z.object(searchFields).prefault({});

/** As in Dokploy, an absent enableSubmodules keeps the stored value (false on a new application). */
const gitFields = { enableSubmodules: z.boolean().optional(), watchPaths: watchPathsSchema.nullish() };

export const saveGithubProviderInput = z.object({
  applicationId: idSchema,
  githubId: providerIdSchema,
  owner: repositoryNameSchema,
  repository: repositoryNameSchema.nullish(),
  branch: branchSchema.nullish(),
  buildPath: relativePathSchema.optional(),
  triggerType: z.enum(triggerTypes).default("push"),
  ...gitFields,
});

export const saveGitlabProviderInput = z.object({
  applicationId: idSchema,
  gitlabId: providerIdSchema,
  gitlabProjectId: z.number().int().min(1),
  gitlabOwner: namespacePathSchema,
  gitlabRepository: repositoryNameSchema,
  gitlabBranch: branchSchema,
  gitlabBuildPath: relativePathSchema,
  gitlabPathNamespace: namespacePathSchema,
  ...gitFields,
});

export const saveBitbucketProviderInput = z.object({
  applicationId: idSchema,
  bitbucketId: providerIdSchema,
  bitbucketOwner: repositoryNameSchema,
  bitbucketRepository: repositoryNameSchema,
  bitbucketRepositorySlug: repositoryNameSchema.nullish(),
  bitbucketBranch: branchSchema,
  bitbucketBuildPath: relativePathSchema,
  ...gitFields,
});

export const saveGiteaProviderInput = z.object({
  applicationId: idSchema,
  giteaId: providerIdSchema,
  giteaOwner: repositoryNameSchema,
  giteaRepository: repositoryNameSchema,
  giteaBranch: branchSchema,
  giteaBuildPath: relativePathSchema,
  ...gitFields,
});

export const saveGitProviderInput = z.object({
  applicationId: idSchema,
  customGitUrl: gitUrlSchema.nullish(),
  customGitBranch: branchSchema.nullish(),
  customGitBuildPath: relativePathSchema.nullish(),
  customGitSSHKeyId: clearable(idSchema),
  ...gitFields,
});

/** An absent password keeps the stored one; null or "" clears it (it is never shown to re-send). */
export const saveDockerProviderInput = z.object({
  applicationId: idSchema,
  dockerImage: dockerImageSchema.nullish(),
  username: plainTextSchema(255).nullish(),
  password: plainTextSchema(10_000).nullish(),
  registryUrl: clearable(registryUrlSchema),
});

export const saveBuildTypeInput = z.object({
  applicationId: idSchema,
  buildType: z.enum(buildTypes),
  dockerContextPath: relativePathSchema.nullable(),
  dockerBuildStage: z.union([z.literal(""), buildStageSchema]).nullable(),
  dockerfile: relativeFileSchema.nullish(),
  publishDirectory: relativePathSchema.nullish(),
  isStaticSpa: z.boolean().optional(),
  herokuVersion: versionSchema.nullish(),
  railpackVersion: versionSchema.nullish(),
});

/** An absent buildSecrets keeps the stored value (never shown); null or "" clears it. */
export const saveEnvironmentInput = z.object({
  applicationId: idSchema,
  createEnvFile: z.boolean(),
  env: envSchema.nullish(),
  buildArgs: envSchema.nullish(),
  buildSecrets: envSchema.nullish(),
});

export const moveInput = z.object({ applicationId: idSchema, targetEnvironmentId: idSchema });

const nullableString = z.string().nullable();

/**
 * The stored application as every response shows it. The registry password and build secrets
 * are sealed at rest and left out; the refresh token is shown (webhook URLs carry it).
 */
export const applicationSchema = z.object({
  applicationId: z.string(),
  name: z.string(),
  appName: z.string(),
  description: nullableString,
  environmentId: z.string(),
  serverId: nullableString,
  applicationStatus: z.enum(applicationStatuses),
  applicationStatusMessage: nullableString,
  sourceType: z.enum(sourceTypes),
  buildType: z.enum(buildTypes),
  githubId: nullableString,
  repository: nullableString,
  owner: nullableString,
  branch: nullableString,
  buildPath: z.string(),
  triggerType: z.enum(triggerTypes),
  watchPaths: z.array(z.string()).nullable(),
  enableSubmodules: z.boolean(),
  gitlabId: nullableString,
  gitlabProjectId: z.number().nullable(),
  gitlabRepository: nullableString,
  gitlabOwner: nullableString,
  gitlabBranch: nullableString,
  gitlabBuildPath: z.string(),
  gitlabPathNamespace: nullableString,
  bitbucketId: nullableString,
  bitbucketRepository: nullableString,
  bitbucketRepositorySlug: nullableString,
  bitbucketOwner: nullableString,
  bitbucketBranch: nullableString,
  bitbucketBuildPath: z.string(),
  giteaId: nullableString,
  giteaRepository: nullableString,
  giteaOwner: nullableString,
  giteaBranch: nullableString,
  giteaBuildPath: z.string(),
  customGitUrl: nullableString,
  customGitBranch: nullableString,
  customGitBuildPath: nullableString,
  customGitSSHKeyId: nullableString,
  dockerImage: nullableString,
  username: nullableString,
  registryUrl: nullableString,
  dockerfile: nullableString,
  dockerContextPath: nullableString,
  dockerBuildStage: nullableString,
  publishDirectory: nullableString,
  isStaticSpa: z.boolean(),
  herokuVersion: nullableString,
  railpackVersion: nullableString,
  cleanCache: z.boolean(),
  env: nullableString,
  buildArgs: nullableString,
  createEnvFile: z.boolean(),
  memoryLimit: nullableString,
  memoryReservation: nullableString,
  cpuLimit: nullableString,
  cpuReservation: nullableString,
  command: nullableString,
  args: z.array(z.string()).nullable(),
  replicas: z.number(),
  healthCheckSwarm: healthCheckSwarmSchema.nullable(),
  restartPolicySwarm: restartPolicySwarmSchema.nullable(),
  autoDeploy: z.boolean(),
  refreshToken: z.string(),
  isPreviewDeploymentsActive: z.boolean(),
  previewLimit: z.number(),
  previewWildcard: nullableString,
  previewPath: z.string(),
  previewEnv: nullableString,
  previewBuildArgs: nullableString,
  previewPort: z.number(),
  previewHttps: z.boolean(),
  previewLabels: z.array(z.string()).nullable(),
  previewRequireCollaboratorPermissions: z.boolean(),
  createdAt: z.string(),
  registryId: nullableString,
  buildRegistryId: nullableString,
  rollbackRegistryId: nullableString,
  ...swarmSpecDetailFields,
  previewCertificateType: z.enum(certificateTypes),
  previewCustomCertResolver: nullableString,
  rollbackActive: z.boolean(),
  buildArchitecture: z.enum(buildArchitectures),
  buildxBuilder: nullableString,
  buildServerId: nullableString,
  networkIds: z.array(z.string()),
  detachDokployNetwork: z.boolean(),
  dropBuildPath: nullableString,
  title: nullableString,
  subtitle: nullableString,
  enabled: z.boolean().nullable(),
  icon: nullableString,
});

/** application.one: the application with its environment and project, deployments and provider access. */
export const applicationDetailSchema = applicationSchema.extend({
  environment: z.object({
    environmentId: z.string(),
    name: z.string(),
    project: z.object({ projectId: z.string(), name: z.string() }),
  }),
  deployments: z.array(z.record(z.string(), z.unknown())),
  hasGitProviderAccess: z.boolean(),
  unauthorizedProvider: z.string().nullable(),
});

export const applicationSummarySchema = z.object({
  applicationId: z.string(),
  name: z.string(),
  appName: z.string(),
  description: nullableString,
  environmentId: z.string(),
  projectId: z.string(),
  serverId: nullableString,
  applicationStatus: z.enum(applicationStatuses),
  sourceType: z.enum(sourceTypes),
  buildType: z.enum(buildTypes),
  repository: nullableString,
  owner: nullableString,
  branch: nullableString,
  dockerImage: nullableString,
  createdAt: z.string(),
});

export const deletedSchema = z.object({ applicationId: z.string(), name: z.string(), appName: z.string() });

export type ApplicationView = z.input<typeof applicationSchema>;

/** A published port of an application (the port router, application.one). */
export const protocolSchema = z.enum(["tcp", "udp"]);
export const publishModeSchema = z.enum(["host", "ingress"]);

export const portSchema = z.object({
  portId: z.string(),
  applicationId: z.string(),
  publishedPort: z.number().int(),
  targetPort: z.number().int(),
  protocol: protocolSchema,
  publishMode: publishModeSchema,
  createdAt: z.string(),
});
