/**
 * Git providers against local stand-ins (testing/stand-ins.ts) of GitHub, GitLab, Gitea and
 * Bitbucket: for each, create → testConnection → branches → save<Provider>Provider → the
 * deployment's source clones the right branch of the private repository with the provider's
 * token (the real `git clone` the agent runs, through its askpass helper); a wrong token fails
 * with a message that carries no secret. The GitHub App webhook: unsigned or wrongly signed is
 * 401 and starts nothing, a ping and a signed push are answered, the push deploys the
 * application of that branch. Removing a provider disconnects its applications.
 */
import { createHmac } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { cloneRepository } from "@platform/agent/deploy/git.ts";
import { LogStream, SecretMasker } from "@platform/agent/deploy/log-stream.ts";
import { asReceived } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deploymentSourceOf } from "../applications/source.ts";
import { sha256Hex } from "../crypto/ids.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { pullRequestHook } from "../webhooks/previews.ts";
import { bitbucketPush, giteaPush, gitlabPush } from "../webhooks/samples.ts";
import {
  GITHUB_APP_ID as APP_ID,
  providerCases,
  type StandIns,
  seedRepo,
  standInEnv,
  startStandIns,
  WEBHOOK_SECRET,
} from "./testing/fixtures.ts";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
let stands: StandIns;
let cases: ReturnType<typeof providerCases>;
const directories: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: unknown) => platform.mutateOk(name, input, as());

