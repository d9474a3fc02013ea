/**
 * Rollbacks end to end on the real Docker Engine with the in-process agent and a Git repository
 * served on 127.0.0.1: deploy v1, deploy v2, roll back to v1 (served again, no build ran), then
 * roll forward (redeploy). Around it, on the same platform: each deployment's rollbackId in
 * deployment.all, another organization's rollback and a member without access are 404s, a
 * rollback whose image is gone says so before anything is queued, delete untags the image, and
 * retention keeps each application's newest ROLLBACKS_KEPT_PER_APPLICATION.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeDeployedApps,
  requireDocker,
  TEST_IMAGE,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { freePort, servedBody } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { applyRetention, ROLLBACKS_KEPT_PER_APPLICATION, rollbackImageFor } from "./rollbacks.ts";

const SERVING_DOCKERFILE = `FROM ${TEST_IMAGE}
COPY index.html /www/index.html
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
`;

let platform: TestPlatform;
let git: GitServer;
let owner: Session;
let environmentId: string;
let directory: string;
const appNames: string[] = [];

const as = (session = owner) => ({ token: session.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

async function createApp(name: string) {
  const appName = uniqueName(`rb-${name}`);
  appNames.push(appName);
  return ok("application.create", { name, environmentId, appName }) as Promise<{
    applicationId: string;
    appName: string;
  }>;
}

const imageExists = (image: string) =>
  dockerCli(["image", "inspect", image]).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  await requireDocker();
  git = await startGitServer();
  directory = await mkdtemp(path.join(tmpdir(), "rollbacks-"));
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory: directory, toolSearchPath: "/nonexistent" } } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Rollbacks" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await git?.close();
  await removeDeployedApps(appNames);
  if (directory) await rm(directory, { recursive: true, force: true });
}, 120_000);

describe("rolling an application back and forward", () => {
  it("deploys v1 and v2, rolls back to v1 without a build, then rolls forward with a redeploy", async () => {
    await git.createRepo("app", { Dockerfile: SERVING_DOCKERFILE, "index.html": "version one" });
    const app = await createApp("app");
    await ok("application.saveGitProvider", {
      applicationId: app.applicationId,
      customGitUrl: git.url("app"),
      customGitBranch: "main",
      customGitBuildPath: "/",
      enableSubmodules: false,
    });
    await ok("application.saveBuildType", {
      applicationId: app.applicationId,
      buildType: "dockerfile",
      dockerfile: "Dockerfile",
      dockerContextPath: ".",
      dockerBuildStage: "",
    });
    const port = await freePort();
    await ok("port.create", { applicationId: app.applicationId, publishedPort: port, targetPort: 8080 });
    const deploy = async (kind: "deploy" | "redeploy") => {
      const { deploymentId } = await ok(`application.${kind}`, { applicationId: app.applicationId });
      const row = await platform.waitForDeployment(deploymentId);
      expect(row.status, row.logs).toBe("done");
      return row;
    };

    const v1 = await deploy("deploy");
    expect(await servedBody(port, "/", "version one")).toBe("version one");
    await git.commit("app", { "index.html": "version two" }, "v2");
    const v2 = await deploy("deploy");
    expect(await servedBody(port, "/", "version two")).toBe("version two");

    const listed = (await platform.query("deployment.all", { applicationId: app.applicationId }, as())).body;
    const rollbackOf = (deploymentId: string) =>
      listed.find((item: { deploymentId: string }) => item.deploymentId === deploymentId)?.rollbackId;
    const v1Rollback = rollbackOf(v1.deploymentId);
    expect(v1Rollback).toEqual(expect.any(String));
    expect(rollbackOf(v2.deploymentId)).toEqual(expect.any(String));
    const kept = rollbackImageFor(app.appName, v1.deploymentId);
    expect(await imageExists(kept)).toBe(true);

    const started = await ok("rollback.rollback", { rollbackId: v1Rollback });
    const back = await platform.waitForDeployment(started.deploymentId);
    expect(back.status, back.logs).toBe("done");
    expect(back.kind).toBe("rollback");
    expect(back.logs).toContain("(no build)");
    expect(back.logs).not.toContain("Building");
    expect(back.rollbackId).toBe(v1Rollback);
    expect(await servedBody(port, "/", "version one")).toBe("version one");

    const forward = await deploy("redeploy");
    expect(forward.logs).toContain("Building");
    expect(await servedBody(port, "/", "version two")).toBe("version two");

    // Tenancy: another organization's rollback, and a member who cannot see the application.
    const stranger = await createUserDirectly(platform, { email: `stranger-${Date.now()}@example.com` });
    const member = await createUserDirectly(platform, {
      email: `member-${Date.now()}@example.com`,
      organizationId: owner.user.organizationId,
    });
    // A member sees every application until granted some: this one is granted another.
    const other = await createApp("other");
    await ok("user.assignPermissions", { id: member.user.userId, accessedServices: [other.applicationId] });
    for (const session of [stranger, member]) {
      for (const name of ["rollback.rollback", "rollback.delete"]) {
        const refused = await platform.mutate(name, { rollbackId: v1Rollback }, as(session));
        expect(refused.status, `${name}: ${JSON.stringify(refused.body)}`).toBe(404);
      }
    }

    // A rollback whose image is gone says so before anything is queued.
    const v2Kept = rollbackImageFor(app.appName, v2.deploymentId);
    await dockerCli(["image", "rm", v2Kept]);
    const gone = await platform.mutate(
      "rollback.rollback",
      { rollbackId: rollbackOf(v2.deploymentId) },
      as(),
    );
    expect(gone.status, JSON.stringify(gone.body)).toBe(409);
    expect(gone.body.error.message).toContain("is gone");

    // delete untags the image; the rollback is gone from deployment.all.
    const deleted = await platform.mutate("rollback.delete", { rollbackId: v1Rollback }, as());
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body).toMatchObject({ rollbackId: v1Rollback, image: kept });
    expect(await imageExists(kept)).toBe(false);
    const after = (await platform.query("deployment.all", { applicationId: app.applicationId }, as())).body;
    expect(
      after.find((item: { deploymentId: string }) => item.deploymentId === v1.deploymentId).rollbackId,
    ).toBe(null);
    expect((await platform.mutate("rollback.rollback", { rollbackId: v1Rollback }, as())).status).toBe(404);
  }, 240_000);

  it("keeps each application's newest rollbacks and untags the older ones", async () => {
    const app = await createApp("retention");
    const db = platform.services.db;
    const total = ROLLBACKS_KEPT_PER_APPLICATION + 2;
    for (let index = 0; index < total; index++) {
      await db
        .insertInto("rollbacks")
        .values({
          rollbackId: `rb-${app.applicationId}-${index}`,
          applicationId: app.applicationId,
          deploymentId: null,
          serverId: null,
          image: rollbackImageFor(app.appName, `old-${index}`),
          imageId: "sha256:0",
          registryId: null,
          registryImage: null,
          specSealed: "v1:1:x:y",
          createdAt: new Date(Date.UTC(2026, 0, 1 + index)).toISOString(),
        })
        .execute();
    }
    await applyRetention(platform.services, app.applicationId);
    const left = await db
      .selectFrom("rollbacks")
      .select("rollbackId")
      .where("applicationId", "=", app.applicationId)
      .orderBy("createdAt")
      .execute();
    expect(left.map((row) => row.rollbackId)).toEqual(
      Array.from(
        { length: ROLLBACKS_KEPT_PER_APPLICATION },
        (_, index) => `rb-${app.applicationId}-${index + 2}`,
      ),
    );
  });
});
