/**
 * The procedures the four provider routers share (spec 4.12): create, one, the list of the
 * organization's providers of a kind, update; and the views. A member needs the gitProviders
 * permission (canAccessToGitProviders); another organization's provider is a 404. Secrets are
 * write-only: no view carries them, only whether the OAuth flow completed (`authorized`).
 */
import { z } from "zod";
import { namespacePathSchema, repositoryNameSchema } from "../applications/validation.ts";
import type { Caller, ServiceContext } from "../context.ts";
import type { GitProviderType } from "../db/schema.ts";
import { badRequest, notFound } from "../errors.ts";
import { mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { requireFeature } from "../projects/permissions.ts";
import {
  type BranchView,
  bitbucketBranches,
  bitbucketRepositories,
  giteaBranches,
  giteaRepositories,
  githubBranches,
  githubRepositories,
  gitlabBranches,
  gitlabRepositories,
  oauthAuthorizePage,
  type RepositoryView,
} from "./clients.ts";
import { checkProviderUrl } from "./http.ts";
import { createInput, KINDS, providerIdInput, updateInput } from "./kinds.ts";
import { mintOAuthState } from "./oauth-state.ts";
import {
  findProvider,
  insertProvider,
  listProviders,
  openSecrets,
  PROVIDER_ID_FIELD,
  PROVIDER_NAMES,
  type ProviderRecord,
  type Secrets,
  type Settings,
  updateProvider,
} from "./repository.ts";

export const gitProviderSchema = z.object({
  gitProviderId: z.string(),
  name: z.string(),
  providerType: z.enum(["github", "gitlab", "bitbucket", "gitea"]),
  createdAt: z.string(),
  organizationId: z.string(),
  userId: z.string().nullable(),
  sharedWithOrganization: z.boolean(),
});

const kindViewSchema = z.record(z.string(), z.unknown());

export const gitProviderViewSchema = gitProviderSchema.extend({
  github: kindViewSchema.nullable(),
  gitlab: kindViewSchema.nullable(),
  bitbucket: kindViewSchema.nullable(),
  gitea: kindViewSchema.nullable(),
});

export const kindOneSchema = kindViewSchema;

/** The kind's id beside a provider (create's answer, the lists). */
const kindIds = {
  githubId: z.string().optional(),
  gitlabId: z.string().optional(),
  bitbucketId: z.string().optional(),
  giteaId: z.string().optional(),
};

export const repositorySchema = z.object({
  id: z.union([z.number(), z.string()]),
  name: z.string(),
  url: z.string(),
  owner: z.object({ username: z.string() }),
  defaultBranch: z.string().nullable(),
});
export const branchSchema = z.object({ name: z.string(), commit: z.object({ sha: z.string() }) });

export function baseView(provider: ProviderRecord) {
  const { gitProviderId, name, providerType, createdAt, organizationId, userId, sharedWithOrganization } =
    provider.row;
  return {
    gitProviderId,
    name,
    providerType,
    createdAt: new Date(createdAt).toISOString(),
    organizationId,
    userId,
    sharedWithOrganization,
  };
}

/** The kind's object: its id, the plain settings, and `authorized` for the OAuth kinds. */
export function kindView(ctx: ServiceContext, provider: ProviderRecord): Record<string, unknown> {
  const kind = provider.row.providerType;
  const view: Record<string, unknown> = {
    [PROVIDER_ID_FIELD[kind]]: provider.row.providerId,
    gitProviderId: provider.row.gitProviderId,
  };
  for (const field of Object.keys(KINDS[kind].settings)) view[field] = provider.settings[field] ?? null;
  if (kind === "gitlab" || kind === "gitea")
    view.authorized = Boolean(openSecrets(ctx, provider).accessToken);
  return view;
}

export function providerView(ctx: ServiceContext, provider: ProviderRecord) {
  const kind = provider.row.providerType;
  return {
    ...baseView(provider),
    github: null,
    gitlab: null,
    bitbucket: null,
    gitea: null,
    [kind]: kindView(ctx, provider),
  };
}

/** The caller's organization's provider of `kind`, after the gitProviders permission check; 404 otherwise. */
export async function loadProvider(
  ctx: ServiceContext,
  caller: Caller,
  kind: GitProviderType,
  providerId: string | undefined,
): Promise<ProviderRecord> {
  requireFeature(caller, "gitProviders");
  const provider = providerId
    ? await findProvider(ctx.db, caller.organizationId, kind, providerId, caller)
    : undefined;
  if (!provider) throw notFound(`${PROVIDER_NAMES[kind]} provider`);
  return provider;
}

/** Splits an input into plain settings and secrets, checking the URL fields with the outbound guard. */
async function splitFields(
  ctx: ServiceContext,
  caller: Caller,
  kind: GitProviderType,
  input: Record<string, unknown>,
): Promise<{ settings: Settings; secrets: Secrets }> {
  const def = KINDS[kind];
  const settings: Settings = {};
  const secrets: Secrets = {};
  for (const field of Object.keys(def.settings)) {
    const value = input[field];
    if (value === undefined) continue;
    if (def.urlFields.includes(field) && typeof value === "string" && value !== "") {
      settings[field] = await checkProviderUrl(ctx, caller.organizationId, field, value);
    } else {
      settings[field] = value === "" ? null : (value as string | number | null);
    }
  }
  for (const field of Object.keys(def.secrets)) {
    const value = input[field];
    if (typeof value === "string") secrets[field] = value;
  }
  return { settings, secrets };
}

export function createProcedure(kind: GitProviderType) {
  const idField = PROVIDER_ID_FIELD[kind];
  return mutation({
    summary: `Connect a ${PROVIDER_NAMES[kind]} provider (its secrets are sealed and never shown again)`,
    access: "member",
    input: createInput(kind),
    output: gitProviderViewSchema.extend(kindIds),
    handler: async ({ ctx, caller, input }) => {
      requireFeature(caller, "gitProviders");
      const fields = input as Record<string, unknown>;
      if (typeof fields.authId === "string" && fields.authId !== "" && fields.authId !== caller.userId) {
        throw badRequest("authId must be the caller's own user id (the provider's creator)", {
          fields: ["authId"],
        });
      }
      const { settings, secrets } = await splitFields(ctx, caller, kind, fields);
      const provider = await insertProvider(ctx, {
        providerType: kind,
        name: input.name,
        organizationId: caller.organizationId,
        userId: caller.userId,
        settings: { ...KINDS[kind].defaults, ...settings },
        secrets,
      });
      return { ...providerView(ctx, provider), [idField]: provider.row.providerId };
    },
  });
}

export function oneProcedure(kind: GitProviderType) {
  const idField = PROVIDER_ID_FIELD[kind];
  return query({
    summary: `One ${PROVIDER_NAMES[kind]} provider (without its secrets)`,
    access: "member",
    input: z.object({ [idField]: z.string().trim().min(1).max(100) }),
    output: kindOneSchema,
    handler: async ({ ctx, caller, input }) => {
      const provider = await loadProvider(ctx, caller, kind, (input as Record<string, string>)[idField]);
      return { ...kindView(ctx, provider), gitProvider: baseView(provider) };
    },
  });
}

export function listProcedure(kind: GitProviderType) {
  const idField = PROVIDER_ID_FIELD[kind];
  return query({
    summary: `The organization's ${PROVIDER_NAMES[kind]} providers`,
    access: "member",
    input: noInput,
    // Dokploy's GitLab list also names each provider's gitlabUrl.
    output: z.array(
      z.object({
        ...kindIds,
        gitProvider: gitProviderSchema,
        ...(kind === "gitlab" ? { gitlabUrl: z.string() } : {}),
      }),
    ),
    handler: async ({ ctx, caller }) => {
      requireFeature(caller, "gitProviders");
      return (await listProviders(ctx.db, caller.organizationId, { kind, viewer: caller })).map(
        (provider) => ({
          [idField]: provider.row.providerId,
          gitProvider: baseView(provider),
          ...(kind === "gitlab" ? { gitlabUrl: String(provider.settings.gitlabUrl ?? "") } : {}),
        }),
      );
    },
  });
}

export function updateProcedure(kind: GitProviderType) {
  const idField = PROVIDER_ID_FIELD[kind];
  return mutation({
    summary: `Change a ${PROVIDER_NAMES[kind]} provider; an absent secret keeps the stored one`,
    access: "member",
    input: updateInput(kind, idField),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const fields = input as Record<string, unknown>;
      const provider = await loadProvider(ctx, caller, kind, fields[idField] as string);
      if (fields.gitProviderId !== undefined && fields.gitProviderId !== provider.row.gitProviderId) {
        throw notFound(`${PROVIDER_NAMES[kind]} provider`);
      }
      const { settings, secrets } = await splitFields(ctx, caller, kind, fields);
      await updateProvider(ctx, provider, {
        name: fields.name as string | undefined,
        settings,
        secrets,
      });
      return success;
    },
  });
}