/** Runs the deployment's source step: the source the pipeline computes, cloned by the agent's git. */
async function cloneFor(applicationId: string) {
  const app = await platform.ctx.db
    .selectFrom("applications")
    .innerJoin("environments", "environments.environmentId", "applications.environmentId")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .selectAll("applications")
    .select("projects.organizationId")
    .where("applicationId", "=", applicationId)
    .executeTakeFirstOrThrow();
  const source = await deploymentSourceOf(platform.ctx, app, "local", undefined);
  if (source.kind !== "code" || !source.source.git) throw new Error("not a git source");
  const directory = await mkdtemp(path.join(tmpdir(), "gp-clone-"));
  directories.push(directory);
  const lines: string[] = [];
  const git = asReceived("GitSource", source.source.git);
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
  stands = await startStandIns();
  cases = providerCases(stands);
  platform = await startTestPlatform(standInEnv(stands));
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Providers" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  for (const stand of Object.values(stands)) await stand.close();
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

const providerIds: Record<string, string> = {};
const appIds: Record<string, string> = {};

describe.each(["github", "gitlab", "gitea", "bitbucket"] as const)("%s provider", (kind) => {
  it("create → testConnection → branches → save → the source clones the right branch with the token", async () => {
    const c = cases.find((entry) => entry.kind === kind)!;
    const releaseSha = await seedRepo(stands[c.kind]);
    const created = await ok(`${c.kind}.create`, c.create());
    const id = created[c.idField] as string;
    providerIds[c.kind] = id;
    const shown =
      JSON.stringify(created) + JSON.stringify(await platform.query("gitProvider.getAll", {}, as()));
    for (const secret of c.secrets) expect(shown).not.toContain(secret);

    expect(await ok(`${c.kind}.testConnection`, { [c.idField]: id })).toBe("Found 1 repositories");
    if (kind === "gitea") {
      // organizationName counts that owner's repositories only (issue 27: no field ignored).
      expect(await ok("gitea.testConnection", { giteaId: id, organizationName: "ACME" })).toBe(
        "Found 1 repositories",
      );
      expect(await ok("gitea.testConnection", { giteaId: id, organizationName: "other" })).toBe(
        "Found 0 repositories",
      );
    }
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

describe("gitProvider.allForPermissions", () => {
  it("lists every provider of the organization by id, name and kind to administrators only", async () => {
    const listed = await platform.query("gitProvider.allForPermissions", {}, as());
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const all = (await platform.query("gitProvider.getAll", {}, as())).body as { gitProviderId: string }[];
    expect(listed.body.map((provider: { gitProviderId: string }) => provider.gitProviderId)).toEqual(
      all.map((provider) => provider.gitProviderId),
    );
    expect(listed.body.map((provider: { providerType: string }) => provider.providerType).sort()).toEqual(
      expect.arrayContaining(["bitbucket", "gitea", "github", "gitlab"]),
    );
    for (const provider of listed.body)
      expect(Object.keys(provider).sort()).toEqual(["gitProviderId", "name", "providerType"]);
    const member = await platform.addMember(owner, "member");
    expect((await platform.query("gitProvider.allForPermissions", {}, { token: member.token })).status).toBe(
      403,
    );
    const stranger = await createUserDirectly(platform, { email: "providers-stranger@example.com" });
    expect(
      (await platform.query("gitProvider.allForPermissions", {}, { token: stranger.token })).body,
    ).toEqual([]);
  });
});

describe("gitProvider.toggleShare", () => {
  it("an unshared provider is seen and used only by its creator and administrators; only the creator toggles it", async () => {
    const grant = { canAccessToGitProviders: true, canCreateServices: true };
    const creator = await platform.addMember(owner, "member");
    const other = await platform.addMember(owner, "member");
    for (const member of [creator, other])
      await ok("user.assignPermissions", { id: member.user.userId, ...grant });
    const gitea = cases.find((c) => c.kind === "gitea")!;
    const created = await platform.mutateOk("gitea.create", gitea.create(), { token: creator.token });
    const { gitProviderId, giteaId } = created;
    const sees = async (session: Session) =>
      (
        (await platform.query("gitProvider.getAll", {}, { token: session.token })).body as {
          gitProviderId: string;
        }[]
      )
        .map((provider) => provider.gitProviderId)
        .includes(gitProviderId);
    const toggle = (session: Session, input: Record<string, unknown>) =>
      platform.mutate("gitProvider.toggleShare", { gitProviderId, ...input }, { token: session.token });

    // Shared by default, as every provider was the organization's: the other member sees it but may not toggle it.
    expect(await sees(other)).toBe(true);
    expect((await toggle(other, { sharedWithOrganization: false })).status).toBe(403);
    expect((await toggle(owner, { sharedWithOrganization: false })).status).toBe(403);
    const bad = await toggle(creator, { sharedWithOrganization: "no" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("sharedWithOrganization");
    expect(await sees(other)).toBe(true);

    const unshared = await toggle(creator, { sharedWithOrganization: false });
    expect(unshared.status, JSON.stringify(unshared.body)).toBe(200);
    expect(unshared.body).toMatchObject({
      gitProviderId,
      sharedWithOrganization: false,
      userId: creator.user.userId,
    });
    expect(await sees(creator)).toBe(true);
    expect(await sees(owner)).toBe(true);
    expect(await sees(other)).toBe(false);
    expect((await platform.query("gitea.one", { giteaId }, { token: other.token })).status).toBe(404);
    expect((await toggle(other, { sharedWithOrganization: true })).status).toBe(404);
    expect(
      (await platform.mutate("gitProvider.remove", { gitProviderId }, { token: other.token })).status,
    ).toBe(404);
    const app = await platform.mutateOk(
      "application.create",
      { name: "share probe", environmentId },
      { token: other.token },
    );
    const [saveName, saveInput] = gitea.save(giteaId) as [string, Record<string, unknown>];
    const saved = await platform.mutate(
      saveName,
      { ...saveInput, applicationId: app.applicationId },
      { token: other.token },
    );
    expect(saved.status).toBe(404);
    const stranger = await createUserDirectly(platform, { email: "share-stranger@example.com" });
    expect(
      (
        await platform.mutate(
          "gitProvider.toggleShare",
          { gitProviderId, sharedWithOrganization: true },
          { token: stranger.token },
        )
      ).status,
    ).toBe(404);

    await toggle(creator, { sharedWithOrganization: true });
    expect(await sees(other)).toBe(true);
    const savedAgain = await platform.mutate(
      saveName,
      { ...saveInput, applicationId: app.applicationId },
      { token: other.token },
    );
    expect(savedAgain.status, JSON.stringify(savedAgain.body)).toBe(200);
    // Its creator removes it: gitProvider.remove's test below takes the organization's newest Gitea provider.
    expect(
      (await platform.mutate("gitProvider.remove", { gitProviderId }, { token: creator.token })).status,
    ).toBe(200);
  });
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

describe("Bitbucket's username and app password", () => {
  it("create, update and testConnection log in with bitbucketUsername and appPassword, in workspaceName", async () => {
    // The stand-in takes Basic <e-mail>:<token>, which is also what a username and app password send.
    const bitbucket = cases.find((c) => c.kind === "bitbucket")!;
    const { bitbucketEmail: username, apiToken: password } = bitbucket.create() as Record<string, string>;
    const created = await ok("bitbucket.create", {
      name: "app password",
      bitbucketUsername: username,
      appPassword: password,
      bitbucketWorkspaceName: "acme",
    });
    const byId = { bitbucketId: created.bitbucketId };
    expect(await ok("bitbucket.testConnection", byId)).toBe("Found 1 repositories");
    await ok("bitbucket.update", { ...byId, appPassword: "wrong-app-password" });
    const refused = await platform.mutate("bitbucket.testConnection", byId, as());
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("Bitbucket answered 401");
    // testConnection's own fields stand in for the stored ones, the stored password aside.
    const overridden = { ...byId, bitbucketUsername: username, appPassword: password };
    expect(await ok("bitbucket.testConnection", { ...overridden, workspaceName: "acme" })).toBe(
      "Found 1 repositories",
    );
    const elsewhere = await platform.mutate(
      "bitbucket.testConnection",
      { ...overridden, workspaceName: "elsewhere" },
      as(),
    );
    expect(elsewhere.status).toBe(400);
    await ok("gitProvider.remove", { gitProviderId: created.gitProviderId });
  });
});

describe("authId (Dokploy's creator id)", () => {
  it("is the caller's own id or a 400 naming it, at gitlab.create and bitbucket.create", async () => {
    const inputs = {
      gitlab: { name: "mine", gitlabUrl: stands.gitlab.baseUrl, accessToken: "glpat-x" },
      bitbucket: {
        name: "mine",
        bitbucketEmail: "dev@example.com",
        apiToken: "t",
        bitbucketWorkspaceName: "acme",
      },
    };
    for (const [kind, input] of Object.entries(inputs)) {
      const other = await platform.mutate(`${kind}.create`, { ...input, authId: "someone-else" }, as());
      expect(other.status, kind).toBe(400);
      expect(other.body.error.data.fields, kind).toEqual(["authId"]);
      const own = await ok(`${kind}.create`, { ...input, authId: owner.user.userId });
      await ok("gitProvider.remove", { gitProviderId: own.gitProviderId });
    }
  });
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

  it('an internal URL is cleared by "" as by null', async () => {
    const internalUrl = async () =>
      (await platform.query("gitea.one", { giteaId: providerIds.gitea }, as())).body.giteaInternalUrl ?? null;
    const set = (giteaInternalUrl: string | null) =>
      ok("gitea.update", { giteaId: providerIds.gitea, giteaInternalUrl });
    try {
      await set("http://127.0.0.1:9/");
      expect(await internalUrl()).toBe("http://127.0.0.1:9");
      await set("");
      expect(await internalUrl()).toBeNull();
      await set("http://127.0.0.1:9/");
      await set(null);
      expect(await internalUrl()).toBeNull();
    } finally {
      // The OAuth tests below reach the stand-in by its public URL.
      await set(null);
    }
  });

  it('an absent secret keeps the stored one, "" clears it', async () => {
    const authorized = async () =>
      (await platform.query("gitea.one", { giteaId: providerIds.gitea }, as())).body.authorized;
    try {
      await ok("gitea.update", { giteaId: providerIds.gitea, name: "team gitea" });
      expect(await authorized()).toBe(true);
      await ok("gitea.update", { giteaId: providerIds.gitea, accessToken: "" });
      expect(await authorized()).toBe(false);
    } finally {
      await ok("gitea.update", { giteaId: providerIds.gitea, accessToken: "gitea-token-1" });
    }
    expect(await authorized()).toBe(true);
  });
});

describe("GitHub App webhook", () => {
  const sign = (body: string, secret = WEBHOOK_SECRET) =>
    `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  const post = (body: string, headers: Record<string, string>) =>
    platform.request("/api/github/webhook", { method: "POST", body, headers });
  const deployments = async () =>
    (await platform.ctx.db.selectFrom("deployments").select("deploymentId").execute()).length;

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
    const row = await platform.ctx.db
      .selectFrom("deployments")
      .selectAll()
      .where("deploymentId", "=", answer.body.deploymentIds[0])
      .executeTakeFirstOrThrow();
    expect(row.applicationId).toBe(appIds.github);
    expect(row.title).toBe(`GitHub push ${head.slice(0, 7)}`);
    await platform.waitForDeployment(row.deploymentId, 120_000).catch(() => {});
  }, 150_000);
});

describe("push webhooks of GitLab, Gitea and Bitbucket", () => {
  const hmac = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex");
  const deploymentsOf = async (applicationId: string) =>
    (
      await platform.ctx.db
        .selectFrom("deployments")
        .select("deploymentId")
        .where("applicationId", "=", applicationId)
        .execute()
    ).length;
  const finish = (deploymentId: string) => platform.waitForDeployment(deploymentId, 120_000).catch(() => {});
  const commits = [{ message: "release", modified: ["index.html"] }];

  it("/api/deploy/gitlab finds the provider by X-Gitlab-Token: missing or unknown is 401 and starts nothing; the right one deploys the project's branch", async () => {
    await ok("gitlab.update", { gitlabId: providerIds.gitlab, webhookSecret: "gl-hook-secret" });
    await ok("application.update", { applicationId: appIds.gitlab, autoDeploy: true });
    const shown = await platform.query("gitlab.one", { gitlabId: providerIds.gitlab }, as());
    expect(JSON.stringify(shown.body)).not.toContain("gl-hook-secret");
    const body = (ref: string) =>
      JSON.stringify({ ...gitlabPush(ref, commits), project: { id: 7, path_with_namespace: "acme/web" } });
    const post = (payload: string, headers: Record<string, string>) =>
      platform.request("/api/deploy/gitlab", {
        method: "POST",
        body: payload,
        headers: { "x-gitlab-event": "Push Hook", ...headers },
      });
    const before = await deploymentsOf(appIds.gitlab!);
    expect((await post(body("refs/heads/release"), {})).status).toBe(401);
    expect((await post(body("refs/heads/release"), { "x-gitlab-token": "gl-other" })).status).toBe(401);
    expect(await deploymentsOf(appIds.gitlab!)).toBe(before);

    const other = await post(body("refs/heads/main"), { "x-gitlab-token": "gl-hook-secret" });
    expect(other.body).toMatchObject({ deployed: false });
    const merge = await platform.request("/api/deploy/gitlab", {
      method: "POST",
      body: JSON.stringify({ object_kind: "merge_request", project: { path_with_namespace: "acme/web" } }),
      headers: { "x-gitlab-event": "Merge Request Hook", "x-gitlab-token": "gl-hook-secret" },
    });
    expect(merge.body.message).toBe("ignored: previews not enabled");
    const answer = await post(body("refs/heads/release"), { "x-gitlab-token": "gl-hook-secret" });
    expect(answer.status).toBe(200);
    expect(answer.body.deploymentIds).toHaveLength(1);
    expect(await deploymentsOf(appIds.gitlab!)).toBe(before + 1);
    await finish(answer.body.deploymentIds[0]);
  }, 150_000);

  const signed = [
    {
      kind: "gitlab" as const,
      body: (ref: string) => JSON.stringify(gitlabPush(ref, commits)),
      sign: (secret: string) => ({ "x-gitlab-token": secret }),
    },
    {
      kind: "gitea" as const,
      body: (ref: string) => JSON.stringify(giteaPush(ref, commits)),
      sign: (secret: string, body: string) => ({ "x-gitea-signature": hmac(secret, body) }),
    },
    {
      kind: "bitbucket" as const,
      body: (ref: string) => JSON.stringify(bitbucketPush(ref, "release")),
      sign: (secret: string, body: string) => ({ "x-hub-signature": `sha256=${hmac(secret, body)}` }),
    },
  ];
  it.each(signed)(
    "$kind: a signed push to the application's webhook deploys its provider branch; unsigned or wrongly signed is 401",
    async ({ kind, body, sign }) => {
      const applicationId = appIds[kind]!;
      await ok("application.update", {
        applicationId,
        autoDeploy: true,
        webhookSecret: `${kind}-app-secret`,
      });
      const { refreshToken } = (await platform.query("application.one", { applicationId }, as())).body;
      const post = (payload: string, headers: Record<string, string>) =>
        platform.request(`/api/deploy/${kind}/${applicationId}?refreshToken=${refreshToken}`, {
          method: "POST",
          body: payload,
          headers: {
            "x-gitlab-event": "Push Hook",
            "x-gitea-event": "push",
            "x-event-key": "repo:push",
            ...headers,
          },
        });
      const release = body("refs/heads/release");
      const before = await deploymentsOf(applicationId);
      expect((await post(release, {})).status).toBe(401);
      expect((await post(release, sign("wrong-secret", release))).status).toBe(401);
      expect(await deploymentsOf(applicationId)).toBe(before);
      const main = body("refs/heads/main");
      expect((await post(main, sign(`${kind}-app-secret`, main))).body).toMatchObject({ deployed: false });
      const answer = await post(release, sign(`${kind}-app-secret`, release));
      expect(answer.body).toMatchObject({ deployed: true });
      await finish(answer.body.deploymentId);
    },
    150_000,
  );
});

describe("OAuth callback", () => {
  const TOKEN_PATH = { gitlab: "/oauth/token", gitea: "/login/oauth/access_token" } as const;
  const CODE = { gitlab: "gl-code", gitea: "gitea-code" } as const;
  /** The token requests the provider's stand-in has received so far. */
  const tokenRequests = (kind: "gitlab" | "gitea") =>
    stands[kind].requests.filter((request) => request === `POST ${TOKEN_PATH[kind]}`).length;
  /** A state minted through <kind>.startAuthorization, as the authorize page's link carries it. */
  async function mint(kind: "gitlab" | "gitea", session: Session = owner, providerId = providerIds[kind]) {
    const started = await platform.mutateOk(
      `${kind}.startAuthorization`,
      { [`${kind}Id`]: providerId },
      { token: session.token },
    );
    return new URL(started.authorizeUrl).searchParams.get("state")!;
  }
  const callback = (kind: "gitlab" | "gitea", state: string, code: string = CODE[kind]) =>
    platform.request(
      `/api/${kind}/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`,
    );

  it("/api/gitea/callback trades the code for tokens; a bad code is a 400 and changes nothing", async () => {
    const bad = await callback("gitea", await mint("gitea"), "nope");
    expect(bad.status).toBe(400);
    const good = await callback("gitea", await mint("gitea"));
    expect(good.status).toBe(302);
    // Back to the dashboard's Git providers page.
    expect(good.headers.get("location")).toBe("/#/git-providers");
    const one = await platform.query("gitea.one", { giteaId: providerIds.gitea }, as());
    expect(one.body).toMatchObject({ authorized: true });
    expect(one.body.lastAuthenticatedAt).toBeTypeOf("number");
  });

  it("startAuthorization answers the authorize page at the public URL with a new random state each time", async () => {
    const first = await ok("gitlab.startAuthorization", { gitlabId: providerIds.gitlab });
    const page = new URL(first.authorizeUrl);
    expect(`${page.origin}${page.pathname}`).toBe("https://gitlab.example.com/oauth/authorize");
    expect(Object.fromEntries(page.searchParams)).toMatchObject({
      client_id: "gl-oauth-app",
      redirect_uri: "https://platform.example.com/api/gitlab/callback",
      response_type: "code",
      scope: "api read_user read_repository",
    });
    const state = page.searchParams.get("state")!;
    expect(state).not.toContain(providerIds.gitlab!);
    expect(state.length).toBeGreaterThanOrEqual(43);
    expect(Date.parse(first.expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(await mint("gitlab")).not.toBe(state);
    // Only its hash is stored.
    const stored = await platform.ctx.db.selectFrom("oauthStates").selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(state);
    const gitea = new URL(
      (await ok("gitea.startAuthorization", { giteaId: providerIds.gitea })).authorizeUrl,
    );
    expect(`${gitea.origin}${gitea.pathname}`).toBe(`${stands.gitea.baseUrl}/login/oauth/authorize`);
    expect(gitea.searchParams.get("client_id")).toBe("gitea-client");
  });

  it("a provider without an OAuth application has no authorization page (400) and no state is written", async () => {
    const tokenOnly = await ok("gitea.create", {
      name: "token only",
      giteaUrl: stands.gitea.baseUrl,
      accessToken: "gitea-token-1",
    });
    const before = await platform.ctx.db.selectFrom("oauthStates").selectAll().execute();
    const refused = await platform.mutate("gitea.startAuthorization", { giteaId: tokenOnly.giteaId }, as());
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("clientId");
    expect(await platform.ctx.db.selectFrom("oauthStates").selectAll().execute()).toEqual(before);
    await ok("gitProvider.remove", { gitProviderId: tokenOnly.gitProviderId });
  });

  it.each(["gitlab", "gitea"] as const)(
    "/api/%s/callback refuses the provider's id as state and never calls the provider (issue 37 finding 5)",
    async (kind) => {
      const before = tokenRequests(kind);
      for (const state of [providerIds[kind]!, "", "made-up-state"]) {
        const forged = await callback(kind, state);
        expect([400, 404], state).toContain(forged.status);
      }
      expect(tokenRequests(kind)).toBe(before);
    },
  );

  it("a state works once: the second callback with it is refused without calling the provider", async () => {
    const state = await mint("gitea");
    expect((await callback("gitea", state)).status).toBe(302);
    const before = tokenRequests("gitea");
    const again = await callback("gitea", state);
    expect(again.status).toBe(400);
    expect(again.body.error.data.fields).toEqual(["state"]);
    expect(tokenRequests("gitea")).toBe(before);
  });

  it("an expired state is refused without calling the provider", async () => {
    const state = await mint("gitea");
    await platform.ctx.db
      .updateTable("oauthStates")
      .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
      .where("stateHash", "=", sha256Hex(state))
      .execute();
    const before = tokenRequests("gitea");
    expect((await callback("gitea", state)).status).toBe(400);
    expect(tokenRequests("gitea")).toBe(before);
  });

  it("a state is bound to its kind: a Gitea state at the GitLab callback is refused", async () => {
    const state = await mint("gitea");
    const before = tokenRequests("gitlab") + tokenRequests("gitea");
    expect((await callback("gitlab", state, CODE.gitlab)).status).toBe(400);
    expect(tokenRequests("gitlab") + tokenRequests("gitea")).toBe(before);
  });

  it("a state of a member who lost canAccessToGitProviders is refused (403) without calling the provider", async () => {
    const member = await platform.addMember(owner, "member");
    const grant = (canAccessToGitProviders: boolean) =>
      ok("user.assignPermissions", { id: member.user.userId, canAccessToGitProviders });
    await grant(true);
    const state = await mint("gitea", member);
    await grant(false);
    const before = tokenRequests("gitea");
    expect((await callback("gitea", state)).status).toBe(403);
    expect(tokenRequests("gitea")).toBe(before);
  });

  it("another organization's state authorizes that organization's provider only", async () => {
    const other = await createUserDirectly(platform, { email: "oauth-other@example.com" });
    const theirs = await platform.mutateOk(
      "gitea.create",
      {
        name: "their gitea",
        giteaUrl: stands.gitea.baseUrl,
        clientId: "their-client",
        clientSecret: "their-secret",
        redirectUri: "https://platform.example.com/api/gitea/callback",
      },
      { token: other.token },
    );
    // Their state does not name our provider, nor can they mint one for it.
    const forOurs = await platform.mutate(
      "gitea.startAuthorization",
      { giteaId: providerIds.gitea },
      { token: other.token },
    );
    expect(forOurs.status).toBe(404);
    const ours = (await platform.query("gitea.one", { giteaId: providerIds.gitea }, as())).body;
    const state = await mint("gitea", other, theirs.giteaId);
    expect((await callback("gitea", state)).status).toBe(302);
    const authorized = await platform.query("gitea.one", { giteaId: theirs.giteaId }, { token: other.token });
    expect(authorized.body).toMatchObject({ authorized: true });
    expect((await platform.query("gitea.one", { giteaId: providerIds.gitea }, as())).body).toEqual(ours);
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
