/**
 * compose's procedures over its deployments, its source and the template tags, with a real
 * database and the embedded deployment queue; the pipeline is replaced by a runner the test
 * drives (each run waits until the test lets it finish, or its signal aborts it), as the
 * application twins are tested in deployments/queue.test.ts: cancelDeployment, killBuild,
 * cleanQueues and clearDeployments act on the stack's own deployments only; search,
 * saveEnvironment, disconnectGitProvider and getDefaultCommand read and write the stack.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { bitbucketPush, giteaPush, githubPush, gitlabPush } from "../webhooks/samples.ts";

vi.setConfig({ testTimeout: 60_000 });

const WAIT_MS = 20_000;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Each run waits for finish(id) or its abort. */
const gates = new Map<string, () => void>();
const started: string[] = [];
async function runner(_ctx: unknown, run: DeploymentRun): Promise<DeploymentOutcome> {
  started.push(run.deploymentId);
  await new Promise<void>((resolve, reject) => {
    gates.set(run.deploymentId, resolve);
    run.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
  });
  return { imageName: "" };
}

let platform: TestPlatform;
/** A remote catalogue in Dokploy's layout: meta.json only (getTags reads the list). */
let catalogue: Server;
let catalogueUrl = "";
let owner: Session;
let environmentId = "";
let projectId = "";
const as = () => ({ token: owner.token });

beforeAll(async () => {
  catalogue = createServer((request, response) => {
    if (request.url !== "/catalogue/meta.json") return response.writeHead(404).end();
    const entry = (id: string, tags: string[]) => ({
      id,
      name: id,
      version: "1",
      description: "",
      logo: "x.png",
      links: {},
      tags,
    });
    response
      .writeHead(200, { "content-type": "application/json" })
      .end(
        JSON.stringify([entry("remote-one", ["remote-only-tag", "shared"]), entry("remote-two", ["shared"])]),
      );
  });
  await new Promise<void>((resolve) => catalogue.listen(0, "127.0.0.1", resolve));
  catalogueUrl = `http://127.0.0.1:${(catalogue.address() as AddressInfo).port}/catalogue`;
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: false }, deployments: { concurrency: 2, runner } },
  );
  owner = await platform.registerOwner();
  const project = await platform.mutateOk("project.create", { name: "Stacks" }, as());
  environmentId = project.environment.environmentId;
  projectId = project.project.projectId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  catalogue?.close();
});

async function createStack(appName: string, extra: Record<string, unknown> = {}) {
  const created = await platform.mutateOk(
    "compose.create",
    {
      name: appName,
      appName,
      environmentId,
      composeFile: "services:\n  web:\n    image: nginx:alpine\n",
      ...extra,
    },
    as(),
  );
  return created.composeId as string;
}

const row = (deploymentId: string) =>
  platform.ctx.db
    .selectFrom("deployments")
    .selectAll()
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirstOrThrow();

async function deploy(composeId: string) {
  const answer = await platform.mutateOk("compose.deploy", { composeId }, as());
  return answer.deploymentId as string;
}

const waitStatus = (deploymentId: string, status: string) =>
  waitFor(`${deploymentId} ${status}`, async () => (await row(deploymentId)).status === status);

