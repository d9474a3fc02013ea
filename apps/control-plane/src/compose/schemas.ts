/**
 * Inputs and answers of the compose procedures (spec 2.6, 4.3) with Dokploy's field names.
 * Accepted fields are the ones that act: the file, its type and variables, and where the file
 * comes from (`raw`, or `git` with composePath inside the clone).
 */
import { COMPOSE_APP_NAME_PATTERN, COMPOSE_SUFFIX_PATTERN } from "@platform/compose-config";
import { z } from "zod";
import { idSchema } from "../applications/schemas.ts";
import {
  appNameSchema,
  branchSchema,
  gitUrlSchema,
  namespacePathSchema,
  providerIdSchema,
  repositoryNameSchema,
  watchPathsSchema,
} from "../applications/validation.ts";
import type { Compose, ComposeUpdate } from "../db/schema.ts";
import { envSchema } from "../env-vars.ts";
import { networkIdsSchema } from "../networks/index.ts";
import { descriptionSchema, nameSchema } from "../projects/schemas.ts";

const MAX_COMPOSE_FILE = 256 * 1024;

export const composeTypeSchema = z.enum(["docker-compose", "stack"]);
/** Where the file comes from: the stored text, or a branch of a repository (plain Git or a provider). */
export const composeSourceTypeSchema = z.enum(["raw", "git", "github", "gitlab", "bitbucket", "gitea"]);
export const composeFileSchema = z.string().max(MAX_COMPOSE_FILE);

/** A path inside the clone: relative, no `..`, no control characters. */
export const composePathSchema = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .refine((path) => !path.startsWith("/") && !path.startsWith("\\"), "must be relative to the repository")
  .refine((path) => !path.split(/[\\/]/).includes(".."), "must stay inside the repository (no `..`)")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  .refine((path) => !/[\u0000-\u001f\u007f]/.test(path), "must not hold control characters");

export const composeIdInput = z.object({ composeId: idSchema });

/** The suffix randomize and isolatedDeployment name things with. */
export const composeSuffixSchema = z
  .string()
  .regex(
    COMPOSE_SUFFIX_PATTERN,
    "must be lowercase letters, digits, '-' and '_' (at most 32), starting with a letter or digit",
  );

/** randomizeCompose, isolatedDeployment (Dokploy's apiRandomizeCompose). */
export const randomizeComposeInput = z.object({
  composeId: idSchema,
  suffix: composeSuffixSchema.optional(),
});

/** A stack's name prefixes every Docker name it creates as `<appName>_`: so no `_` (and lowercase, as Compose projects are). */
const composeAppNameSchema = appNameSchema.refine(
  (name) => COMPOSE_APP_NAME_PATTERN.test(name),
  "must be lowercase letters, digits and '-' (at most 63), starting with a letter or digit",
);

export const createComposeInput = z.object({
  name: nameSchema,
  appName: composeAppNameSchema,
  environmentId: idSchema,
  description: descriptionSchema,
  serverId: idSchema.nullish(),
  composeType: composeTypeSchema.optional(),
  composeFile: composeFileSchema.optional(),
  sourceType: composeSourceTypeSchema.optional(),
});

