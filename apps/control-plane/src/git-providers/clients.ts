/**
 * One client per provider on its documented REST API, and the credentials a clone of one of its
 * repositories uses:
 * - GitHub App: a JWT (RS256, `iss` = githubAppId, 10 minutes at most) signed with the app's
 *   private key buys an installation token (POST /app/installations/{id}/access_tokens); the
 *   token lists the installation's repositories and branches and clones as `x-access-token`.
 * - GitLab and Gitea: the OAuth access token (Bearer), refreshed through the provider's token
 *   endpoint a minute before `expiresAt`; the API and clones use the internal URL when one is set.
 *   Clones authenticate as `oauth2`.
 * - Bitbucket: HTTP basic with the username and app password, or the e-mail and API token (API
 *   calls) and `x-bitbucket-api-token-auth` (clones).
 */

import { createPrivateKey } from "node:crypto";
import { importPKCS8, SignJWT } from "jose";
import type { ServiceContext } from "../context.ts";
import { badRequest } from "../errors.ts";
import { type ProviderRequest, providerFetch } from "./http.ts";
import { openSecrets, type ProviderRecord, updateProvider } from "./repository.ts";

export interface RepositoryView {
  id: number | string;
  name: string;
  /** The repository's full path (owner/name, group/subgroup/name). */
  url: string;
  owner: { username: string };
  defaultBranch: string | null;
}

export interface BranchView {
  name: string;
  commit: { sha: string };
}

/** What a clone of a provider's repository needs: the URL and the answer to git's prompt. */
export interface CloneCredentials {
  url: string;
  username: string;
  password: string;
}

const REFRESH_MARGIN_SECONDS = 60;
const str = (value: unknown) => (typeof value === "string" ? value : "");
const asArray = (value: unknown, what: string): Record<string, unknown>[] => {
  if (!Array.isArray(value)) throw badRequest(`The provider's answer to ${what} is not a list`);
  return value as Record<string, unknown>[];
};
const obj = (value: unknown) =>
  value && typeof value === "object" ? (value as Record<string, unknown>) : {};
const nowSeconds = (ctx: ServiceContext) => Math.floor(ctx.now().getTime() / 1000);

// ---------------------------------------------------------------- GitHub

export const githubApiBase = (ctx: ServiceContext) => ctx.config.githubApiUrl;

/** The app's JWT: RS256 over {iat, exp, iss}, as GitHub documents for authenticating as an app. */
async function githubAppJwt(ctx: ServiceContext, provider: ProviderRecord): Promise<string> {
  const appId = provider.settings.githubAppId;
  const privateKey = openSecrets(ctx, provider).githubPrivateKey;
  if (!appId || !privateKey) throw badRequest("The GitHub provider has no githubAppId or private key");
  let key: CryptoKey | import("node:crypto").KeyObject;
  try {
    // GitHub hands out PKCS#1 ("BEGIN RSA PRIVATE KEY"); node reads both forms.
    key = privateKey.includes("BEGIN PRIVATE KEY")
      ? await importPKCS8(privateKey, "RS256")
      : createPrivateKey(privateKey);
  } catch {
    throw badRequest("The GitHub App's private key is not a PEM RSA private key", {
      fields: ["githubPrivateKey"],
    });
  }
  const now = nowSeconds(ctx);
  return new SignJWT({})
    .setProtectedHeader({ alg: "RS256" })
    .setIssuedAt(now - 60)
    .setExpirationTime(now + 540)
    .setIssuer(String(appId))
    .sign(key);
}

const installationTokens = new Map<string, { token: string; expiresAt: number }>();

