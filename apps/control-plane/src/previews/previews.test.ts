/**
 * Preview deployments on a real database against the four providers' API stand-ins (no Docker:
 * the local agent is off, so a queued deployment never reaches a service; previews/e2e.test.ts
 * deploys one). For each provider: an unsigned or wrongly signed request event changes nothing;
 * a signed one makes the preview (its host under previewWildcard, claimed as a domain, a
 * deployment queued) and posts the comment on the request through the provider's API; the same
 * event again queues nothing; a new commit queues another and edits the comment; close or merge
 * deletes the preview and its host. Then previewLimit, previewLabels, collaborator permissions,
 * another organization's host, the previewDeployment procedures, and who sees a preview's
 * deployments (exactly who sees its application).
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StandIns, seedRepo, standInEnv, startStandIns } from "../git-providers/testing/fixtures.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { parsePullRequestEvent } from "./events.ts";
import { previewAppName } from "./previews.ts";
import {
  AUTHORS,
  createPreviewApps,
  HOOK_SECRET,
  KINDS,
  type Kind,
  type PreviewApp,
  requestEvent,
  sendEvent,
} from "./testing.ts";

let platform: TestPlatform;
let stands: StandIns;
let owner: Session;
let apps: Record<Kind, PreviewApp>;
const SHA1 = "1".repeat(40);
const SHA2 = "2".repeat(40);
const as = () => ({ token: owner.token });
const ok = (name: string, input: unknown) => platform.mutateOk(name, input, as());

beforeAll(async () => {
  stands = await startStandIns();
  platform = await startTestPlatform(standInEnv(stands), { agents: { localAgent: false } });
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Previews" });
  for (const kind of KINDS) await seedRepo(stands[kind], { Dockerfile: "FROM scratch\n" });
  apps = await createPreviewApps(platform, owner.token, stands, {
    environmentId: project.environment.environmentId,
    appNames: { github: "pv-github", gitlab: "pv-gitlab", gitea: "pv-gitea", bitbucket: "pv-bitbucket" },
    wildcard: "preview.example.com",
  });
}, 60_000);

afterAll(async () => {
  await platform?.close();
  for (const stand of Object.values(stands ?? {})) await stand.close();
}, 60_000);

const previewsOf = (applicationId: string) =>
  platform.ctx.db
    .selectFrom("previewDeployments")
    .selectAll()
    .where("applicationId", "=", applicationId)
    .execute();
const previewDeploymentsOf = (previewDeploymentId: string) =>
  platform.ctx.db
    .selectFrom("deployments")
    .selectAll()
    .where("previewDeploymentId", "=", previewDeploymentId)
    .execute();

describe("request events of each provider", () => {
  it("parses each provider's open, new-commit and close events", () => {
    for (const kind of KINDS) {
      for (const action of ["open", "update", "close"] as const) {
        const { body, headers } = requestEvent(kind, { action, number: 3, branch: "feature/x", sha: SHA1 });
        const event = headers["x-event-key"] ?? "";
        const change = parsePullRequestEvent(kind, event, JSON.parse(body));
        expect(change, `${kind} ${action}`).toMatchObject({
          action,
          number: "3",
          branch: "feature/x",
          headSha: SHA1,
          author: AUTHORS[kind],
        });
      }
    }
    expect(() =>
      parsePullRequestEvent(
        "github",
        "",
        JSON.parse(requestEvent("github", { action: "open", number: 1, branch: "a b", sha: SHA1 }).body),
      ),
    ).toThrow(/branch/);
    expect(previewAppName("My_App.web", "abc123")).toBe("preview-my-app-web-abc123");
  });

  it.each(KINDS)("%s: signed events make, update and delete a preview with its comment", async (kind) => {
    const app = apps[kind];
    const opened = requestEvent(kind, { action: "open", number: 11, branch: "feature", sha: SHA1 });
    // Unsigned, and signed with another secret: 401, nothing recorded.
    expect(
      (
        await sendEvent(
          platform,
          app,
          requestEvent(kind, { action: "open", number: 11, branch: "feature", sha: SHA1 }, null),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await sendEvent(
          platform,
          app,
          requestEvent(kind, { action: "open", number: 11, branch: "feature", sha: SHA1 }, "wrong-secret"),
        )
      ).status,
    ).toBe(401);
    expect(await previewsOf(app.applicationId)).toEqual([]);
    expect(stands[kind].comments.size).toBe(0);

    const answer = await sendEvent(platform, app, opened);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.message).toMatch(/preview created/);
    const [preview] = await previewsOf(app.applicationId);
    expect(preview).toMatchObject({
      branch: "feature",
      pullRequestNumber: "11",
      headSha: SHA1,
      provider: kind,
    });
    expect(preview!.appName).toMatch(new RegExp(`^preview-pv-${kind}-[0-9a-f]{6}$`));
    const domain = await platform.ctx.db
      .selectFrom("domains")
      .selectAll()
      .where("domainId", "=", preview!.domainId!)
      .executeTakeFirstOrThrow();
    expect(domain).toMatchObject({
      host: `${preview!.appName}.preview.example.com`,
      domainType: "preview",
      port: 8080,
      applicationId: app.applicationId,
    });
    expect(await previewDeploymentsOf(preview!.previewDeploymentId)).toHaveLength(1);
    // The application's own domains leave the preview's host out.
    const own = await platform.query("domain.byApplicationId", { applicationId: app.applicationId }, as());
    expect(own.body).toEqual([]);

    const [comment] = [...stands[kind].comments.values()];
    expect(comment!.number).toBe("11");
    expect(comment!.bodies[0]).toContain(`http://${domain.host}`);
    expect(comment!.bodies[0]).toContain(SHA1.slice(0, 12));

    // The same delivery again (a provider's retry): nothing more is queued.
    const again = await sendEvent(platform, app, opened);
    expect(again.body.message).toMatch(/already queued/);
    expect(await previewDeploymentsOf(preview!.previewDeploymentId)).toHaveLength(1);

    const updated = await sendEvent(
      platform,
      app,
      requestEvent(kind, { action: "update", number: 11, branch: "feature", sha: SHA2 }),
    );
    expect(updated.body.message).toMatch(/preview updated/);
    expect(await previewDeploymentsOf(preview!.previewDeploymentId)).toHaveLength(2);
    expect(stands[kind].comments.size).toBe(1);
    expect(comment!.bodies.at(-1)).toContain(SHA2.slice(0, 12));

    const closed = await sendEvent(
      platform,
      app,
      requestEvent(kind, { action: "close", number: 11, branch: "feature", sha: SHA2 }),
    );
    expect(closed.body.message).toBe("preview deleted");
    expect(await previewsOf(app.applicationId)).toEqual([]);
    expect(
      await platform.ctx.db
        .selectFrom("domains")
        .select("domainId")
        .where("domainId", "=", preview!.domainId!)
        .execute(),
    ).toEqual([]);
    expect(comment!.bodies.at(-1)).toMatch(/Deleted/);
  });
});

describe("which requests get a preview", () => {
  it("previewLimit deletes the oldest preview", async () => {
    const app = apps.github;
    for (const number of [21, 22, 23]) {
      const answer = await sendEvent(
        platform,
        app,
        requestEvent("github", { action: "open", number, branch: `b${number}`, sha: SHA1 }),
      );
      expect(answer.status).toBe(200);
    }
    const previews = await previewsOf(app.applicationId);
    expect(previews.map((preview) => preview.pullRequestNumber)).toEqual(["22", "23"]);
  });

  it("previewLabels: only a request with one of the labels", async () => {
    const app = apps.gitea;
    await ok("application.update", { applicationId: app.applicationId, previewLabels: ["preview"] });
    const without = await sendEvent(
      platform,
      app,
      requestEvent("gitea", { action: "open", number: 31, branch: "l1", sha: SHA1 }),
    );
    expect(without.body.message).toMatch(/carries none of the labels/);
    const withLabel = await sendEvent(
      platform,
      app,
      requestEvent("gitea", { action: "open", number: 32, branch: "l2", sha: SHA1, labels: ["preview"] }),
    );
    expect(withLabel.body.message).toMatch(/preview created/);
    await ok("application.update", { applicationId: app.applicationId, previewLabels: [] });
  });

  it.each(["github", "gitlab", "bitbucket", "gitea"] as const)(
    "%s: previewRequireCollaboratorPermissions asks the provider whether the author may deploy",
    async (kind) => {
      const app = apps[kind];
      await ok("application.update", {
        applicationId: app.applicationId,
        previewRequireCollaboratorPermissions: true,
      });
      const refused = await sendEvent(
        platform,
        app,
        requestEvent(kind, { action: "open", number: 41, branch: "c", sha: SHA1 }),
      );
      expect(refused.body.message).toMatch(/not a collaborator/);
      expect((await previewsOf(app.applicationId)).some((p) => p.pullRequestNumber === "41")).toBe(false);
      stands[kind].collaborators.add(AUTHORS[kind]);
      const accepted = await sendEvent(
        platform,
        app,
        requestEvent(kind, { action: "open", number: 41, branch: "c", sha: SHA1 }),
      );
      expect(accepted.body.message).toMatch(/preview created/);
      await ok("application.update", {
        applicationId: app.applicationId,
        previewRequireCollaboratorPermissions: false,
      });
      await sendEvent(
        platform,
        app,
        requestEvent(kind, { action: "close", number: 41, branch: "c", sha: SHA1 }),
      );
    },
  );

  it("a preview never takes a host another organization owns", async () => {
    const other = await createUserDirectly(platform, { email: "other-owner@example.com" });
    const theirs = await platform.mutateOk("project.create", { name: "Theirs" }, { token: other.token });
    const theirApp = await platform.mutateOk(
      "application.create",
      { name: "theirs", appName: "their-app", environmentId: theirs.environment.environmentId },
      { token: other.token },
    );
    // Their wildcard (a custom certificate's, stored as domain.create stores it).
    await platform.ctx.db
      .insertInto("domains")
      .values({
        domainId: "their-wildcard",
        host: "*.taken.example.com",
        certificateType: "none",
        customCertResolver: null,
        certificate: null,
        certificateKeySealed: null,
        domainType: "application",
        applicationId: theirApp.applicationId,
        composeId: null,
        serviceName: null,
        internalPath: null,
        customEntrypoint: null,
      })
      .execute();
    const app = apps.gitlab;
    await ok("application.update", {
      applicationId: app.applicationId,
      previewWildcard: "*.taken.example.com",
    });
    const before = (await previewsOf(app.applicationId)).length;
    const answer = await sendEvent(
      platform,
      app,
      requestEvent("gitlab", { action: "open", number: 51, branch: "t", sha: SHA1 }),
    );
    expect(answer.status).toBe(409);
    expect(answer.body.error.data.fields).toEqual(["host"]);
    expect(await previewsOf(app.applicationId)).toHaveLength(before);
    await ok("application.update", {
      applicationId: app.applicationId,
      previewWildcard: "*.preview.example.com",
    });

    // Another organization's previews and applications are not found.
    const [preview] = await previewsOf(apps.github.applicationId);
    const foreign = { token: other.token };
    expect(
      (
        await platform.query(
          "previewDeployment.one",
          { previewDeploymentId: preview!.previewDeploymentId },
          foreign,
        )
      ).status,
    ).toBe(404);
    expect(
      (await platform.query("previewDeployment.all", { applicationId: apps.github.applicationId }, foreign))
        .status,
    ).toBe(404);
    expect(
      (
        await platform.mutate(
          "previewDeployment.delete",
          { previewDeploymentId: preview!.previewDeploymentId },
          foreign,
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await platform.query(
          "deployment.allByType",
          { id: preview!.previewDeploymentId, type: "previewDeployment" },
          foreign,
        )
      ).status,
    ).toBe(404);
  });
});

describe("previewDeployment procedures", () => {
  it("all, one, redeploy, create for a branch, allByType, delete", async () => {
    const app = apps.bitbucket;
    const created = await ok("previewDeployment.create", {
      applicationId: app.applicationId,
      branch: "api-branch",
      title: "Try the API branch",
    });
    expect(created).toMatchObject({
      branch: "api-branch",
      pullRequestTitle: "Try the API branch",
      pullRequestNumber: "0",
      domain: { domainType: "preview" },
    });
    expect(created.deployments).toHaveLength(1);
    const all = await platform.query("previewDeployment.all", { applicationId: app.applicationId }, as());
    expect(all.body.map((p: { previewDeploymentId: string }) => p.previewDeploymentId)).toContain(
      created.previewDeploymentId,
    );
    expect(
      await ok("previewDeployment.redeploy", {
        previewDeploymentId: created.previewDeploymentId,
        description: "once more",
      }),
    ).toBe(true);
    const byType = await platform.query(
      "deployment.allByType",
      { id: created.previewDeploymentId, type: "previewDeployment" },
      as(),
    );
    expect(byType.body).toHaveLength(2);
    expect(byType.body[0]).toMatchObject({ title: "Rebuild Preview Deployment", description: "once more" });
    // A domain is never made for a preview by hand.
    const byHand = await platform.mutate(
      "domain.create",
      {
        applicationId: app.applicationId,
        host: "x.example.com",
        previewDeploymentId: created.previewDeploymentId,
      },
      as(),
    );
    expect(byHand.status).toBe(400);
    expect(byHand.body.error.data.fields).toEqual(["previewDeploymentId"]);
    const one = await platform.query(
      "previewDeployment.one",
      { previewDeploymentId: created.previewDeploymentId },
      as(),
    );
    expect(one.body.deployments).toHaveLength(2);
    // Dokploy's expiresAt: answered, always null, stored nowhere (no preview expires).
    expect(one.body.expiresAt).toBeNull();
    const stored = await sql<{ column_name: string }>`
      select column_name from information_schema.columns where table_name = 'preview_deployments'`.execute(
      platform.ctx.db,
    );
    expect(stored.rows.map((row) => row.column_name)).not.toContain("expires_at");
    const bad = await platform.mutate(
      "previewDeployment.create",
      { applicationId: app.applicationId, branch: "bad branch" },
      as(),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(["branch"]);
    expect(await ok("previewDeployment.delete", { previewDeploymentId: created.previewDeploymentId })).toBe(
      true,
    );
    expect(
      (
        await platform.query(
          "previewDeployment.one",
          { previewDeploymentId: created.previewDeploymentId },
          as(),
        )
      ).status,
    ).toBe(404);
    void HOOK_SECRET;
  });
  it("a preview's deployments are seen exactly by who sees its application", async () => {
    const app = apps.gitea;
    const created = await ok("previewDeployment.create", {
      applicationId: app.applicationId,
      branch: "seen-branch",
      title: "Who sees this",
    });
    const [deployment] = created.deployments as { deploymentId: string }[];
    const restricted = async (accessedServices: string[]) => {
      const member = await platform.addMember(owner, "member");
      await ok("user.assignPermissions", { id: member.user.id, accessedServices });
      return member;
    };
    const seer = await restricted([app.applicationId]);
    const blind = await restricted([apps.github.applicationId]);
    const ids = async (session: Session, procedure: string) =>
      (await platform.query(procedure, {}, { token: session.token })).body.map(
        (row: { deploymentId: string }) => row.deploymentId,
      );
    for (const procedure of ["deployment.allCentralized", "deployment.queueList"]) {
      expect(await ids(seer, procedure), procedure).toContain(deployment!.deploymentId);
      expect(await ids(blind, procedure), procedure).not.toContain(deployment!.deploymentId);
    }
    const one = (session: Session) =>
      platform.query(
        "previewDeployment.one",
        { previewDeploymentId: created.previewDeploymentId },
        { token: session.token },
      );
    expect((await one(seer)).status).toBe(200);
    expect((await one(blind)).status).toBe(404);
    const byType = (session: Session) =>
      platform.query(
        "deployment.allByType",
        { id: created.previewDeploymentId, type: "previewDeployment" },
        { token: session.token },
      );
    expect((await byType(seer)).body).toHaveLength(1);
    expect((await byType(blind)).status).toBe(404);
    const log = (session: Session) =>
      platform.request(`/api/deployment.logs?deploymentId=${deployment!.deploymentId}`, {
        token: session.token,
      });
    expect((await log(blind)).status).toBe(404);
    expect(
      (
        await platform.mutate(
          "deployment.killProcess",
          { deploymentId: deployment!.deploymentId },
          { token: blind.token },
        )
      ).status,
    ).toBe(404);
    expect(await ok("previewDeployment.delete", { previewDeploymentId: created.previewDeploymentId })).toBe(
      true,
    );
  });

  it("routes a preview by previewPath, previewHttps, previewCertificateType and previewCustomCertResolver", async () => {
    const app = apps.bitbucket;
    const settings = (previewHttps: boolean) =>
      ok("application.update", {
        applicationId: app.applicationId,
        previewPath: "/app",
        previewHttps,
        previewCertificateType: "letsencrypt",
        previewCustomCertResolver: "preview-resolver",
      });
    await settings(true);
    const secure = await ok("previewDeployment.create", {
      applicationId: app.applicationId,
      branch: "secure",
    });
    expect(secure.domain).toMatchObject({
      path: "/app",
      port: 8080,
      https: true,
      certificateType: "letsencrypt",
      customCertResolver: "preview-resolver",
    });
    // Without HTTPS the certificate settings play no part.
    await settings(false);
    const plain = await ok("previewDeployment.create", { applicationId: app.applicationId, branch: "plain" });
    expect(plain.domain).toMatchObject({ path: "/app", https: false, certificateType: "none" });
    expect(plain.domain.customCertResolver).toBeNull();
    for (const preview of [secure, plain]) {
      await ok("previewDeployment.delete", { previewDeploymentId: preview.previewDeploymentId });
    }
  });
});