export const updateComposeInput = z.object({
  composeId: idSchema,
  name: nameSchema.optional(),
  description: descriptionSchema,
  env: envSchema.nullish(),
  composeFile: composeFileSchema.optional(),
  composeType: composeTypeSchema.optional(),
  sourceType: composeSourceTypeSchema.optional(),
  composePath: composePathSchema.optional(),
  customGitUrl: gitUrlSchema.nullish(),
  customGitBranch: branchSchema.nullish(),
  customGitSSHKeyId: idSchema.nullish(),
  enableSubmodules: z.boolean().optional(),
  // A provider source: the connection (of the caller's organization) and the repository on it.
  githubId: providerIdSchema.nullish(),
  owner: repositoryNameSchema.nullish(),
  repository: repositoryNameSchema.nullish(),
  branch: branchSchema.nullish(),
  gitlabId: providerIdSchema.nullish(),
  gitlabProjectId: z.number().int().min(1).nullish(),
  gitlabOwner: namespacePathSchema.nullish(),
  gitlabRepository: repositoryNameSchema.nullish(),
  gitlabBranch: branchSchema.nullish(),
  gitlabPathNamespace: namespacePathSchema.nullish(),
  bitbucketId: providerIdSchema.nullish(),
  bitbucketOwner: repositoryNameSchema.nullish(),
  bitbucketRepository: repositoryNameSchema.nullish(),
  bitbucketRepositorySlug: repositoryNameSchema.nullish(),
  bitbucketBranch: branchSchema.nullish(),
  giteaId: providerIdSchema.nullish(),
  giteaOwner: repositoryNameSchema.nullish(),
  giteaRepository: repositoryNameSchema.nullish(),
  giteaBranch: branchSchema.nullish(),
  /** Ids of the organization's networks every service joins (networks/ checkNetworkIds). */
  networkIds: networkIdsSchema.optional(),
  // Push webhooks (webhooks/route.ts, /api/deploy/compose/<refreshToken>).
  autoDeploy: z.boolean().optional(),
  triggerType: z.enum(["push", "tag"]).optional(),
  watchPaths: watchPathsSchema.nullish(),
  // Dokploy's collision rules, applied by the conversion at each deploy (compose-config collision.ts).
  suffix: z.union([z.literal(""), composeSuffixSchema]).optional(),
  randomize: z.boolean().optional(),
  isolatedDeployment: z.boolean().optional(),
  isolatedDeploymentsVolume: z.boolean().optional(),
});

export const deployComposeInput = z.object({
  composeId: idSchema,
  title: z.string().max(500).optional(),
  description: z.string().max(1000).optional(),
  /** Remove the stack (and its own volumes: ownership labels) before this deployment, as Dokploy's CLI asks. */
  freshVolumes: z.boolean().optional(),
});

/**
 * saveEnvironment: the variables the file is interpolated with. Dokploy's createEnvFile (a `.env`
 * written beside the file) is accepted only as false: the variables reach the file through
 * interpolation, no `.env` is written (a 400 naming it when true).
 */
export const saveComposeEnvironmentInput = z.object({
  composeId: idSchema,
  env: envSchema,
  createEnvFile: z
    .literal(false, { error: "no .env file is written: the variables are interpolated into the file" })
    .optional(),
});

/** What disconnectGitProvider leaves: a raw stack, every Git field back to its default. */
export const DISCONNECTED_COMPOSE_GIT = {
  sourceType: "raw",
  repository: null,
  owner: null,
  branch: null,
  githubId: null,
  triggerType: "push",
  gitlabRepository: null,
  gitlabOwner: null,
  gitlabBranch: null,
  gitlabId: null,
  gitlabProjectId: null,
  gitlabPathNamespace: null,
  bitbucketRepository: null,
  bitbucketRepositorySlug: null,
  bitbucketOwner: null,
  bitbucketBranch: null,
  bitbucketId: null,
  giteaRepository: null,
  giteaOwner: null,
  giteaBranch: null,
  giteaId: null,
  customGitUrl: null,
  customGitBranch: null,
  customGitSshKeyId: null,
  watchPaths: null,
  enableSubmodules: false,
} satisfies ComposeUpdate;

const statusSchema = z.enum(["idle", "running", "done", "error"]);

