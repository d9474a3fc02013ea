/**
 * Deployments through the API and the real pipeline: the control plane on NATS JetStream (its
 * own stream and subject prefix) with its in-process agent on the real Docker Engine, Git
 * repositories served on 127.0.0.1. Records and statuses of a deployment that succeeds and one
 * that fails, the live log over SSE, one deployment at a time per application, and stopping a
 * real build. deployments/queue.test.ts covers the queue itself in both modes.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { removeDeployedApps, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const NATS_URL = "nats://127.0.0.1:4222";
const DEPLOY_WAIT_MS = 180_000;
const suffix = randomBytes(4).toString("hex");
const queueNames = {
  stream: `TEST_DEPLOYMENT_ROUTER_${suffix}`,
  subjectPrefix: `test.deployment-router.${suffix}`,
};

let platform: TestPlatform;
let git: GitServer;
let owner: Session;
let environmentId: string;
let mainDirectory: string;
const services: string[] = [];

const as = () => ({ token: owner.token });

const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

async function createApp(name: string): Promise<{ applicationId: string; appName: string }> {
  const appName = uniqueName(`d1-${name}`);
  services.push(appName);
  return ok("application.create", { name, environmentId, appName });
}

async function gitApp(name: string, files: Record<string, string>) {
  const repo = uniqueName(name);
  await git.createRepo(repo, files);
  const app = await createApp(name);
  await ok("application.saveGitProvider", {
    applicationId: app.applicationId,
    customGitUrl: git.url(repo),
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
  return app;
}

async function deployment(deploymentId: string) {
  const response = await platform.query(
    "deployment.all",
    { applicationId: await applicationOf(deploymentId) },
    as(),
  );
  return (
    response.body as { deploymentId: string; status: string; logs: string; errorMessage: string | null }[]
  ).find((row) => row.deploymentId === deploymentId)!;
}

async function applicationOf(deploymentId: string): Promise<string> {
  const row = await platform.ctx.db
    .selectFrom("deployments")
    .select("applicationId")
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirstOrThrow();
  return row.applicationId as string;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + DEPLOY_WAIT_MS;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const ended = (deploymentId: string) =>
  waitFor(`${deploymentId} to end`, async () => {
    const row = await deployment(deploymentId);
    return row.status !== "idle" && row.status !== "running" && row;
  });

async function applicationStatus(applicationId: string): Promise<string> {
  return (await platform.query("application.one", { applicationId }, as())).body.applicationStatus;
}

beforeAll(async () => {
  await requireDocker();
  git = await startGitServer();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "d1-deployments-"));
  platform = await startTestPlatform(
    { NATS_URL, PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory } }, deployments: queueNames },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Deployments" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  // Only this run's images: other runs of this file may be deploying at the same time.
  await removeDeployedApps(services);
  await git?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
  const connection = await connect({ servers: NATS_URL });
  await (await jetstreamManager(connection)).streams.delete(queueNames.stream).catch(() => {});
  await connection.close();
}, 120_000);

describe("deployments through the real pipeline", () => {
  it(
    "deploy answers at once; the log streams live over SSE; the record ends done, the application done, an appDeploy event is stored",
    async () => {
      const app = await createApp("web");
      await ok("application.saveDockerProvider", {
        applicationId: app.applicationId,
        dockerImage: TEST_IMAGE,
      });
      await ok("application.update", { applicationId: app.applicationId, command: "httpd -f -p 8080 -h /" });
      const publishedPort = await freePort();
      await ok("port.create", { applicationId: app.applicationId, publishedPort, targetPort: 8080 });

      const started = await ok("application.deploy", { applicationId: app.applicationId, title: "First" });
      expect(started).toEqual({ success: true, deploymentId: expect.any(String) });
      const { deploymentId } = started;

      const stream = await platform.app.request(`/api/deployment.logs?deploymentId=${deploymentId}`, {
        headers: { authorization: `Bearer ${owner.token}` },
      });
      expect(stream.status).toBe(200);
      const text = await stream.text();
      const events = text.split("\n\n").filter(Boolean);
      expect(events.at(-1)).toBe(
        `event: end\ndata: ${JSON.stringify({ status: "done", errorMessage: null })}`,
      );
      const lines = events.slice(0, -1).map((event) => {
        // Each line's id is its time and its rank among the lines of that time (Last-Event-ID).
        const match = /^event: log\ndata: ((\d{4}-\d\d-\d\dT[\d:.]+Z) .*)\nid: (\S+) (\d+)$/.exec(event);
        expect(match, event).not.toBeNull();
        expect(match![3]).toBe(match![2]);
        return match![1]!;
      });
      expect(lines[0]).toContain(`Deployment ${deploymentId} started: First`);
      expect(lines.at(-1)).toContain("Deployment done");

      const row = await deployment(deploymentId);
      expect(row).toMatchObject({
        status: "done",
        title: "First",
        imageName: TEST_IMAGE,
        errorMessage: null,
      });
      expect(row.logs.trimEnd().split("\n")).toEqual(lines);
      expect(await applicationStatus(app.applicationId)).toBe("done");
      const events_ = await platform.ctx.db
        .selectFrom("events")
        .selectAll()
        .where("applicationId", "=", app.applicationId)
        .execute();
      expect(events_.map((event) => [event.kind, event.payload])).toEqual([
        [
          "appDeploy",
          expect.objectContaining({
            applicationName: "web",
            status: "success",
            message: "First: deployed",
            deploymentId,
            serviceType: "application",
          }),
        ],
      ]);
      const jobs = await platform.query("deployment.queueList", {}, as());
      expect(jobs.body.find((job: { id: string }) => job.id === deploymentId)).toMatchObject({
        state: "completed",
        appName: app.appName,
        failedReason: null,
      });
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "a broken build: the deployment is error with the build output, the application error, an appBuildError event",
    async () => {
      const app = await gitApp("broken", {
        Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo compiling-the-broken-build && exit 3\n`,
      });
      const { deploymentId } = await ok("application.deploy", { applicationId: app.applicationId });
      const row = await ended(deploymentId);
      expect(row.status).toBe("error");
      expect(row.errorMessage).toBeTruthy();
      expect(row.logs).toContain("compiling-the-broken-build");
      expect(row.logs).toContain(`Deployment failed: ${row.errorMessage}`);
      expect(await applicationStatus(app.applicationId)).toBe("error");
      const events = await platform.ctx.db
        .selectFrom("events")
        .selectAll()
        .where("applicationId", "=", app.applicationId)
        .execute();
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        kind: "appBuildError",
        payload: { applicationName: "broken", status: "error" },
      });
      const jobs = await platform.query("deployment.queueList", {}, as());
      expect(jobs.body.find((job: { id: string }) => job.id === deploymentId)).toMatchObject({
        state: "failed",
        failedReason: row.errorMessage,
      });
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "one deployment at a time per application: the second waits; killProcess and killBuild stop real builds",
    async () => {
      const app = await gitApp("slow", {
        Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo slow-build-started-${suffix} && sleep 600\n`,
      });
      const first = (await ok("application.deploy", { applicationId: app.applicationId })).deploymentId;
      await waitFor("the slow build to run", async () =>
        (await deployment(first)).logs.includes(`slow-build-started-${suffix}`),
      );
      const second = (await ok("application.redeploy", { applicationId: app.applicationId })).deploymentId;
      const jobs = await platform.query("deployment.queueList", {}, as());
      const state = (id: string) => jobs.body.find((job: { id: string }) => job.id === id)?.state;
      expect(state(first)).toBe("active");
      expect(state(second)).toBe("waiting");

      const killed = await ok("deployment.killProcess", { deploymentId: first });
      expect(killed).toEqual({ success: true, message: "Deployment killed" });
      const firstRow = await deployment(first);
      expect(firstRow).toMatchObject({ status: "error", errorMessage: "Killed by deployment.killProcess" });

      await waitFor("the second build to run", async () =>
        (await deployment(second)).logs.includes(`slow-build-started-${suffix}`),
      );
      expect(await applicationStatus(app.applicationId)).toBe("running");
      expect(await ok("application.killBuild", { applicationId: app.applicationId })).toEqual({
        success: true,
      });
      expect(await deployment(second)).toMatchObject({
        status: "error",
        errorMessage: "Killed by application.killBuild",
      });
      // Never deployed before: a stopped deployment leaves the application as it was.
      expect(await applicationStatus(app.applicationId)).toBe("idle");
      const events = await platform.ctx.db
        .selectFrom("events")
        .selectAll()
        .where("applicationId", "=", app.applicationId)
        .execute();
      expect(events).toEqual([]);
    },
    DEPLOY_WAIT_MS,
  );
});
