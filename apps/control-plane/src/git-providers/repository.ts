/**
 * Git provider rows of an organization (spec 2.12). Each kind's plain fields live in `settings`
 * (JSON), its secrets in one SecretBox-sealed JSON object bound to the row and organization:
 * opened only to call the provider or to clone, never returned. Removing a provider disconnects
 * the applications that used it (their Git fields reset, status error with a message saying so).
 */
import { type SelectQueryBuilder, sql } from "kysely";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import type { Database, GitProvider, GitProviderType, Role } from "../db/schema.ts";

export type Settings = Record<string, string | number | null>;
export type Secrets = Record<string, string>;

/** The kind's id field in applications and in the procedures' inputs. */
export const PROVIDER_ID_FIELD: Record<GitProviderType, "githubId" | "gitlabId" | "bitbucketId" | "giteaId"> =
  {
    github: "githubId",
    gitlab: "gitlabId",
    bitbucket: "bitbucketId",
    gitea: "giteaId",
  };

export const PROVIDER_NAMES: Record<GitProviderType, string> = {
  github: "GitHub",
  gitlab: "GitLab",
  bitbucket: "Bitbucket",
  gitea: "Gitea",
};

/** A provider row with its settings parsed (secrets still sealed). */
export interface ProviderRecord {
  row: GitProvider;
  settings: Settings;
}

const sealContext = (row: { gitProviderId: string; organizationId: string }): SecretContext => ({
  table: "git_providers",
  rowId: row.gitProviderId,
  organizationId: row.organizationId,
});

const record = (row: GitProvider): ProviderRecord => ({
  row,
  settings: JSON.parse(row.settings) as Settings,
});

export function openSecrets(ctx: Pick<ServiceContext, "secrets">, provider: ProviderRecord): Secrets {
  if (!provider.row.secretsSealed) return {};
  return JSON.parse(ctx.secrets.decrypt(provider.row.secretsSealed, sealContext(provider.row))) as Secrets;
}

function sealSecrets(
  ctx: Pick<ServiceContext, "secrets">,
  row: { gitProviderId: string; organizationId: string },
  secrets: Secrets,
): string | null {
  const present = Object.fromEntries(Object.entries(secrets).filter(([, value]) => value !== ""));
  return Object.keys(present).length === 0
    ? null
    : ctx.secrets.encrypt(JSON.stringify(present), sealContext(row));
}

