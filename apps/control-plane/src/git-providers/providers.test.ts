/**
 * Git providers against local stand-ins (testing/stand-ins.ts) of GitHub, GitLab, Gitea and
 * Bitbucket: for each, create → testConnection → branches → save<Provider>Provider → the
 * deployment's source clones the right branch of the private repository with the provider's
 * token (the real `git clone` the agent runs, through its askpass helper); a wrong token fails
 * with a message that carries no secret. The GitHub App webhook: unsigned or wrongly signed is
 * 401 and starts nothing, a ping and a signed push are answered, the push deploys the
 * application of that branch. Removing a provider disconnects its applications.
 */
import { createHmac, generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { cloneRepository } from "@platform/agent/deploy/git.ts";
import { LogStream, SecretMasker } from "@platform/agent/deploy/log-stream.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deploymentSourceOf } from "../deployments/source.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { pullRequestHook } from "../webhooks/previews.ts";
import { type StandIn, startStandIn } from "./testing/stand-ins.ts";

const APP_ID = 424242;
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const PUBLIC_PEM = publicKey.export({ type: "spki", format: "pem" }).toString();
const WEBHOOK_SECRET = "gh-webhook-secret-123";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
const stands = {} as Record<"github" | "gitlab" | "gitea" | "bitbucket", StandIn>;
const directories: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: unknown) => platform.mutateOk(name, input, as());

async function seedRepo(stand: StandIn) {
  await stand.git.createRepo("web", { "index.html": `${stand.kind} main` });
  return stand.git.commit("web", { "index.html": `${stand.kind} release` }, "release build", "release");
}

/** Runs the deployment's source step: the source the pipeline computes, cloned by the agent's git. */
async function cloneFor(applicationId: string) {
  const app = await platform.services.db
    .selectFrom("applications")
    .innerJoin("environments", "environments.environmentId", "applications.environmentId")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .selectAll("applications")
    .select("projects.organizationId")
    .where("applicationId", "=", applicationId)
    .executeTakeFirstOrThrow();
  const source = await deploymentSourceOf(platform.services, app, "local", undefined);
  if (source.kind !== "code" || !source.source.git) throw new Error("not a git source");
  const directory = await mkdtemp(path.join(tmpdir(), "gp-clone-"));
  directories.push(directory);
  const lines: string[] = [];
  const git = source.source.git;
  const log = new LogStream(
    "test",
    (chunk: { data: Uint8Array }) => lines.push(new TextDecoder().decode(chunk.data)),
    new SecretMasker([git.httpPassword]),
  );
  const checkout = path.join(directory, "code");
  const commit = await cloneRepository(git, checkout, log, AbortSignal.timeout(60_000));
  return { source, commit, lines, checkout, git };
}

