/**
 * The four provider kinds: their plain fields (stored in `settings`, shown), their secret fields
 * (sealed, write-only), which fields are URLs the outbound guard checks, and the zod schemas of
 * create and update with Dokploy's field names (spec 4.12).
 */
import { z } from "zod";
import type { GitProviderType } from "../db/schema.ts";
import { displayNameSchema } from "../display-name.ts";

const text = (max = 500) => z.string().trim().max(max);
const secret = (max = 4096) => z.string().max(max);
const url = z.string().trim().min(1).max(500);
/** An optional URL: "" or null clears it (Dokploy's forms send "" for an empty one). */
const optionalUrl = z.string().trim().max(500).nullable();
export const providerName = displayNameSchema;
export const providerIdInput = z.string().trim().min(1).max(100);

interface KindDef {
  /** Plain fields and their schemas (all optional on create unless `required`). */
  settings: Record<string, z.ZodType>;
  secrets: Record<string, z.ZodType>;
  required: readonly string[];
  /** URL fields the outbound guard checks at create and update. */
  urlFields: readonly string[];
  defaults: Record<string, string>;
}

export const KINDS: Record<GitProviderType, KindDef> = {
  github: {
    settings: {
      githubAppName: text(100),
      githubAppId: z
        .number()
        .int()
        .min(1)
        .max(2 ** 31),
      githubClientId: text(200),
      githubInstallationId: z
        .string()
        .trim()
        .regex(/^\d{1,20}$/, "must be GitHub's numeric installation id"),
    },
    secrets: {
      githubClientSecret: secret(),
      githubPrivateKey: secret(16_384),
      githubWebhookSecret: secret(),
    },
    required: [],
    urlFields: [],
    defaults: {},
  },
  gitlab: {
    settings: {
      gitlabUrl: url,
      gitlabInternalUrl: optionalUrl,
      // GitLab's OAuth application id (Dokploy's name), not one of our applications.
      applicationId: text(200).meta({ "x-not-record-id": true }),
      redirectUri: text(500),
      groupName: text(500),
      expiresAt: z.number().int().min(0),
    },
    // webhookSecret: the X-Gitlab-Token of the provider-level push webhook (/api/deploy/gitlab).
    secrets: { secret: secret(), accessToken: secret(), refreshToken: secret(), webhookSecret: secret() },
    required: ["gitlabUrl"],
    urlFields: ["gitlabUrl", "gitlabInternalUrl"],
    defaults: { gitlabUrl: "https://gitlab.com" },
  },
  bitbucket: {
    settings: {
      bitbucketUsername: text(100),
      bitbucketEmail: z.string().trim().max(320),
      bitbucketWorkspaceName: text(100),
    },
    secrets: { appPassword: secret(), apiToken: secret() },
    required: [],
    urlFields: [],
    defaults: {},
  },
  gitea: {
    settings: {
      giteaUrl: url,
      giteaInternalUrl: optionalUrl,
      redirectUri: text(500),
      clientId: text(200),
      scopes: text(500),
      expiresAt: z.number().int().min(0),
      giteaUsername: text(100),
      lastAuthenticatedAt: z.number().int().min(0),
    },
    secrets: { clientSecret: secret(), accessToken: secret(), refreshToken: secret() },
    required: ["giteaUrl"],
    urlFields: ["giteaUrl", "giteaInternalUrl"],
    defaults: { scopes: "repo,repo:status,read:user,read:org" },
  },
};

function fieldsOf(kind: GitProviderType, requireRequired: boolean) {
  const def = KINDS[kind];
  const shape: Record<string, z.ZodType> = {};
  for (const [field, schema] of Object.entries({ ...def.settings, ...def.secrets })) {
    shape[field] = requireRequired && def.required.includes(field) ? schema : schema.optional();
  }
  return shape;
}

/** Create input: name plus the kind's fields (gitlab and bitbucket also take Dokploy's authId). */
export function createInput(kind: GitProviderType) {
  const extra = kind === "gitlab" || kind === "bitbucket" ? { authId: z.string().max(100).optional() } : {};
  const shape = fieldsOf(kind, true);
  if (kind === "gitlab") shape.gitlabUrl = url.default("https://gitlab.com");
  return z.object({ name: providerName, ...shape, ...extra });
}

/** Update input: the kind's id, the provider's gitProviderId and name, and any field to change. */
export function updateInput(kind: GitProviderType, idField: string) {
  return z.object({
    [idField]: providerIdInput,
    gitProviderId: providerIdInput.optional(),
    name: providerName.optional(),
    ...fieldsOf(kind, false),
  });
}