/** An installation token of the provider's GitHub App (cached until a minute before it expires). */
export async function githubInstallationToken(
  ctx: ServiceContext,
  provider: ProviderRecord,
): Promise<string> {
  const installationId = str(provider.settings.githubInstallationId);
  if (!installationId) throw badRequest("The GitHub provider has no githubInstallationId");
  const cacheKey = `${provider.row.gitProviderId}:${provider.row.secretsSealed ?? ""}:${installationId}`;
  const cached = installationTokens.get(cacheKey);
  if (cached && cached.expiresAt - REFRESH_MARGIN_SECONDS > nowSeconds(ctx)) return cached.token;
  const jwt = await githubAppJwt(ctx, provider);
  const answer = await providerFetch(
    ctx,
    provider.row.organizationId,
    "GitHub",
    `${githubApiBase(ctx)}/app/installations/${encodeURIComponent(installationId)}/access_tokens`,
    { method: "POST", headers: { authorization: `Bearer ${jwt}`, accept: "application/vnd.github+json" } },
  );
  const token = str(obj(answer.body).token);
  if (!token) throw badRequest("GitHub answered no installation token");
  const expiresAt = Date.parse(str(obj(answer.body).expires_at)) / 1000 || nowSeconds(ctx) + 3000;
  installationTokens.set(cacheKey, { token, expiresAt });
  return token;
}

async function githubGet(ctx: ServiceContext, provider: ProviderRecord, path: string) {
  const token = await githubInstallationToken(ctx, provider);
  return providerFetch(ctx, provider.row.organizationId, "GitHub", `${githubApiBase(ctx)}${path}`, {
    headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json" },
  });
}

export async function githubRepositories(
  ctx: ServiceContext,
  provider: ProviderRecord,
): Promise<RepositoryView[]> {
  const answer = await githubGet(ctx, provider, "/installation/repositories?per_page=100");
  return asArray(obj(answer.body).repositories, "the repository list").map((repo) => ({
    id: Number(repo.id),
    name: str(repo.name),
    url: str(repo.full_name),
    owner: { username: str(obj(repo.owner).login) },
    defaultBranch: str(repo.default_branch) || null,
  }));
}