beforeAll(async () => {
  stands.github = await startStandIn({
    kind: "github",
    gitUsername: "x-access-token",
    token: "ghs_installation_token_1",
    githubAppId: APP_ID,
    githubPublicKeyPem: PUBLIC_PEM,
  });
  stands.gitlab = await startStandIn({
    kind: "gitlab",
    gitUsername: "oauth2",
    token: "glpat-expired",
    gitPassword: "glpat-expired-renewed",
    refreshToken: "gl-refresh-1",
    code: "gl-code",
  });
  stands.gitea = await startStandIn({
    kind: "gitea",
    gitUsername: "oauth2",
    token: "gitea-token-1",
    refreshToken: "gitea-refresh-1",
    code: "gitea-code",
  });
  stands.bitbucket = await startStandIn({
    kind: "bitbucket",
    gitUsername: "x-bitbucket-api-token-auth",
    token: "bb-api-token-1",
    email: "dev@example.com",
  });
  platform = await startTestPlatform({
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
    PLATFORM_GITHUB_API_URL: stands.github.baseUrl,
    PLATFORM_GITHUB_URL: stands.github.baseUrl,
    PLATFORM_BITBUCKET_API_URL: `${stands.bitbucket.baseUrl}/2.0`,
    PLATFORM_BITBUCKET_URL: stands.bitbucket.baseUrl,
  });
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Providers" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  for (const stand of Object.values(stands)) await stand.close();
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

const cases = [
  {
    kind: "github" as const,
    repositories: "github.getGithubRepositories",
    idField: "githubId",
    create: () => ({
      name: "acme app",
      githubAppName: "acme-deployer",
      githubAppId: APP_ID,
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

const providerIds: Record<string, string> = {};
const appIds: Record<string, string> = {};

describe.each(cases)("$kind provider", (c) => {
  it("create → testConnection → branches → save → the source clones the right branch with the token", async () => {
    const releaseSha = await seedRepo(stands[c.kind]);
    const created = await ok(`${c.kind}.create`, c.create());
    const id = created[c.idField] as string;
    providerIds[c.kind] = id;
    const shown =
      JSON.stringify(created) + JSON.stringify(await platform.query("gitProvider.getAll", {}, as()));
    for (const secret of c.secrets) expect(shown).not.toContain(secret);

    expect(await ok(`${c.kind}.testConnection`, { [c.idField]: id })).toBe("Found 1 repositories");
    const repositories = await platform.query(c.repositories, { [c.idField]: id }, as());
    expect(repositories.body).toMatchObject([{ name: "web", url: "acme/web", owner: { username: "acme" } }]);
    const [branchesName, branchesInput] = c.branches(id) as [string, Record<string, unknown>];
    const branches = await platform.query(branchesName, branchesInput, as());
    expect(branches.status).toBe(200);
    expect(branches.body).toContainEqual({ name: "release", commit: { sha: releaseSha } });

    const app = await ok("application.create", { name: `${c.kind} app`, environmentId });
    appIds[c.kind] = app.applicationId;
    const [saveName, saveInput] = c.save(id) as [string, Record<string, unknown>];
    await ok(saveName, { applicationId: app.applicationId, ...saveInput });
    const one = await platform.query("application.one", { applicationId: app.applicationId }, as());
    expect(one.body).toMatchObject({ hasGitProviderAccess: true, unauthorizedProvider: null });

    const { commit, lines, checkout, git } = await cloneFor(app.applicationId);
    expect(commit.commitHash).toBe(releaseSha);
    expect(await readFile(path.join(checkout, "index.html"), "utf8")).toBe(`${c.kind} release`);
    expect(git.url).not.toContain(git.httpPassword!);
    expect(lines.join("")).not.toContain(git.httpPassword!);
    expect(stands[c.kind].git.refusedRequests).toBeGreaterThanOrEqual(0);
  }, 60_000);
});

describe("wrong credentials", () => {
  it("a wrong Bitbucket API token fails the clone with a clear message and no secret", async () => {
    await ok("bitbucket.update", { bitbucketId: providerIds.bitbucket, apiToken: "bb-wrong-token-XYZ" });
    const attempt = await cloneFor(appIds.bitbucket!).then(
      () => null,
      (error: Error) => error,
    );
    expect(attempt?.message).toMatch(/git clone failed/);
    expect(attempt?.message).not.toContain("bb-wrong-token-XYZ");
    // The API refuses it too, as a 400 naming the provider and its answer.
    const test = await platform.mutate(
      "bitbucket.testConnection",
      { bitbucketId: providerIds.bitbucket },
      as(),
    );
    expect(test.status).toBe(400);
    expect(JSON.stringify(test.body)).toContain("Bitbucket answered 401");
    expect(JSON.stringify(test.body)).not.toContain("bb-wrong-token-XYZ");
    await ok("bitbucket.update", { bitbucketId: providerIds.bitbucket, apiToken: "bb-api-token-1" });
  }, 60_000);
});

describe("provider URLs and the outbound guard", () => {
  it("a URL at a refused address is a 400 naming the field, and nothing is stored", async () => {
    const before = await platform.query("gitProvider.getAll", {}, as());
    const refused = await platform.mutate(
      "gitea.create",
      { name: "meta", giteaUrl: "http://169.254.169.254/" },
      as(),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.data.fields).toEqual(["giteaUrl"]);
    const internal = await platform.mutate(
      "gitlab.update",
      { gitlabId: providerIds.gitlab, gitlabInternalUrl: "http://10.9.8.7/" },
      as(),
    );
    expect(internal.status).toBe(400);
    expect(internal.body.error.data.fields).toEqual(["gitlabInternalUrl"]);
    expect((await platform.query("gitProvider.getAll", {}, as())).body).toEqual(before.body);
  });
});

describe("GitHub App webhook", () => {
  const sign = (body: string, secret = WEBHOOK_SECRET) =>
    `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  const post = (body: string, headers: Record<string, string>) =>
    platform.request("/api/github/webhook", { method: "POST", body, headers });
  const deployments = async () =>
    (await platform.services.db.selectFrom("deployments").select("deploymentId").execute()).length;

  it("unsigned, wrongly signed or unknown installation is 401 and starts nothing", async () => {
    const before = await deployments();
    const body = JSON.stringify({
      ref: "refs/heads/release",
      after: "a".repeat(40),
      installation: { id: 9001 },
      repository: { name: "web", owner: { login: "acme" } },
    });
    expect((await post(body, { "x-github-event": "push" })).status).toBe(401);
    expect(
      (await post(body, { "x-github-event": "push", "x-hub-signature-256": sign(body, "wrong") })).status,
    ).toBe(401);
    const other = body.replace("9001", "9002");
    expect((await post(other, { "x-github-event": "push", "x-hub-signature-256": sign(other) })).status).toBe(
      401,
    );
    expect(await deployments()).toBe(before);
  });

  it("a signed ping (found by hook.app_id) is 200", async () => {
    const body = JSON.stringify({ zen: "Keep it logically awesome.", hook: { app_id: APP_ID } });
    const answer = await post(body, { "x-github-event": "ping", "x-hub-signature-256": sign(body) });
    expect(answer.status).toBe(200);
  });

  it("a signed pull_request goes to the preview hook and is acknowledged", async () => {
    const calls = pullRequestHook.calls;
    const body = JSON.stringify({
      action: "opened",
      number: 1,
      installation: { id: 9001 },
      repository: { name: "web", owner: { login: "acme" } },
    });
    const answer = await post(body, { "x-github-event": "pull_request", "x-hub-signature-256": sign(body) });
    expect(answer.status).toBe(200);
    expect(answer.body.message).toBe("ignored: previews not enabled");
    expect(pullRequestHook.calls).toBe(calls + 1);
  });

  it("a signed push of another branch deploys nothing; of the application's branch starts its deployment", async () => {
    const head = await stands.github.git.commit(
      "web",
      { "index.html": "github release 2" },
      "second release",
      "release",
    );
    const payload = (ref: string) =>
      JSON.stringify({
        ref,
        before: "b".repeat(40),
        after: head,
        installation: { id: 9001 },
        repository: { name: "web", owner: { login: "acme" } },
        head_commit: {
          id: head,
          message: "second release",
          added: [],
          modified: ["index.html"],
          removed: [],
        },
        commits: [{ id: head, message: "second release", added: [], modified: ["index.html"], removed: [] }],
      });
    await ok("application.update", { applicationId: appIds.github, autoDeploy: true });
    const other = payload("refs/heads/main");
    const skipped = await post(other, { "x-github-event": "push", "x-hub-signature-256": sign(other) });
    expect(skipped.status).toBe(200);
    expect(skipped.body.deployed).toBe(false);
    const body = payload("refs/heads/release");
    const answer = await post(body, { "x-github-event": "push", "x-hub-signature-256": sign(body) });
    expect(answer.status).toBe(200);
    expect(answer.body.deploymentIds).toHaveLength(1);
    const row = await platform.services.db
      .selectFrom("deployments")
      .selectAll()
      .where("deploymentId", "=", answer.body.deploymentIds[0])
      .executeTakeFirstOrThrow();
    expect(row.applicationId).toBe(appIds.github);
    expect(row.title).toBe(`GitHub push ${head.slice(0, 7)}`);
    await platform.waitForDeployment(row.deploymentId, 120_000).catch(() => {});
  }, 150_000);
});

describe("OAuth callback", () => {
  it("/api/gitea/callback trades the code for tokens; a bad code is a 400 and changes nothing", async () => {
    const bad = await platform.request(`/api/gitea/callback?code=nope&state=${providerIds.gitea}`);
    expect(bad.status).toBe(400);
    const good = await platform.request(`/api/gitea/callback?code=gitea-code&state=${providerIds.gitea}`);
    expect(good.status).toBe(302);
    const one = await platform.query("gitea.one", { giteaId: providerIds.gitea }, as());
    expect(one.body).toMatchObject({ authorized: true });
    expect(one.body.lastAuthenticatedAt).toBeTypeOf("number");
  });
});

describe("gitProvider.remove", () => {
  it("disconnects the provider's applications with a status that says so", async () => {
    const all = (await platform.query("gitProvider.getAll", {}, as())).body as {
      gitProviderId: string;
      providerType: string;
    }[];
    const gitea = all.find((provider) => provider.providerType === "gitea")!;
    await ok("gitProvider.remove", { gitProviderId: gitea.gitProviderId });
    const one = await platform.query("application.one", { applicationId: appIds.gitea }, as());
    expect(one.body).toMatchObject({ giteaId: null, applicationStatus: "error", hasGitProviderAccess: true });
    expect(one.body.applicationStatusMessage).toContain("was removed");
    const deploy = await cloneFor(appIds.gitea!).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(deploy).toMatch(/no Gitea provider/);
  });
});