/**
 * Starts a GitLab or Gitea authorization: the provider's authorize page with a state minted for
 * the caller (oauth-state.ts), which its callback accepts once within ten minutes. A mutation: each
 * call writes a state.
 */
export function startAuthorizationProcedure(kind: "gitlab" | "gitea") {
  const idField = PROVIDER_ID_FIELD[kind];
  return mutation({
    summary: `The ${PROVIDER_NAMES[kind]} authorization page, with a state for the caller valid once for ten minutes`,
    access: "member",
    input: z.object({ [idField]: providerIdInput }),
    output: z.object({ authorizeUrl: z.string(), expiresAt: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const provider = await loadProvider(ctx, caller, kind, (input as Record<string, string>)[idField]);
      const page = oauthAuthorizePage(provider);
      const { state, expiresAt } = await mintOAuthState(ctx, caller, provider);
      page.searchParams.set("state", state);
      return { authorizeUrl: page.toString(), expiresAt };
    },
  });
}

/**
 * How each kind names a repository in its branches procedure (Dokploy's field names) and reads
 * its repositories and branches. GitLab's project id is optional: without it the project is found
 * by its path among the token's projects.
 */
const REPOSITORY_ACCESS = {
  github: {
    branchesInput: { owner: repositoryNameSchema, repo: repositoryNameSchema },
    repositories: (ctx, provider) => githubRepositories(ctx, provider),
    branches: (ctx, provider, input) =>
      githubBranches(ctx, provider, input.owner as string, input.repo as string),
  },
  gitlab: {
    branchesInput: {
      id: z.number().int().min(1).optional(),
      owner: namespacePathSchema,
      repo: repositoryNameSchema,
    },
    repositories: (ctx, provider) => gitlabRepositories(ctx, provider),
    branches: async (ctx, provider, input) => {
      if (typeof input.id === "number") return gitlabBranches(ctx, provider, input.id);
      const project = (await gitlabRepositories(ctx, provider, "")).find(
        (repository) => repository.url === `${input.owner}/${input.repo}`,
      );
      return project ? gitlabBranches(ctx, provider, Number(project.id)) : [];
    },
  },
  gitea: {
    branchesInput: {
      id: z.number().int().optional(),
      owner: repositoryNameSchema,
      repositoryName: repositoryNameSchema,
    },
    repositories: (ctx, provider) => giteaRepositories(ctx, provider),
    branches: (ctx, provider, input) =>
      giteaBranches(ctx, provider, input.owner as string, input.repositoryName as string),
  },
  bitbucket: {
    branchesInput: { owner: repositoryNameSchema, repo: repositoryNameSchema },
    repositories: (ctx, provider) => bitbucketRepositories(ctx, provider),
    branches: (ctx, provider, input) =>
      bitbucketBranches(ctx, provider, input.owner as string, input.repo as string),
  },
} satisfies Record<
  GitProviderType,
  {
    branchesInput: z.ZodRawShape;
    repositories: (ctx: ServiceContext, provider: ProviderRecord) => Promise<RepositoryView[]>;
    branches: (
      ctx: ServiceContext,
      provider: ProviderRecord,
      input: Record<string, unknown>,
    ) => Promise<BranchView[]>;
  }
>;

/**
 * The pair every provider router has: the repositories the provider's credentials reach, and the
 * branches of one of them (the provider's id optional there, as in Dokploy: absent is a 404).
 */
export function repositoryProcedures(kind: GitProviderType) {
  const idField = PROVIDER_ID_FIELD[kind];
  const access = REPOSITORY_ACCESS[kind];
  return {
    repositories: query({
      summary: `The repositories the ${PROVIDER_NAMES[kind]} provider's credentials can read`,
      access: "member",
      input: z.object({ [idField]: providerIdInput }),
      output: z.array(repositorySchema),
      handler: async ({ ctx, caller, input }) => {
        const provider = await loadProvider(ctx, caller, kind, (input as Record<string, string>)[idField]);
        return access.repositories(ctx, provider);
      },
    }),
    branches: query({
      summary: `The branches of one repository of the ${PROVIDER_NAMES[kind]} provider`,
      access: "member",
      input: z.object({ ...access.branchesInput, [idField]: providerIdInput.optional() }),
      output: z.array(branchSchema),
      handler: async ({ ctx, caller, input }) => {
        const fields = input as Record<string, unknown>;
        const provider = await loadProvider(ctx, caller, kind, fields[idField] as string | undefined);
        return access.branches(ctx, provider, fields);
      },
    }),
  };
}