export async function githubBranches(
  ctx: ServiceContext,
  provider: ProviderRecord,
  owner: string,
  repo: string,
): Promise<BranchView[]> {
  const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/branches?per_page=100`;
  const answer = await githubGet(ctx, provider, path);
  return asArray(answer.body, "the branch list").map((branch) => ({
    name: str(branch.name),
    commit: { sha: str(obj(branch.commit).sha) },
  }));
}

// ---------------------------------------------------------------- GitLab and Gitea (OAuth)

type OAuthKind = "gitlab" | "gitea";

/** Where the platform reaches the provider: the internal URL when set, else the public one. */
export function oauthApiBase(provider: ProviderRecord): string {
  const kind = provider.row.providerType as OAuthKind;
  const internal = str(provider.settings[kind === "gitlab" ? "gitlabInternalUrl" : "giteaInternalUrl"]);
  const external = str(provider.settings[kind === "gitlab" ? "gitlabUrl" : "giteaUrl"]);
  return (internal || external).replace(/\/+$/, "");
}

const OAUTH_TOKEN_PATH: Record<OAuthKind, string> = {
  gitlab: "/oauth/token",
  gitea: "/login/oauth/access_token",
};
const OAUTH_NAMES: Record<OAuthKind, string> = { gitlab: "GitLab", gitea: "Gitea" };

/** The OAuth application's public part: GitLab's applicationId, Gitea's clientId, and the redirect URI. */
function oauthApplication(provider: ProviderRecord) {
  const gitlab = provider.row.providerType === "gitlab";
  return {
    clientIdField: gitlab ? "applicationId" : "clientId",
    clientId: str(provider.settings[gitlab ? "applicationId" : "clientId"]),
    redirectUri: str(provider.settings.redirectUri),
  };
}

/** The OAuth client of a provider: GitLab's applicationId/secret, Gitea's clientId/clientSecret. */
function oauthClient(ctx: ServiceContext, provider: ProviderRecord) {
  const secrets = openSecrets(ctx, provider);
  const gitlab = provider.row.providerType === "gitlab";
  return {
    ...oauthApplication(provider),
    clientSecret: gitlab ? (secrets.secret ?? "") : (secrets.clientSecret ?? ""),
    secrets,
  };
}

const OAUTH_AUTHORIZE_PATH: Record<OAuthKind, string> = {
  gitlab: "/oauth/authorize",
  gitea: "/login/oauth/authorize",
};
/** GitLab's scopes are fixed (the ones Dokploy asks for); Gitea's are the provider's `scopes`. */
const GITLAB_SCOPES = "api read_user read_repository";

/**
 * The provider's authorization page at its public URL (the browser goes there), without its
 * `state` yet; a provider without a URL, OAuth application or redirect URI has none (400).
 */
export function oauthAuthorizePage(provider: ProviderRecord): URL {
  const kind = provider.row.providerType as OAuthKind;
  const urlField = kind === "gitlab" ? "gitlabUrl" : "giteaUrl";
  const { clientIdField, clientId, redirectUri } = oauthApplication(provider);
  const publicUrl = str(provider.settings[urlField]).replace(/\/+$/, "");
  const missing = !publicUrl ? urlField : !clientId ? clientIdField : !redirectUri ? "redirectUri" : null;
  if (missing) {
    throw badRequest(
      `The ${OAUTH_NAMES[kind]} provider has no ${missing}: set its OAuth application before authorizing`,
    );
  }
  const page = new URL(`${publicUrl}${OAUTH_AUTHORIZE_PATH[kind]}`);
  page.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    scope: kind === "gitlab" ? GITLAB_SCOPES : str(provider.settings.scopes),
  }).toString();
  return page;
}

/** Stores what a token endpoint answered: access and refresh tokens, and when the access token expires. */
async function storeTokens(ctx: ServiceContext, provider: ProviderRecord, body: unknown) {
  const answer = obj(body);
  const accessToken = str(answer.access_token);
  if (!accessToken)
    throw badRequest(`${OAUTH_NAMES[provider.row.providerType as OAuthKind]} answered no access token`);
  const issuedAt = typeof answer.created_at === "number" ? answer.created_at : nowSeconds(ctx);
  const expiresIn = typeof answer.expires_in === "number" ? answer.expires_in : null;
  return updateProvider(ctx, provider, {
    settings: {
      expiresAt: expiresIn === null ? null : issuedAt + expiresIn,
      ...(provider.row.providerType === "gitea" ? { lastAuthenticatedAt: nowSeconds(ctx) } : {}),
    },
    secrets: { accessToken, refreshToken: str(answer.refresh_token) || undefined },
  });
}

/** Completes the OAuth flow: trades the authorization code for tokens (the callbacks). */
export async function exchangeOAuthCode(ctx: ServiceContext, provider: ProviderRecord, code: string) {
  const kind = provider.row.providerType as OAuthKind;
  const client = oauthClient(ctx, provider);
  const fields = {
    grant_type: "authorization_code",
    code,
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: client.redirectUri,
  };
  const answer = await providerFetch(
    ctx,
    provider.row.organizationId,
    OAUTH_NAMES[kind],
    `${oauthApiBase(provider)}${OAUTH_TOKEN_PATH[kind]}`,
    kind === "gitlab" ? { form: fields } : { json: fields },
  );
  return storeTokens(ctx, provider, answer.body);
}

/**
 * A valid access token of a GitLab or Gitea provider: the stored one, or, from a minute before
 * `expiresAt`, a new one bought with the refresh token (and stored with its new expiry).
 */
export async function oauthAccessToken(ctx: ServiceContext, provider: ProviderRecord): Promise<string> {
  const kind = provider.row.providerType as OAuthKind;
  const client = oauthClient(ctx, provider);
  const accessToken = client.secrets.accessToken;
  if (!accessToken) {
    throw badRequest(
      `The ${OAUTH_NAMES[kind]} provider is not authorized yet: complete its OAuth flow first`,
    );
  }
  const expiresAt = typeof provider.settings.expiresAt === "number" ? provider.settings.expiresAt : null;
  if (expiresAt === null || expiresAt - REFRESH_MARGIN_SECONDS > nowSeconds(ctx)) return accessToken;
  if (!client.secrets.refreshToken) {
    throw badRequest(
      `The ${OAUTH_NAMES[kind]} access token expired and there is no refresh token: authorize again`,
    );
  }
  const fields = {
    grant_type: "refresh_token",
    refresh_token: client.secrets.refreshToken,
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: client.redirectUri,
  };
  const answer = await providerFetch(
    ctx,
    provider.row.organizationId,
    OAUTH_NAMES[kind],
    `${oauthApiBase(provider)}${OAUTH_TOKEN_PATH[kind]}`,
    kind === "gitlab" ? { form: fields } : { json: fields },
  );
  const stored = await storeTokens(ctx, provider, answer.body);
  return openSecrets(ctx, stored).accessToken ?? "";
}

async function oauthGet(ctx: ServiceContext, provider: ProviderRecord, path: string) {
  const token = await oauthAccessToken(ctx, provider);
  const kind = provider.row.providerType as OAuthKind;
  return providerFetch(
    ctx,
    provider.row.organizationId,
    OAUTH_NAMES[kind],
    `${oauthApiBase(provider)}${path}`,
    {
      headers: { authorization: `Bearer ${token}` },
    },
  );
}

/** GitLab projects the token is a member of; with groupName, only those of its groups (comma-separated). */
export async function gitlabRepositories(
  ctx: ServiceContext,
  provider: ProviderRecord,
  groupName = str(provider.settings.groupName),
): Promise<RepositoryView[]> {
  const answer = await oauthGet(ctx, provider, "/api/v4/projects?membership=true&owned=false&per_page=100");
  const groups = groupName
    .split(",")
    .map((group) => group.trim().toLowerCase())
    .filter(Boolean);
  return asArray(answer.body, "the project list")
    .map((project) => ({
      id: Number(project.id),
      name: str(project.name),
      url: str(project.path_with_namespace),
      owner: { username: str(obj(project.namespace).path) },
      defaultBranch: str(project.default_branch) || null,
      namespace: str(obj(project.namespace).full_path).toLowerCase(),
    }))
    .filter(
      (project) =>
        groups.length === 0 ||
        groups.some((group) => project.namespace === group || project.namespace.startsWith(`${group}/`)),
    )
    .map(({ namespace: _namespace, ...project }) => project);
}

export async function gitlabBranches(
  ctx: ServiceContext,
  provider: ProviderRecord,
  projectId: number,
): Promise<BranchView[]> {
  const answer = await oauthGet(
    ctx,
    provider,
    `/api/v4/projects/${projectId}/repository/branches?per_page=100`,
  );
  return asArray(answer.body, "the branch list").map((branch) => ({
    name: str(branch.name),
    commit: { sha: str(obj(branch.commit).id) },
  }));
}

export async function giteaRepositories(
  ctx: ServiceContext,
  provider: ProviderRecord,
): Promise<RepositoryView[]> {
  const answer = await oauthGet(ctx, provider, "/api/v1/user/repos?limit=50");
  return asArray(answer.body, "the repository list").map((repo) => ({
    id: Number(repo.id),
    name: str(repo.name),
    url: str(repo.full_name),
    owner: { username: str(obj(repo.owner).login) },
    defaultBranch: str(repo.default_branch) || null,
  }));
}

export async function giteaBranches(
  ctx: ServiceContext,
  provider: ProviderRecord,
  owner: string,
  repo: string,
): Promise<BranchView[]> {
  const path = `/api/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/branches`;
  const answer = await oauthGet(ctx, provider, path);
  return asArray(answer.body, "the branch list").map((branch) => ({
    name: str(branch.name),
    commit: { sha: str(obj(branch.commit).id) },
  }));
}

// ---------------------------------------------------------------- Bitbucket

/** Basic credentials for Bitbucket's API: username and app password, or e-mail and API token. */
function bitbucketApiAuth(
  ctx: ServiceContext,
  provider: ProviderRecord,
  override: Partial<Record<string, string>> = {},
) {
  const secrets = openSecrets(ctx, provider);
  const apiToken = override.apiToken ?? secrets.apiToken;
  const appPassword = override.appPassword ?? secrets.appPassword;
  const email = override.bitbucketEmail ?? str(provider.settings.bitbucketEmail);
  const username = override.bitbucketUsername ?? str(provider.settings.bitbucketUsername);
  if (apiToken && email) return `Basic ${Buffer.from(`${email}:${apiToken}`).toString("base64")}`;
  if (appPassword && username) return `Basic ${Buffer.from(`${username}:${appPassword}`).toString("base64")}`;
  throw badRequest(
    "The Bitbucket provider needs bitbucketEmail and apiToken, or bitbucketUsername and appPassword",
  );
}

export async function bitbucketRepositories(
  ctx: ServiceContext,
  provider: ProviderRecord,
  override: Partial<Record<string, string>> = {},
): Promise<RepositoryView[]> {
  const workspace =
    override.workspaceName ??
    (str(provider.settings.bitbucketWorkspaceName) || str(provider.settings.bitbucketUsername));
  if (!workspace) throw badRequest("The Bitbucket provider has no bitbucketWorkspaceName");
  const answer = await providerFetch(
    ctx,
    provider.row.organizationId,
    "Bitbucket",
    `${ctx.config.bitbucketApiUrl}/repositories/${encodeURIComponent(workspace)}?pagelen=100`,
    { headers: { authorization: bitbucketApiAuth(ctx, provider, override) } },
  );
  return asArray(obj(answer.body).values, "the repository list").map((repo) => ({
    id: str(repo.uuid) || str(repo.slug),
    name: str(repo.name),
    url: str(repo.full_name),
    owner: { username: str(obj(repo.workspace).slug) || workspace },
    defaultBranch: str(obj(repo.mainbranch).name) || null,
  }));
}

export async function bitbucketBranches(
  ctx: ServiceContext,
  provider: ProviderRecord,
  owner: string,
  repo: string,
): Promise<BranchView[]> {
  const path = `/repositories/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/refs/branches?pagelen=100`;
  const answer = await providerFetch(
    ctx,
    provider.row.organizationId,
    "Bitbucket",
    `${ctx.config.bitbucketApiUrl}${path}`,
    { headers: { authorization: bitbucketApiAuth(ctx, provider) } },
  );
  return asArray(obj(answer.body).values, "the branch list").map((branch) => ({
    name: str(branch.name),
    commit: { sha: str(obj(branch.target).hash) },
  }));
}

// ---------------------------------------------------------------- clones

/** The clone URL and credentials of `repositoryPath` (owner/name, group/sub/name) on the provider. */
export async function cloneCredentials(
  ctx: ServiceContext,
  provider: ProviderRecord,
  repositoryPath: string,
): Promise<CloneCredentials> {
  switch (provider.row.providerType) {
    case "github":
      return {
        url: `${ctx.config.githubUrl}/${repositoryPath}.git`,
        username: "x-access-token",
        password: await githubInstallationToken(ctx, provider),
      };
    case "gitlab":
    case "gitea":
      return {
        url: `${oauthApiBase(provider)}/${repositoryPath}.git`,
        username: "oauth2",
        password: await oauthAccessToken(ctx, provider),
      };
    case "bitbucket": {
      const secrets = openSecrets(ctx, provider);
      const url = `${ctx.config.bitbucketUrl}/${repositoryPath}.git`;
      if (secrets.apiToken)
        return { url, username: "x-bitbucket-api-token-auth", password: secrets.apiToken };
      if (secrets.appPassword && provider.settings.bitbucketUsername) {
        return { url, username: str(provider.settings.bitbucketUsername), password: secrets.appPassword };
      }
      throw badRequest("The Bitbucket provider has neither an API token nor an app password");
    }
  }
}

// ---------------------------------------------------------------- any call

/**
 * One call to the provider's REST API with its credentials: `path` below the API base (GitHub's
 * API URL, GitLab's and Gitea's host with /api/v4 or /api/v1 in `path`, Bitbucket's /2.0).
 */
export async function providerApiCall(
  ctx: ServiceContext,
  provider: ProviderRecord,
  path: string,
  request: ProviderRequest = {},
) {
  const kind = provider.row.providerType;
  let base: string;
  let authorization: string;
  switch (kind) {
    case "github":
      base = githubApiBase(ctx);
      authorization = `Bearer ${await githubInstallationToken(ctx, provider)}`;
      break;
    case "gitlab":
    case "gitea":
      base = oauthApiBase(provider);
      authorization = `Bearer ${await oauthAccessToken(ctx, provider)}`;
      break;
    case "bitbucket":
      base = ctx.config.bitbucketApiUrl;
      authorization = bitbucketApiAuth(ctx, provider);
      break;
  }
  const names = { github: "GitHub", gitlab: "GitLab", gitea: "Gitea", bitbucket: "Bitbucket" } as const;
  return providerFetch(ctx, provider.row.organizationId, names[kind], `${base}${path}`, {
    ...request,
    headers: { authorization, ...request.headers },
  });
}
