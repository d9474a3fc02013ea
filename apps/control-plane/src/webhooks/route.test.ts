/**
 * POST /api/deploy/{provider}/<applicationId>?refreshToken=… end to end on a real database and
 * the real deployment queue: each provider's push starts a deployment record (deployment.all);
 * another branch, a tag without the tag trigger, unwatched paths and autoDeploy off deploy
 * nothing and say why; unknown applications, wrong or rotated tokens and bad signatures are 401s
 * that do not tell which; a body that is not JSON is a 400 and an oversize one a 413.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApplicationUpdate } from "../db/schema.ts";
import { MAX_BODY_BYTES } from "../limits.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type ApiResponse, type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { bitbucketPush, giteaPush, githubPush, gitlabPush, SAMPLE_SHA } from "./samples.ts";

const SECRET = "hook-secret-value-42";

describe("deploy webhooks", () => {
  let platform: TestPlatform;
  let owner: Session;
  let environmentId: string;
  const as = () => ({ token: owner.token });

  /** An application with a Git source on branch main (no real repository: the run itself fails). */
  const newApplication = async (fields: ApplicationUpdate = {}) => {
    const response = await platform.mutate("application.create", { name: "Hooked", environmentId }, as());
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const applicationId = response.body.applicationId as string;
    await platform.ctx.db
      .updateTable("applications")
      .set({ sourceType: "github", branch: "main", autoDeploy: true, ...fields })
      .where("applicationId", "=", applicationId)
      .execute();
    const app = await platform.query("application.one", { applicationId }, as());
    return { applicationId, refreshToken: app.body.refreshToken as string };
  };

  const deployments = async (applicationId: string) => {
    const response = await platform.query("deployment.all", { applicationId }, as());
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as Array<{ deploymentId: string; title: string; description: string | null }>;
  };

  const hook = (
    provider: string,
    app: { applicationId: string; refreshToken: string },
    payload: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> =>
    platform.request(
      `/api/deploy/${provider}/${app.applicationId}?refreshToken=${encodeURIComponent(app.refreshToken)}`,
      {
        method: "POST",
        body: typeof payload === "string" ? payload : JSON.stringify(payload),
        headers: { "content-type": "application/json", ...headers },
      },
    );

  beforeAll(async () => {
    platform = await startTestPlatform({}, { agents: { localAgent: false } });
    owner = await platform.registerOwner();
    const project = await platform.mutate("project.create", { name: "Hooks" }, as());
    environmentId = project.body.environment.environmentId;
  });

  afterAll(async () => platform?.close());

  const commits = [{ message: "Add the shop page", added: ["src/shop.ts"], modified: ["package.json"] }];

  it.each([
    ["github", "GitHub", githubPush("refs/heads/main", commits), { "x-github-event": "push" }],
    ["gitlab", "GitLab", gitlabPush("refs/heads/main", commits), { "x-gitlab-event": "Push Hook" }],
    ["gitea", "Gitea", giteaPush("refs/heads/main", commits), { "x-gitea-event": "push" }],
    [
      "bitbucket",
      "Bitbucket",
      bitbucketPush("refs/heads/main", "Add the shop page"),
      { "x-event-key": "repo:push" },
    ],
  ])("a %s push to the branch starts a deployment", async (provider, name, payload, headers) => {
    const app = await newApplication();
    const response = await hook(provider, app, payload, headers);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ success: true, deployed: true, deploymentId: expect.any(String) });
    const records = await deployments(app.applicationId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      deploymentId: response.body.deploymentId,
      title: `${name} push ${SAMPLE_SHA.slice(0, 7)}`,
      description: "Add the shop page",
    });
  });

  it("deploys nothing for a push to another branch, and says why", async () => {
    const app = await newApplication();
    const response = await hook("github", app, githubPush("refs/heads/feature", commits));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      deployed: false,
      message: "Nothing deployed: refs/heads/feature is not the application's branch (refs/heads/main)",
    });
    expect(await deployments(app.applicationId)).toEqual([]);
  });

  it("deploys nothing when autoDeploy is off", async () => {
    const app = await newApplication({ autoDeploy: false });
    const response = await hook("gitlab", app, gitlabPush("refs/heads/main", commits));
    expect(response.body).toMatchObject({
      deployed: false,
      message: expect.stringMatching(/autoDeploy is off/),
    });
    expect(await deployments(app.applicationId)).toEqual([]);
  });

  it("deploys a new tag only with triggerType tag", async () => {
    const onPush = await newApplication();
    const tag = githubPush("refs/tags/v1.0.0", [], { created: true });
    expect((await hook("github", onPush, tag)).body).toMatchObject({ deployed: false });
    expect(await deployments(onPush.applicationId)).toEqual([]);

    const onTag = await newApplication();
    await platform.mutateOk(
      "application.update",
      { applicationId: onTag.applicationId, triggerType: "tag" },
      as(),
    );
    expect((await hook("github", onTag, githubPush("refs/heads/main", commits))).body).toMatchObject({
      deployed: false,
      message: expect.stringMatching(/not a tag/),
    });
    const started = await hook("github", onTag, tag);
    expect(started.body).toMatchObject({ deployed: true });
    expect((await deployments(onTag.applicationId)).map((d) => d.title)).toEqual(["GitHub tag v1.0.0"]);
  });

  it("applies watchPaths with ! excludes to the changed files of all commits", async () => {
    const app = await newApplication({ watchPaths: JSON.stringify(["src/**", "!src/**/*.md"]) });
    const docsOnly = [
      { message: "docs", modified: ["src/README.md"] },
      { message: "more docs", added: ["docs/guide.md"] },
    ];
    const skipped = await hook("gitea", app, giteaPush("refs/heads/main", docsOnly));
    expect(skipped.body).toMatchObject({ deployed: false, message: expect.stringMatching(/watchPaths/) });
    expect(await deployments(app.applicationId)).toEqual([]);

    const withCode = [...docsOnly, { message: "remove old code", removed: ["src/legacy.ts"] }];
    const started = await hook("gitea", app, giteaPush("refs/heads/main", withCode));
    expect(started.body).toMatchObject({ deployed: true });
    expect(await deployments(app.applicationId)).toHaveLength(1);
  });

  it("acknowledges a GitHub ping without deploying", async () => {
    const app = await newApplication();
    const response = await hook(
      "github",
      app,
      { zen: "Design for failure.", hook_id: 1 },
      { "x-github-event": "ping" },
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ deployed: false, message: expect.stringMatching(/ping/) });
  });

  it("accepts GitHub's form-encoded delivery", async () => {
    const app = await newApplication();
    const body = new URLSearchParams({
      payload: JSON.stringify(githubPush("refs/heads/main", commits)),
    }).toString();
    const response = await platform.request(
      `/api/deploy/github/${app.applicationId}?refreshToken=${app.refreshToken}`,
      { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } },
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ deployed: true });
  });

  it("answers the same 401 for an unknown application, a wrong token and a missing token", async () => {
    const app = await newApplication();
    const payload = githubPush("refs/heads/main", commits);
    const responses = [
      await hook("github", { ...app, refreshToken: `${app.refreshToken}x` }, payload),
      await hook("github", { ...app, refreshToken: "" }, payload),
      await hook("github", { applicationId: "no-such-app", refreshToken: app.refreshToken }, payload),
      await platform.request(`/api/deploy/github/${app.applicationId}`, {
        method: "POST",
        body: JSON.stringify(payload),
      }),
    ];
    for (const response of responses) {
      expect(response.status).toBe(401);
      expect(response.body.error.message).toBe("Unknown application or wrong refreshToken");
    }
    expect(await deployments(app.applicationId)).toEqual([]);
  });

  it("refuses the old token once application.refreshToken rotated it", async () => {
    const app = await newApplication();
    const rotated = await platform.mutate(
      "application.refreshToken",
      { applicationId: app.applicationId },
      as(),
    );
    expect(rotated.status).toBe(200);
    const old = await hook("github", app, githubPush("refs/heads/main", commits));
    expect(old.status).toBe(401);
    const fresh = (await platform.query("application.one", { applicationId: app.applicationId }, as())).body;
    expect(fresh.refreshToken).not.toBe(app.refreshToken);
    const ok = await hook(
      "github",
      { ...app, refreshToken: fresh.refreshToken },
      githubPush("refs/heads/main", commits),
    );
    expect(ok.body).toMatchObject({ deployed: true });
  });

  it("is a 404 for an unknown provider and a 400 for a body that is not JSON or not a push", async () => {
    const app = await newApplication();
    expect((await hook("sourcehut", app, githubPush("refs/heads/main", commits))).status).toBe(404);
    const notJson = await hook("github", app, "ref=refs/heads/main");
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.data.fields).toEqual(["body"]);
    const notPush = await hook("gitlab", app, { object_kind: "note" });
    expect(notPush.status).toBe(400);
    expect(await deployments(app.applicationId)).toEqual([]);
  });

  it("refuses a ref or commit id that would forge deployment-log lines (finding 8), deploying nothing", async () => {
    const app = await newApplication();
    const forged = "\r\n2026-11-24T00:00:00.000Z Deployment done";
    for (const [payload, field] of [
      [githubPush(`refs/tags/v1${forged}`, commits), "ref"],
      [githubPush("refs/tags/v1\u001b[2K", commits), "ref"],
      [githubPush("refs/heads/main two", commits), "ref"],
      [githubPush("main", commits), "ref"],
      [{ ...githubPush("refs/heads/main", commits), after: `59b20b8${forged}` }, "sha"],
      [bitbucketPush(`refs/tags/v2${forged}`, "x"), "ref"],
    ] as const) {
      const provider = "push" in payload ? "bitbucket" : "github";
      const response = await hook(provider, app, payload);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.data.fields).toEqual([field]);
      expect(response.body.error.message).not.toContain("\n");
    }
    expect(await deployments(app.applicationId)).toEqual([]);
  });

  it("escapes the control characters of a commit message (ANSI, CR, LF) in the description", async () => {
    const app = await newApplication();
    const message = "Fix \u001b[31mred\u001b[0m\r\n2026-11-24T00:00:00.000Z Deployment done\u0007";
    const response = await hook("github", app, githubPush("refs/heads/main", [{ message }]));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const [record] = await deployments(app.applicationId);
    expect(record!.description).toBe(
      "Fix \\x1b[31mred\\x1b[0m\\r\\n2026-11-24T00:00:00.000Z Deployment done\\x07",
    );
  });

  it("refuses an oversize body with 413", async () => {
    const app = await newApplication();
    const huge = githubPush("refs/heads/main", [
      { message: "x".repeat(MAX_BODY_BYTES + 10), added: ["src/a.ts"] },
    ]);
    const response = await hook("github", app, huge);
    expect(response.status).toBe(413);
    expect(await deployments(app.applicationId)).toEqual([]);
  });

  describe("with a webhook secret set through application.update", () => {
    const payload = JSON.stringify(githubPush("refs/heads/main", commits));
    const hmac = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex");
    let app: { applicationId: string; refreshToken: string };

    beforeAll(async () => {
      app = await newApplication();
      const set = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, webhookSecret: SECRET },
        as(),
      );
      expect(set.status, JSON.stringify(set.body)).toBe(200);
    });

    it("never shows the secret and stores it sealed", async () => {
      const one = await platform.query("application.one", { applicationId: app.applicationId }, as());
      expect(JSON.stringify(one.body)).not.toContain(SECRET);
      expect(one.body).not.toHaveProperty("webhookSecretSealed");
      const row = await platform.ctx.db
        .selectFrom("applications")
        .select("webhookSecretSealed")
        .where("applicationId", "=", app.applicationId)
        .executeTakeFirstOrThrow();
      expect(row.webhookSecretSealed).toBeTruthy();
      expect(row.webhookSecretSealed).not.toContain(SECRET);
    });

    it("deploys with GitHub's signature over the raw body and refuses a bad or missing one", async () => {
      const good = await hook("github", app, payload, {
        "x-hub-signature-256": `sha256=${hmac(SECRET, payload)}`,
      });
      expect(good.status, JSON.stringify(good.body)).toBe(200);
      expect(good.body).toMatchObject({ deployed: true });

      const before = (await deployments(app.applicationId)).length;
      for (const headers of <Record<string, string>[]>[
        {},
        { "x-hub-signature-256": `sha256=${hmac("wrong", payload)}` },
        { "x-hub-signature-256": `sha256=${hmac(SECRET, `${payload} `)}` },
        { "x-gitlab-token": SECRET },
      ]) {
        const refused = await hook("github", app, payload, headers);
        expect(refused.status).toBe(401);
        expect(refused.body.error.message).toMatch(/signature/);
      }
      expect(await deployments(app.applicationId)).toHaveLength(before);
    });

    it("checks GitLab's X-Gitlab-Token and Gitea's X-Gitea-Signature", async () => {
      const gitlab = JSON.stringify(gitlabPush("refs/heads/main", commits));
      expect((await hook("gitlab", app, gitlab, { "x-gitlab-token": SECRET })).body).toMatchObject({
        deployed: true,
      });
      expect((await hook("gitlab", app, gitlab, { "x-gitlab-token": "nope" })).status).toBe(401);
      expect((await hook("gitlab", app, gitlab)).status).toBe(401);

      const gitea = JSON.stringify(giteaPush("refs/heads/main", commits));
      expect(
        (await hook("gitea", app, gitea, { "x-gitea-signature": hmac(SECRET, gitea) })).body,
      ).toMatchObject({
        deployed: true,
      });
      expect((await hook("gitea", app, gitea, { "x-gitea-signature": hmac("nope", gitea) })).status).toBe(
        401,
      );
    });

    it("keeps a working secret in a duplicated application (re-sealed for the copy)", async () => {
      const duplicated = await platform.mutate(
        "project.duplicate",
        {
          sourceEnvironmentId: environmentId,
          name: "Hooks copy",
          selectedServices: [{ id: app.applicationId, type: "application" }],
        },
        as(),
      );
      expect(duplicated.status, JSON.stringify(duplicated.body)).toBe(200);
      const copy = await platform.ctx.db
        .selectFrom("applications")
        .select(["applicationId", "refreshToken"])
        .where("environmentId", "=", duplicated.body.environmentId)
        .executeTakeFirstOrThrow();
      const signed = { "x-hub-signature-256": `sha256=${hmac(SECRET, payload)}` };
      expect((await hook("github", copy, payload, signed)).body).toMatchObject({ deployed: true });
      expect((await hook("github", copy, payload)).status).toBe(401);
    });

    it("stops checking signatures once the secret is cleared", async () => {
      const cleared = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, webhookSecret: "" },
        as(),
      );
      expect(cleared.status).toBe(200);
      expect((await hook("github", app, payload)).body).toMatchObject({ deployed: true });
    });

    it("writes neither the secret nor the refresh token to the log", () => {
      const log = platform.logLines.join("\n");
      expect(log).not.toContain(SECRET);
      expect(log).not.toContain(app.refreshToken);
    });
  });

  it("does not let another organization's member see the deployments it started", async () => {
    const stranger = await createUserDirectly(platform, { email: "hook-stranger@example.com" });
    const app = await newApplication();
    await hook("github", app, githubPush("refs/heads/main", commits));
    const response = await platform.query(
      "deployment.all",
      { applicationId: app.applicationId },
      { token: stranger.token },
    );
    expect(response.status).toBe(404);
  });
});