export const composeSchema = z.object({
  composeId: z.string(),
  name: z.string(),
  appName: z.string(),
  description: z.string().nullable(),
  env: z.string().nullable(),
  composeFile: z.string(),
  sourceType: z.enum(["git", "github", "gitlab", "bitbucket", "gitea", "raw"]),
  composeType: composeTypeSchema,
  composePath: z.string(),
  command: z.string(),
  composeStatus: statusSchema,
  customGitUrl: z.string().nullable(),
  customGitBranch: z.string().nullable(),
  customGitSSHKeyId: z.string().nullable(),
  githubId: z.string().nullable(),
  owner: z.string().nullable(),
  repository: z.string().nullable(),
  branch: z.string().nullable(),
  gitlabId: z.string().nullable(),
  gitlabProjectId: z.number().nullable(),
  gitlabOwner: z.string().nullable(),
  gitlabRepository: z.string().nullable(),
  gitlabBranch: z.string().nullable(),
  gitlabPathNamespace: z.string().nullable(),
  bitbucketId: z.string().nullable(),
  bitbucketOwner: z.string().nullable(),
  bitbucketRepository: z.string().nullable(),
  bitbucketRepositorySlug: z.string().nullable(),
  bitbucketBranch: z.string().nullable(),
  giteaId: z.string().nullable(),
  giteaOwner: z.string().nullable(),
  giteaRepository: z.string().nullable(),
  giteaBranch: z.string().nullable(),
  autoDeploy: z.boolean(),
  /** The push webhook's token: POST /api/deploy/compose/<refreshToken> (null until refreshToken sets one). */
  refreshToken: z.string().nullable(),
  watchPaths: z.array(z.string()).nullable(),
  createEnvFile: z.boolean(),
  enableSubmodules: z.boolean(),
  suffix: z.string(),
  randomize: z.boolean(),
  isolatedDeployment: z.boolean(),
  triggerType: z.enum(["push", "tag"]).nullable(),
  icon: z.string().nullable(),
  environmentId: z.string(),
  serverId: z.string().nullable(),
  networkIds: z.array(z.string()),
  createdAt: z.string(),
});

export function toComposeView(row: Compose): z.input<typeof composeSchema> {
  return {
    composeId: row.composeId,
    name: row.name,
    appName: row.appName,
    description: row.description,
    env: row.env,
    composeFile: row.composeFile,
    sourceType: row.sourceType,
    composeType: row.composeType,
    composePath: row.composePath,
    command: row.command,
    composeStatus: row.composeStatus,
    customGitUrl: row.customGitUrl,
    customGitBranch: row.customGitBranch,
    customGitSSHKeyId: row.customGitSshKeyId,
    githubId: row.githubId,
    owner: row.owner,
    repository: row.repository,
    branch: row.branch,
    gitlabId: row.gitlabId,
    gitlabProjectId: row.gitlabProjectId,
    gitlabOwner: row.gitlabOwner,
    gitlabRepository: row.gitlabRepository,
    gitlabBranch: row.gitlabBranch,
    gitlabPathNamespace: row.gitlabPathNamespace,
    bitbucketId: row.bitbucketId,
    bitbucketOwner: row.bitbucketOwner,
    bitbucketRepository: row.bitbucketRepository,
    bitbucketRepositorySlug: row.bitbucketRepositorySlug,
    bitbucketBranch: row.bitbucketBranch,
    giteaId: row.giteaId,
    giteaOwner: row.giteaOwner,
    giteaRepository: row.giteaRepository,
    giteaBranch: row.giteaBranch,
    autoDeploy: row.autoDeploy,
    refreshToken: row.refreshToken,
    watchPaths: row.watchPaths,
    createEnvFile: row.createEnvFile,
    enableSubmodules: row.enableSubmodules,
    suffix: row.suffix,
    randomize: row.randomize,
    isolatedDeployment: row.isolatedDeployment,
    triggerType: row.triggerType,
    icon: row.icon,
    environmentId: row.environmentId,
    serverId: row.serverId,
    networkIds: row.networkIds,
    createdAt: row.createdAt,
  };
}

export const stackServiceSchema = z.object({
  name: z.string(),
  runningTasks: z.number(),
  desiredTasks: z.number(),
  error: z.string().optional(),
});

/** A stack as compose.search lists it. */
export const composeSummarySchema = z.object({
  composeId: z.string(),
  name: z.string(),
  appName: z.string(),
  description: z.string().nullable(),
  environmentId: z.string(),
  projectId: z.string(),
  serverId: z.string().nullable(),
  composeStatus: statusSchema,
  sourceType: composeSourceTypeSchema,
  composeType: composeTypeSchema,
  repository: z.string().nullable(),
  owner: z.string().nullable(),
  branch: z.string().nullable(),
  createdAt: z.string(),
});