describe("compose deployments: cancelDeployment, killBuild, cleanQueues, clearDeployments", () => {
  it("act on the stack's own deployments, as the application's twins do", async () => {
    const stack = await createStack("queue-stack");
    const other = await createStack("other-stack");
    const first = await deploy(stack);
    const second = await deploy(stack);
    const third = await deploy(stack);
    const otherRun = await deploy(other);
    await waitStatus(first, "running");
    await waitStatus(otherRun, "running");

    const cleaned = await platform.mutate("compose.cleanQueues", { composeId: stack }, as());
    expect(cleaned.body).toEqual({ success: true, message: "Queues cleaned successfully" });
    for (const id of [second, third]) {
      expect(await row(id)).toMatchObject({
        status: "error",
        errorMessage: "Removed from the queue by compose.cleanQueues",
      });
    }
    expect((await row(first)).status).toBe("running");

    const cancelled = await platform.mutate("compose.cancelDeployment", { composeId: stack }, as());
    expect(cancelled.body).toEqual({ success: true, message: "Deployment cancelled" });
    expect(await row(first)).toMatchObject({
      status: "error",
      errorMessage: "Cancelled by compose.cancelDeployment",
    });
    const nothing = await platform.mutate("compose.cancelDeployment", { composeId: stack }, as());
    expect(nothing.body).toEqual({
      success: false,
      message: "No deployment is running for this compose stack",
    });
    // The other stack's deployment went on.
    expect((await row(otherRun)).status).toBe("running");

    const fourth = await deploy(stack);
    await waitStatus(fourth, "running");
    const killed = await platform.mutate("compose.killBuild", { composeId: stack }, as());
    expect(killed.body).toEqual({ success: true });
    expect(await row(fourth)).toMatchObject({ status: "error", errorMessage: "Killed by compose.killBuild" });
    expect(started).not.toContain(second);
    expect(started).not.toContain(third);

    // clearDeployments keeps the newest successful deployment and the running one.
    const fifth = await deploy(stack);
    await waitStatus(fifth, "running");
    await waitFor("fifth in the runner", async () => gates.get(fifth));
    gates.get(fifth)!();
    await waitStatus(fifth, "done");
    const sixth = await deploy(stack);
    await waitStatus(sixth, "running");
    const member = await platform.addMember(owner, "member");
    const denied = await platform.mutate(
      "compose.clearDeployments",
      { composeId: stack },
      { token: member.token },
    );
    expect(denied.status).toBe(403);
    const cleared = await platform.mutate("compose.clearDeployments", { composeId: stack }, as());
    expect(cleared.body).toEqual({ success: true });
    const left = await platform.ctx.db
      .selectFrom("deployments")
      .select("deploymentId")
      .where("composeId", "=", stack)
      .execute();
    expect(left.map((d) => d.deploymentId).sort()).toEqual([fifth, sixth].sort());
    expect((await row(otherRun)).status).toBe("running");

    const stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
    for (const name of [
      "compose.cancelDeployment",
      "compose.killBuild",
      "compose.cleanQueues",
      "compose.clearDeployments",
    ]) {
      const foreign = await platform.mutate(name, { composeId: stack }, { token: stranger.token });
      expect(foreign.status, name).toBe(404);
    }
    expect((await row(sixth)).status).toBe("running");
    await waitFor("sixth in the runner", async () => gates.get(sixth));
    gates.get(sixth)!();
    gates.get(otherRun)?.();
    await waitStatus(sixth, "done");
  });
});