export async function insertProvider(
  ctx: ServiceContext,
  fields: {
    providerType: GitProviderType;
    name: string;
    organizationId: string;
    userId: string;
    settings: Settings;
    secrets: Secrets;
  },
): Promise<ProviderRecord> {
  const gitProviderId = newId();
  const row = await ctx.db
    .insertInto("gitProviders")
    .values({
      gitProviderId,
      providerId: newId(),
      providerType: fields.providerType,
      name: fields.name,
      organizationId: fields.organizationId,
      userId: fields.userId,
      settings: JSON.stringify(fields.settings),
      secretsSealed: sealSecrets(
        ctx,
        { gitProviderId, organizationId: fields.organizationId },
        fields.secrets,
      ),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return record(row);
}

/**
 * Who looks at the providers: a provider not shared with the organization is seen only by its
 * creator and the organization's owners and administrators (gitProvider.toggleShare); a member
 * restricted to some providers (user.assignPermissions accessedGitProviders) sees, of the
 * shared ones, only those listed.
 */
export interface ProviderViewer {
  userId: string;
  role: Role;
}

function visibleTo<Q extends SelectQueryBuilder<Database, "gitProviders", GitProvider>>(
  query: Q,
  viewer: ProviderViewer | undefined,
): Q {
  if (!viewer || viewer.role !== "member") return query;
  return query.where((eb) =>
    eb.or([
      eb("gitProviders.userId", "=", viewer.userId),
      eb.and([
        eb("sharedWithOrganization", "=", true),
        eb.exists(
          eb
            .selectFrom("members")
            .select("members.memberId")
            .where("members.userId", "=", viewer.userId)
            .whereRef("members.organizationId", "=", "gitProviders.organizationId")
            .where((member) =>
              member.or([
                member("members.accessedGitProviders", "is", null),
                sql<boolean>`${sql.ref("gitProviders.gitProviderId")} = any(${sql.ref("members.accessedGitProviders")})`,
              ]),
            ),
        ),
      ]),
    ]),
  ) as Q;
}

/**
 * The organization's provider of `kind` with the kind's id `providerId`, if `viewer` may see it;
 * without a viewer (deployments, webhooks) any of the organization's.
 */
export async function findProvider(
  db: Db,
  organizationId: string,
  kind: GitProviderType,
  providerId: string,
  viewer?: ProviderViewer,
): Promise<ProviderRecord | undefined> {
  const query = db
    .selectFrom("gitProviders")
    .selectAll()
    .where("providerId", "=", providerId)
    .where("providerType", "=", kind)
    .where("organizationId", "=", organizationId);
  const row = await visibleTo(query, viewer).executeTakeFirst();
  return row ? record(row) : undefined;
}

/** Every provider of a kind, of every organization (the webhooks that find theirs by a secret). */
export async function listProvidersAnywhere(db: Db, kind: GitProviderType): Promise<ProviderRecord[]> {
  return (await db.selectFrom("gitProviders").selectAll().where("providerType", "=", kind).execute()).map(
    record,
  );
}

export async function listProviders(
  db: Db,
  organizationId: string,
  options: { kind?: GitProviderType; viewer?: ProviderViewer } = {},
) {
  let query = db.selectFrom("gitProviders").selectAll().where("organizationId", "=", organizationId);
  if (options.kind) query = query.where("providerType", "=", options.kind);
  return (await visibleTo(query, options.viewer).orderBy("createdAt", "desc").execute()).map(record);
}

/** The organization's provider `gitProviderId`, if `viewer` may see it. */
export async function findProviderById(
  db: Db,
  organizationId: string,
  gitProviderId: string,
  viewer: ProviderViewer,
): Promise<GitProvider | undefined> {
  const query = db
    .selectFrom("gitProviders")
    .selectAll()
    .where("gitProviderId", "=", gitProviderId)
    .where("organizationId", "=", organizationId);
  return visibleTo(query, viewer).executeTakeFirst();
}

/** Shares the provider with its organization, or keeps it to its creator (and owners and administrators). */
export async function setProviderShared(
  db: Db,
  gitProviderId: string,
  shared: boolean,
): Promise<GitProvider> {
  return db
    .updateTable("gitProviders")
    .set({ sharedWithOrganization: shared })
    .where("gitProviderId", "=", gitProviderId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** GitHub providers whose settings carry `field` = `value` (installation id, app id). */
export async function findGithubProvidersBy(
  db: Db,
  field: "githubInstallationId" | "githubAppId",
  value: string,
): Promise<ProviderRecord[]> {
  const rows = await db.selectFrom("gitProviders").selectAll().where("providerType", "=", "github").execute();
  return rows.map(record).filter((provider) => String(provider.settings[field] ?? "") === value);
}

/** Writes new settings (merged) and secrets (merged; "" removes one) of a provider. */
export async function updateProvider(
  ctx: Pick<ServiceContext, "secrets" | "db">,
  provider: ProviderRecord,
  patch: { name?: string; settings?: Settings; secrets?: Partial<Secrets> },
): Promise<ProviderRecord> {
  const secrets = { ...openSecrets(ctx, provider) };
  for (const [key, value] of Object.entries(patch.secrets ?? {})) {
    if (value !== undefined) secrets[key] = value;
  }
  const settings = { ...provider.settings, ...patch.settings };
  const row = await ctx.db
    .updateTable("gitProviders")
    .set({
      name: patch.name ?? provider.row.name,
      settings: JSON.stringify(settings),
      secretsSealed: sealSecrets(ctx, provider.row, secrets),
    })
    .where("gitProviderId", "=", provider.row.gitProviderId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return record(row);
}

/**
 * Deletes the organization's provider and disconnects its applications in one transaction: their
 * provider id and repository fields are cleared and their status says the provider was removed.
 * Returns the ids of the applications disconnected, or undefined when there is no such provider.
 */
export async function removeProvider(
  db: Db,
  organizationId: string,
  gitProviderId: string,
): Promise<string[] | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .deleteFrom("gitProviders")
      .where("gitProviderId", "=", gitProviderId)
      .where("organizationId", "=", organizationId)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    const field = PROVIDER_ID_FIELD[row.providerType];
    const cleared = {
      github: { githubId: null, owner: null, repository: null, branch: null },
      gitlab: {
        gitlabId: null,
        gitlabProjectId: null,
        gitlabOwner: null,
        gitlabRepository: null,
        gitlabBranch: null,
        gitlabPathNamespace: null,
      },
      bitbucket: {
        bitbucketId: null,
        bitbucketOwner: null,
        bitbucketRepository: null,
        bitbucketRepositorySlug: null,
        bitbucketBranch: null,
      },
      gitea: { giteaId: null, giteaOwner: null, giteaRepository: null, giteaBranch: null },
    }[row.providerType];
    const apps = await trx
      .updateTable("applications")
      .set({
        ...cleared,
        applicationStatus: "error",
        applicationStatusMessage: `Disconnected: the ${PROVIDER_NAMES[row.providerType]} provider "${row.name}" was removed; choose a source again`,
      })
      .where(field, "=", row.providerId)
      .returning("applicationId")
      .execute();
    return apps.map((app) => app.applicationId);
  });
}
