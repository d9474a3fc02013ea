/**
 * Rollbacks end to end on the real Docker Engine with the in-process agent and a Git repository
 * served on 127.0.0.1: deploy v1, deploy v2, roll back to v1 (served again, no build ran), then
 * roll forward (redeploy); a volume mount keeps its file across the redeploy and the rollback.
 * Around it, on the same platform: each deployment's rollbackId in deployment.all, another
 * organization's rollback and a member without access are 404s, a rollback whose image is gone
 * says so before anything is queued, delete untags the image, and retention keeps each
 * application's newest ROLLBACKS_KEPT_PER_APPLICATION. A compose stack the same way: its
 * rollback runs the images it ran by ID (the tag it names has moved on), its file mounts of then,
 * and keeps its volume; compose.delete untags its kept images.
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
const stackNames: string[] = [];
const volumes: string[] = [];
const images: string[] = [];

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

/**
 * Runs `command` in a running container of the Swarm service until it prints `expected` (a new
 * task may still be starting after a deploy); answers what it printed last.
 */
async function execIn(service: string, command: string, expected: string): Promise<string> {
  let last = "";
  for (let attempt = 0; attempt < 60; attempt++) {
    const ids = (
      await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${service}`])
    ).split("\n");
    for (const id of ids.filter(Boolean)) {
      last = await dockerCli(["exec", id, "sh", "-c", command]).catch((error) => String(error));
      if (last === expected) return last;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return last;
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
  for (const stack of stackNames) await dockerCli(["stack", "rm", stack]).catch(() => {});
  for (const image of images) await dockerCli(["image", "rm", image]).catch(() => {});
  // A volume goes once its service's containers have.
  for (const volume of volumes) {
    for (let attempt = 0; attempt < 30; attempt++) {
      const gone = await dockerCli(["volume", "rm", volume]).then(
        () => true,
        (error) => /no such volume/i.test(String(error)),
      );
      if (gone) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
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
    const volumeName = uniqueName("rb-data");
    volumes.push(volumeName);
    await ok("mounts.create", {
      serviceType: "application",
      serviceId: app.applicationId,
      type: "volume",
      volumeName,
      mountPath: "/data",
    });
    const deploy = async (kind: "deploy" | "redeploy") => {
      const { deploymentId } = await ok(`application.${kind}`, { applicationId: app.applicationId });
      const row = await platform.waitForDeployment(deploymentId);
      expect(row.status, row.logs).toBe("done");
      return row;
    };

    const v1 = await deploy("deploy");
    expect(await servedBody(port, "/", "version one")).toBe("version one");
    expect(await execIn(app.appName, "echo kept > /data/note && cat /data/note", "kept")).toBe("kept");
    await git.commit("app", { "index.html": "version two" }, "v2");
    const v2 = await deploy("deploy");
    expect(await servedBody(port, "/", "version two")).toBe("version two");
    expect(await execIn(app.appName, "cat /data/note", "kept")).toBe("kept");

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
    expect(await execIn(app.appName, "cat /data/note", "kept")).toBe("kept");

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
    const db = platform.ctx.db;
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
    await applyRetention(platform.ctx, app.applicationId);
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

describe("rolling a compose stack back", () => {
  it("runs the images it ran by ID, its file mounts of then and keeps its volume; delete untags", async () => {
    const appName = uniqueName("rb-stack").replace(/_/g, "-");
    stackNames.push(appName);
    // The tag the file names moves from image one to image two: the rollback must run image one.
    const live = `platform-test/rb-live-${appName}:latest`;
    images.push(live);
    const makeImage = async (version: string) => {
      const container = `${appName}-build-${version}`;
      await dockerCli([
        "run",
        "--name",
        container,
        TEST_IMAGE,
        "sh",
        "-c",
        `echo ${version} > /image-version`,
      ]);
      await dockerCli(["commit", container, live]);
      await dockerCli(["rm", container]);
      return dockerCli(["image", "inspect", "-f", "{{.Id}}", live]);
    };
    const imageOne = await makeImage("one");
    const composeFile = `services:
  web:
    image: ${live}
    command: ["sh", "-c", "while true; do sleep 5; done"]
    environment:
      LITERAL: "$\${HOME} a$$b"
    volumes:
      - data:/data
      - ../files/version.txt:/version.txt
volumes:
  data: {}
`;
    volumes.push(`${appName}_data`);
    const stack = await ok("compose.create", {
      name: "stack",
      appName,
      environmentId,
      composeType: "stack",
      composeFile,
    });
    const mount = await ok("mounts.create", {
      serviceType: "compose",
      serviceId: stack.composeId,
      type: "file",
      filePath: "version.txt",
      content: "one",
    });
    expect(mount).toMatchObject({ composeId: stack.composeId, serviceType: "compose", mountPath: "" });
    const deploy = async () => {
      const { deploymentId } = await ok("compose.deploy", { composeId: stack.composeId });
      const row = await platform.waitForDeployment(deploymentId, 240_000);
      expect(row.status, row.logs).toBe("done");
      return row;
    };
    const web = `${appName}_web`;
    const keptImage = (deploymentId: string) =>
      `platform-rollback/${appName}-web:${/^\w/.test(deploymentId) ? deploymentId : `d${deploymentId}`}`;
    const read = "cat /image-version /version.txt | tr '\\n' ' '";

    const v1 = await deploy();
    expect(await execIn(web, read, "one one")).toBe("one one");
    expect(await execIn(web, "echo kept > /data/note && cat /data/note", "kept")).toBe("kept");
    await makeImage("two");
    await ok("mounts.update", { mountId: mount.mountId, content: "two" });
    const v2 = await deploy();
    expect(await execIn(web, read, "two two")).toBe("two two");

    const listed = (
      await platform.query("deployment.allByType", { id: stack.composeId, type: "compose" }, as())
    ).body as { deploymentId: string; rollbackId: string | null }[];
    const rollbackOf = (deploymentId: string) =>
      listed.find((item) => item.deploymentId === deploymentId)?.rollbackId;
    expect(rollbackOf(v1.deploymentId)).toEqual(expect.any(String));
    expect(rollbackOf(v2.deploymentId)).toEqual(expect.any(String));
    const kept = await platform.ctx.db
      .selectFrom("rollbacks")
      .selectAll()
      .where("rollbackId", "=", rollbackOf(v1.deploymentId) ?? "")
      .executeTakeFirstOrThrow();
    expect(kept.stackImages).toEqual([
      { service: "web", image: keptImage(v1.deploymentId), imageId: imageOne },
    ]);

    const started = await ok("rollback.rollback", { rollbackId: rollbackOf(v1.deploymentId) });
    const back = await platform.waitForDeployment(started.deploymentId, 240_000);
    expect(back.status, back.logs).toBe("done");
    expect(back.kind).toBe("rollback");
    expect(back.logs).toContain("(no build)");
    expect(back.rollbackId).toBe(rollbackOf(v1.deploymentId));
    expect(await execIn(web, read, "one one")).toBe("one one");
    expect(await execIn(web, "cat /data/note", "kept")).toBe("kept");
    // The kept file's `$$` is still a literal `$` (not the agent's environment) when it deploys again.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text the container gets, not a template
    expect(await execIn(web, 'echo "$LITERAL"', "${HOME} a$b")).toBe("${HOME} a$b");

    // A rollback whose images are gone says so before anything is queued.
    await dockerCli(["image", "rm", keptImage(v2.deploymentId)]);
    const gone = await platform.mutate(
      "rollback.rollback",
      { rollbackId: rollbackOf(v2.deploymentId) },
      as(),
    );
    expect(gone.status, JSON.stringify(gone.body)).toBe(409);
    expect(gone.body.error.message).toContain("gone");

    // Deleting the stack untags the images its rollbacks kept.
    await ok("compose.delete", { composeId: stack.composeId, deleteVolumes: true });
    expect(await imageExists(keptImage(v1.deploymentId))).toBe(false);
  }, 600_000);
});