describe("compose search, saveEnvironment, disconnectGitProvider, getDefaultCommand, getTags", () => {
  it("search finds the organization's stacks by text, project and environment, newest first", async () => {
    await createStack("searchable-alpha", { description: "the shop's front" });
    await createStack("searchable-beta");
    const byText = await platform.query("compose.search", { q: "searchable" }, as());
    expect(byText.status).toBe(200);
    expect(byText.body.items.map((s: { appName: string }) => s.appName)).toEqual([
      "searchable-beta",
      "searchable-alpha",
    ]);
    expect(byText.body.total).toBe(2);
    expect(byText.body.items[0]).toMatchObject({
      projectId,
      environmentId,
      composeType: "docker-compose",
      sourceType: "raw",
    });
    const byDescription = await platform.query("compose.search", { description: "FRONT" }, as());
    expect(byDescription.body.items.map((s: { appName: string }) => s.appName)).toEqual(["searchable-alpha"]);
    const byName = await platform.query("compose.search", { name: "ALPHA" }, as());
    expect(byName.body.items.map((s: { appName: string }) => s.appName)).toEqual(["searchable-alpha"]);
    // Another project's stack: projectId and environmentId narrow to where a stack lives.
    const elsewhere = await platform.mutateOk("project.create", { name: "Elsewhere" }, as());
    await platform.mutateOk(
      "compose.create",
      {
        name: "searchable-gamma",
        appName: "searchable-gamma",
        environmentId: elsewhere.environment.environmentId,
      },
      as(),
    );
    const inProject = await platform.query("compose.search", { q: "searchable", projectId }, as());
    expect(inProject.body.total).toBe(2);
    const inOther = await platform.query(
      "compose.search",
      { q: "searchable", environmentId: elsewhere.environment.environmentId },
      as(),
    );
    expect(inOther.body.items.map((s: { appName: string }) => s.appName)).toEqual(["searchable-gamma"]);
    const everywhere = await platform.query("compose.search", { q: "searchable" }, as());
    expect(everywhere.body.total).toBe(3);
    const paged = await platform.query(
      "compose.search",
      { appName: "searchable", limit: 1, offset: 2 },
      as(),
    );
    expect(paged.body).toMatchObject({ total: 3, items: [{ appName: "searchable-alpha" }] });
    const stranger = await createUserDirectly(platform, { email: "searcher@example.com" });
    const theirs = await platform.query("compose.search", { q: "searchable" }, { token: stranger.token });
    expect(theirs.body).toEqual({ items: [], total: 0 });
    // A member sees only the stacks granted.
    const member = await platform.addMember(owner, "member");
    const alpha = byText.body.items[1].composeId as string;
    const granted = await platform.mutate(
      "user.assignPermissions",
      { id: member.user.id, accessedServices: [alpha] },
      as(),
    );
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    const mine = await platform.query("compose.search", { q: "searchable" }, { token: member.token });
    expect(mine.body).toMatchObject({ total: 1, items: [{ composeId: alpha }] });
  });

  it("saveEnvironment sets the variables the converted file is interpolated with; createEnvFile true is refused", async () => {
    const stack = await createStack("env-stack", {
      composeFile: "services:\n  web:\n    image: nginx:${TAG}\n",
    });
    const saved = await platform.mutate(
      "compose.saveEnvironment",
      { composeId: stack, env: "TAG=1.27-alpine" },
      as(),
    );
    expect(saved.body).toEqual({ success: true });
    expect((await platform.query("compose.one", { composeId: stack }, as())).body.env).toBe(
      "TAG=1.27-alpine",
    );
    const converted = await platform.query("compose.getConvertedCompose", { composeId: stack }, as());
    expect(converted.body).toContain("nginx:1.27-alpine");
    const envFile = await platform.mutate(
      "compose.saveEnvironment",
      { composeId: stack, env: "TAG=1", createEnvFile: true },
      as(),
    );
    expect(envFile.status).toBe(400);
    expect(envFile.body.error.data.fields).toContain("createEnvFile");
    expect((await platform.query("compose.one", { composeId: stack }, as())).body.env).toBe(
      "TAG=1.27-alpine",
    );
    const stranger = await createUserDirectly(platform, { email: "env@example.com" });
    const foreign = await platform.mutate(
      "compose.saveEnvironment",
      { composeId: stack, env: "X=1" },
      { token: stranger.token },
    );
    expect(foreign.status).toBe(404);
  });

  it("disconnectGitProvider brings a repository stack back to a raw file with every Git field at its default", async () => {
    const stack = await createStack("git-stack");
    await platform.mutateOk(
      "compose.update",
      {
        composeId: stack,
        sourceType: "git",
        customGitUrl: "https://git.example.com/team/stack.git",
        customGitBranch: "main",
        composePath: "deploy/compose.yml",
        enableSubmodules: true,
      },
      as(),
    );
    const stranger = await createUserDirectly(platform, { email: "git@example.com" });
    expect(
      (
        await platform.mutate(
          "compose.disconnectGitProvider",
          { composeId: stack },
          { token: stranger.token },
        )
      ).status,
    ).toBe(404);
    expect((await platform.query("compose.one", { composeId: stack }, as())).body.sourceType).toBe("git");
    const answer = await platform.mutate("compose.disconnectGitProvider", { composeId: stack }, as());
    expect(answer.body).toEqual({ success: true });
    const after = (await platform.query("compose.one", { composeId: stack }, as())).body;
    expect(after).toMatchObject({
      sourceType: "raw",
      customGitUrl: null,
      customGitBranch: null,
      enableSubmodules: false,
      githubId: null,
      triggerType: "push",
    });
  });

  it("getDefaultCommand answers the command the agent deploys the stack with", async () => {
    const stack = await createStack("command-stack");
    const compose = await platform.query("compose.getDefaultCommand", { composeId: stack }, as());
    expect(compose.body).toBe("docker compose -p command-stack -f docker-compose.yml up -d --remove-orphans");
    await platform.mutateOk("compose.update", { composeId: stack, composeType: "stack" }, as());
    const swarm = await platform.query("compose.getDefaultCommand", { composeId: stack }, as());
    expect(swarm.body).toBe(
      "docker stack deploy --prune --with-registry-auth --compose-file docker-compose.yml command-stack",
    );
  });

  it("getTags answers each template tag once", async () => {
    const templates = await platform.query("compose.templates", {}, as());
    const tags = await platform.query("compose.getTags", {}, as());
    expect(tags.status).toBe(200);
    const expected = [...new Set((templates.body as Array<{ tags: string[] }>).flatMap((t) => t.tags))];
    expect(expected.length).toBeGreaterThan(0);
    expect([...tags.body].sort()).toEqual(expected.sort());
    expect(new Set(tags.body).size).toBe(tags.body.length);
    expect(tags.body).not.toContain("remote-only-tag");
    // A caller's baseUrl: that catalogue's tags join the built-in ones, each once.
    const remote = await platform.query("compose.getTags", { baseUrl: catalogueUrl }, as());
    expect(remote.status, JSON.stringify(remote.body)).toBe(200);
    expect(remote.body.filter((tag: string) => tag === "remote-only-tag")).toHaveLength(1);
    expect(remote.body.filter((tag: string) => tag === "shared")).toHaveLength(1);
  });
});

