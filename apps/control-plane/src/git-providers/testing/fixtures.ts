/**
 * The four provider stand-ins as the provider tests start them, the platform settings that point
 * at them, and per provider: create's input, its branches query, save<Provider>Provider's input
 * for the repository acme/web on branch "release", and the secrets no answer may show.
 */
import { generateKeyPairSync } from "node:crypto";
import type { RepoFiles } from "@platform/agent/testing/git-server.ts";
import { type StandIn, startStandIn } from "./stand-ins.ts";

export const GITHUB_APP_ID = 424242;
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
export const PRIVATE_PEM = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const PUBLIC_PEM = publicKey.export({ type: "spki", format: "pem" }).toString();
export const WEBHOOK_SECRET = "gh-webhook-secret-123";

export type StandIns = Record<"github" | "gitlab" | "gitea" | "bitbucket", StandIn>;

export async function startStandIns(): Promise<StandIns> {
  return {
    github: await startStandIn({
      kind: "github",
      gitUsername: "x-access-token",
      token: "ghs_installation_token_1",
      githubAppId: GITHUB_APP_ID,
      githubPublicKeyPem: PUBLIC_PEM,
    }),
    gitlab: await startStandIn({
      kind: "gitlab",
      gitUsername: "oauth2",
      token: "glpat-expired",
      gitPassword: "glpat-expired-renewed",
      refreshToken: "gl-refresh-1",
      code: "gl-code",
    }),
    gitea: await startStandIn({
      kind: "gitea",
      gitUsername: "oauth2",
      token: "gitea-token-1",
      refreshToken: "gitea-refresh-1",
      code: "gitea-code",
    }),
    bitbucket: await startStandIn({
      kind: "bitbucket",
      gitUsername: "x-bitbucket-api-token-auth",
      token: "bb-api-token-1",
      email: "dev@example.com",
    }),
  };
}

/** The platform's settings that send GitHub and Bitbucket calls to the stand-ins. */
export function standInEnv(stands: StandIns): Record<string, string> {
  return {
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
    PLATFORM_GITHUB_API_URL: stands.github.baseUrl,
    PLATFORM_GITHUB_URL: stands.github.baseUrl,
    PLATFORM_BITBUCKET_API_URL: `${stands.bitbucket.baseUrl}/2.0`,
    PLATFORM_BITBUCKET_URL: stands.bitbucket.baseUrl,
  };
}

/** Creates acme/web on the stand-in: `files` on main, then a commit on "release"; returns its sha. */
export async function seedRepo(stand: StandIn, files: RepoFiles = {}): Promise<string> {
  await stand.git.createRepo("web", { ...files, "index.html": `${stand.kind} main` });
  return stand.git.commit("web", { "index.html": `${stand.kind} release` }, "release build", "release");
}

export const providerCases = (stands: StandIns) => [
  {
    kind: "github" as const,
    repositories: "github.getGithubRepositories",
    idField: "githubId",
    create: () => ({
      name: "acme app",
      githubAppName: "acme-deployer",
      githubAppId: GITHUB_APP_ID,
      githubInstallationId: "9001",
      githubClientId: "Iv1.abc",
      githubClientSecret: "gh-client-secret",
      githubPrivateKey: PRIVATE_PEM,
      githubWebhookSecret: WEBHOOK_SECRET,
    }),
    branches: (id: string) => ["github.getGithubBranches", { githubId: id, owner: "acme", repo: "web" }],
    save: (id: string) => [
      "application.saveGithubProvider",
      {
        githubId: id,
        owner: "acme",
        repository: "web",
        branch: "release",
        buildPath: "/",
        enableSubmodules: false,
      },
    ],
    secrets: ["gh-client-secret", "BEGIN RSA PRIVATE KEY", WEBHOOK_SECRET],
  },
  {
    kind: "gitlab" as const,
    repositories: "gitlab.getGitlabRepositories",
    idField: "gitlabId",
    create: () => ({
      name: "self-hosted gitlab",
      gitlabUrl: "https://gitlab.example.com",
      gitlabInternalUrl: stands.gitlab.baseUrl,
      applicationId: "gl-oauth-app",
      secret: "gl-oauth-secret",
      redirectUri: "https://platform.example.com/api/gitlab/callback",
      accessToken: "glpat-expired",
      refreshToken: "gl-refresh-1",
      // Expired: the first call refreshes it; only the refreshed token opens the repository.
      expiresAt: Math.floor(Date.now() / 1000) - 10,
      groupName: "acme",
    }),
    branches: (id: string) => [
      "gitlab.getGitlabBranches",
      { gitlabId: id, id: 7, owner: "acme", repo: "web" },
    ],
    save: (id: string) => [
      "application.saveGitlabProvider",
      {
        gitlabId: id,
        gitlabProjectId: 7,
        gitlabOwner: "acme",
        gitlabRepository: "web",
        gitlabPathNamespace: "acme/web",
        gitlabBranch: "release",
        gitlabBuildPath: "/",
        enableSubmodules: false,
      },
    ],
    secrets: ["gl-oauth-secret", "glpat-expired", "gl-refresh-1"],
  },
  {
    kind: "gitea" as const,
    repositories: "gitea.getGiteaRepositories",
    idField: "giteaId",
    create: () => ({
      name: "team gitea",
      giteaUrl: stands.gitea.baseUrl,
      clientId: "gitea-client",
      clientSecret: "gitea-client-secret",
      redirectUri: "https://platform.example.com/api/gitea/callback",
      accessToken: "gitea-token-1",
      refreshToken: "gitea-refresh-1",
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
    }),
    branches: (id: string) => [
      "gitea.getGiteaBranches",
      { giteaId: id, owner: "acme", repositoryName: "web" },
    ],
    save: (id: string) => [
      "application.saveGiteaProvider",
      {
        giteaId: id,
        giteaOwner: "acme",
        giteaRepository: "web",
        giteaBranch: "release",
        giteaBuildPath: "/",
        enableSubmodules: false,
      },
    ],
    secrets: ["gitea-client-secret", "gitea-token-1", "gitea-refresh-1"],
  },
  {
    kind: "bitbucket" as const,
    repositories: "bitbucket.getBitbucketRepositories",
    idField: "bitbucketId",
    create: () => ({
      name: "bitbucket cloud",
      bitbucketEmail: "dev@example.com",
      bitbucketUsername: "dev",
      apiToken: "bb-api-token-1",
      bitbucketWorkspaceName: "acme",
    }),
    branches: (id: string) => [
      "bitbucket.getBitbucketBranches",
      { bitbucketId: id, owner: "acme", repo: "web" },
    ],
    save: (id: string) => [
      "application.saveBitbucketProvider",
      {
        bitbucketId: id,
        bitbucketOwner: "acme",
        bitbucketRepository: "web",
        bitbucketRepositorySlug: "web",
        bitbucketBranch: "release",
        bitbucketBuildPath: "/",
        enableSubmodules: false,
      },
    ],
    secrets: ["bb-api-token-1"],
  },
];