describe("push webhooks deploy compose stacks: POST /api/deploy/compose/<refreshToken>", () => {
  const post = (token: string, headers: Record<string, string>, payload: unknown) =>
    platform.request(`/api/deploy/compose/${token}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(payload),
    });
  const stackDeployments = async (composeId: string) =>
    (
      await platform.ctx.db
        .selectFrom("deployments")
        .select("deploymentId")
        .where("composeId", "=", composeId)
        .execute()
    ).length;
  const finish = async (deploymentId: string) => {
    await waitFor(`${deploymentId} in the runner`, async () => gates.get(deploymentId));
    gates.get(deploymentId)!();
    await waitStatus(deploymentId, "done");
  };

  it("deploys for every provider when autoDeploy, the branch, triggerType and watchPaths allow; a wrong token is a 401", async () => {
    const stack = await createStack("hooked-stack");
    const created = (await platform.query("compose.one", { composeId: stack }, as())).body;
    expect(created.refreshToken).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    await platform.mutateOk(
      "compose.update",
      {
        composeId: stack,
        sourceType: "git",
        customGitUrl: "https://git.example.com/team/stack.git",
        customGitBranch: "main",
        composePath: "docker-compose.yml",
        autoDeploy: true,
        triggerType: "push",
        watchPaths: ["deploy/**"],
      },
      as(),
    );
    const token = created.refreshToken as string;
    const touching = [{ message: "change the stack", modified: ["deploy/compose.yml"] }];
    const calls: Array<{ headers: Record<string, string>; payload: unknown }> = [
      { headers: { "x-github-event": "push" }, payload: githubPush("refs/heads/main", touching) },
      { headers: { "x-gitlab-event": "Push Hook" }, payload: gitlabPush("refs/heads/main", touching) },
      {
        headers: { "x-gitea-event": "push", "x-github-event": "push" },
        payload: giteaPush("refs/heads/main", touching),
      },
      // Bitbucket lists no changed files: watchPaths are not applied, as for applications.
      { headers: { "x-event-key": "repo:push" }, payload: bitbucketPush("main", "change the stack") },
    ];
    for (const { headers, payload } of calls) {
      const answer = await post(token, headers, payload);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ success: true, deployed: true });
      const deployment = await row(answer.body.deploymentId);
      expect(deployment).toMatchObject({ targetKind: "compose", composeId: stack, kind: "deploy" });
      await finish(answer.body.deploymentId);
    }
    expect(await stackDeployments(stack)).toBe(4);

    const unwatched = await post(
      token,
      { "x-github-event": "push" },
      githubPush("refs/heads/main", [{ message: "docs", modified: ["README.md"] }]),
    );
    expect(unwatched.body).toMatchObject({ deployed: false });
    expect(unwatched.body.message).toContain("watchPaths");
    const otherBranch = await post(
      token,
      { "x-github-event": "push" },
      githubPush("refs/heads/dev", touching),
    );
    expect(otherBranch.body).toMatchObject({ deployed: false });
    expect(otherBranch.body.message).toContain("is not the compose stack's branch");

    // triggerType tag: only a new tag deploys.
    await platform.mutateOk("compose.update", { composeId: stack, triggerType: "tag" }, as());
    const branchPush = await post(
      token,
      { "x-github-event": "push" },
      githubPush("refs/heads/main", touching),
    );
    expect(branchPush.body).toMatchObject({ deployed: false });
    const tag = await post(
      token,
      { "x-github-event": "push" },
      githubPush("refs/tags/v1.0.0", [], { created: true }),
    );
    expect(tag.body, JSON.stringify(tag.body)).toMatchObject({ deployed: true });
    await finish(tag.body.deploymentId);

    // autoDeploy off: nothing.
    await platform.mutateOk("compose.update", { composeId: stack, autoDeploy: false }, as());
    const off = await post(
      token,
      { "x-github-event": "push" },
      githubPush("refs/tags/v2.0.0", [], { created: true }),
    );
    expect(off.body).toMatchObject({ deployed: false });
    expect(off.body.message).toContain("autoDeploy is off for this compose stack");
    await platform.mutateOk("compose.update", { composeId: stack, autoDeploy: true }, as());

    // A non-push event is ignored; no provider header is a 400.
    const ping = await post(token, { "x-github-event": "ping" }, { zen: "hi" });
    expect(ping.body).toMatchObject({
      deployed: false,
      message: "Ignored the ping event: only pushes deploy",
    });
    const anonymous = await post(token, {}, githubPush("refs/heads/main", touching));
    expect(anonymous.status).toBe(400);

    // refreshToken replaces the token: the old URL is a 401, the new one works.
    const before = await stackDeployments(stack);
    const stranger = await createUserDirectly(platform, { email: "hook@example.com" });
    expect(
      (await platform.mutate("compose.refreshToken", { composeId: stack }, { token: stranger.token })).status,
    ).toBe(404);
    expect((await platform.query("compose.one", { composeId: stack }, as())).body.refreshToken).toBe(token);
    await platform.mutateOk("compose.refreshToken", { composeId: stack }, as());
    const renewed = (await platform.query("compose.one", { composeId: stack }, as())).body
      .refreshToken as string;
    expect(renewed).not.toBe(token);
    const stale = await post(
      token,
      { "x-github-event": "push" },
      githubPush("refs/tags/v3", [], { created: true }),
    );
    expect(stale.status).toBe(401);
    for (const wrong of ["not-a-token", `${renewed.slice(0, -1)}x`]) {
      expect(
        (await post(wrong, { "x-github-event": "push" }, githubPush("refs/tags/v3", [], { created: true })))
          .status,
      ).toBe(401);
    }
    expect(await stackDeployments(stack)).toBe(before);
    const fresh = await post(
      renewed,
      { "x-github-event": "push" },
      githubPush("refs/tags/v3", [], { created: true }),
    );
    expect(fresh.body).toMatchObject({ deployed: true });
    await finish(fresh.body.deploymentId);
  });

  it("a raw stack has no repository to follow: nothing deploys", async () => {
    const stack = await createStack("raw-hooked");
    await platform.mutateOk("compose.update", { composeId: stack, autoDeploy: true }, as());
    const token = (await platform.query("compose.one", { composeId: stack }, as())).body
      .refreshToken as string;
    const answer = await post(
      token,
      { "x-github-event": "push" },
      githubPush("refs/heads/main", [{ message: "x" }]),
    );
    expect(answer.body).toMatchObject({ deployed: false });
    expect(answer.body.message).toContain("source is raw");
  });
});

describe("processTemplate and previewTemplate render a sent template without storing anything", () => {
  const composeFile =
    "services:\n  web:\n    image: nginx:alpine\n    environment:\n      GREETING: ${GREETING}\n";
  const config = `[variables]
main_domain = "\${domain}"
greeting = "hello-\${hash:6}"

[[config.domains]]
serviceName = "web"
port = 80
host = "\${main_domain}"

[config.env]
GREETING = "\${greeting}"

[[config.mounts]]
filePath = "/conf/site.txt"
content = "served at \${main_domain}"
`;
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

  it("answers the env, domains and mounts for the stack (processTemplate) or an appName (previewTemplate)", async () => {
    const stack = await createStack("templated-stack");
    const before = await platform.query("compose.one", { composeId: stack }, as());
    const processed = await platform.mutate(
      "compose.processTemplate",
      { composeId: stack, base64: encode({ compose: composeFile, config }) },
      as(),
    );
    expect(processed.status, JSON.stringify(processed.body)).toBe(200);
    expect(processed.body.compose).toBe(composeFile);
    const { envs, domains, mounts } = processed.body.template;
    expect(envs).toEqual([expect.stringMatching(/^GREETING=hello-[a-z0-9]{6}$/)]);
    expect(domains).toEqual([
      { host: expect.stringContaining("templated-stack"), port: 80, serviceName: "web" },
    ]);
    expect(mounts).toEqual([{ filePath: "conf/site.txt", content: `served at ${domains[0].host}` }]);
    // Nothing stored.
    expect((await platform.query("compose.one", { composeId: stack }, as())).body).toEqual(before.body);

    const preview = await platform.mutate(
      "compose.previewTemplate",
      { appName: "preview-app", base64: encode({ compose: composeFile, config }) },
      as(),
    );
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.template.domains[0].host).toContain("preview-app");

    for (const base64 of [
      "not base64 json",
      encode({ compose: composeFile }),
      encode({ compose: "", config }),
    ]) {
      const refused = await platform.mutate("compose.previewTemplate", { appName: "x", base64 }, as());
      expect(refused.status, base64).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["base64"]);
    }
    const unknownVariable = await platform.mutate(
      "compose.previewTemplate",
      { appName: "x", base64: encode({ compose: composeFile, config: '[config.env]\nA = "${nope}"\n' }) },
      as(),
    );
    expect(unknownVariable.status).toBe(400);
    expect(unknownVariable.body.error.message).toContain("nope");

    const stranger = await createUserDirectly(platform, { email: "templates@example.com" });
    const foreign = await platform.mutate(
      "compose.processTemplate",
      { composeId: stack, base64: encode({ compose: composeFile, config }) },
      { token: stranger.token },
    );
    expect(foreign.status).toBe(404);
    const foreignServer = await platform.mutate(
      "compose.previewTemplate",
      { appName: "x", serverId: "V1StGXR8_Z5jdHi6B-myT", base64: encode({ compose: composeFile, config }) },
      as(),
    );
    expect(foreignServer.status).toBe(404);
  });
});
