/**
 * The deployment queue and worker, in embedded mode and on real NATS JetStream (its own stream
 * and subject prefix), with real databases. The pipeline is replaced by a runner the test
 * drives (each job waits until the test lets it finish, or its signal aborts it), because
 * these tests are about the queue: order, one job at a time per application, the global
 * concurrency, restarts, stopping jobs, queueList and the live log. routers/deployment.test.ts
 * runs the real pipeline against Docker.
 */
import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { TestNatsServer } from "@platform/agent/testing/nats-server.ts";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { DatabaseTarget } from "../db/database.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import {
  createTestDatabase,
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../testing/harness.ts";
import { LOG_CAP_CHARACTERS, LOG_TRUNCATED_NOTE } from "./logs.ts";
import type { DeploymentOutcome, DeploymentRun } from "./pipeline.ts";
import type { DeploymentRunner } from "./worker.ts";

// Each test starts one or two control planes.
vi.setConfig({ testTimeout: 120_000 });

const NATS_URL = "nats://127.0.0.1:4222";
const WAIT_MS = 20_000;

/** A pipeline stand-in: each run logs, then waits for finish(id) / fail(id) or its abort. */
class ScriptedPipeline {
  readonly started: string[] = [];
  private readonly gates = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();

  runner = async (_services: unknown, run: DeploymentRun): Promise<DeploymentOutcome> => {
    this.started.push(run.deploymentId);
    run.log(`cloning for ${run.kind}`);
    await new Promise<void>((resolve, reject) => {
      this.gates.set(run.deploymentId, { resolve, reject });
      run.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
    });
    run.log("built\nand deployed");
    return { imageName: `platform/test:${run.deploymentId}`, commitHash: "a".repeat(40) };
  };

  /** Lets the run finish once it has reached the pipeline (its row may say running a bit earlier). */
  async finish(deploymentId: string): Promise<void> {
    (await this.gate(deploymentId)).resolve();
  }

  async fail(deploymentId: string, message: string): Promise<void> {
    (await this.gate(deploymentId)).reject(new Error(message));
  }

  private gate(deploymentId: string) {
    return waitFor(`${deploymentId} in the pipeline`, async () => this.gates.get(deploymentId));
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const modes = [
  { mode: "embedded", env: {} as Record<string, string> },
  { mode: "NATS JetStream", env: { NATS_URL } as Record<string, string> },
];

describe.each(modes)("the deployment queue ($mode)", ({ mode, env }) => {
  const suffix = `${mode === "embedded" ? "e" : "n"}${randomBytes(4).toString("hex")}`;
  const queueNames = { stream: `TEST_QUEUE_${suffix}`, subjectPrefix: `test.queue.${suffix}` };
  const open: TestPlatform[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  async function start(
    pipeline: ScriptedPipeline | DeploymentRunner,
    concurrency = 2,
    options: {
      database?: DatabaseTarget;
      secret?: string;
      consumerInactiveMs?: number;
      shutdownGraceMs?: number;
    } = {},
  ): Promise<TestPlatform> {
    const platform = await startTestPlatform(
      { ...env, ...(options.secret ? { PLATFORM_SECRET_KEY: options.secret } : {}) },
      {
        agents: { localAgent: false },
        deployments: {
          ...queueNames,
          consumerInactiveMs: options.consumerInactiveMs,
          shutdownGraceMs: options.shutdownGraceMs,
          concurrency,
          runner: pipeline instanceof ScriptedPipeline ? pipeline.runner : pipeline,
        },
        database: options.database,
      },
    );
    open.push(platform);
    return platform;
  }

  afterEach(async () => {
    for (const platform of open.splice(0)) await platform.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  afterAll(async () => {
    if (!env.NATS_URL) return;
    const connection = await connect({ servers: NATS_URL });
    const manager = await jetstreamManager(connection);
    await manager.streams.delete(queueNames.stream).catch(() => {});
    await connection.close();
  });

  async function setup(platform: TestPlatform, owner?: Session) {
    const session = owner ?? (await platform.registerOwner());
    const project = await platform.mutate("project.create", { name: "Queue" }, { token: session.token });
    const environmentId = project.body.environment.environmentId as string;
    const createApp = async (name: string) => {
      const response = await platform.mutate(
        "application.create",
        { name, environmentId },
        { token: session.token },
      );
      expect(response.status).toBe(200);
      return response.body.applicationId as string;
    };
    const deploy = async (applicationId: string, input: Record<string, unknown> = {}) => {
      const response = await platform.mutate(
        "application.deploy",
        { applicationId, ...input },
        { token: session.token },
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.success).toBe(true);
      return response.body.deploymentId as string;
    };
    const row = (deploymentId: string) =>
      platform.ctx.db
        .selectFrom("deployments")
        .selectAll()
        .where("deploymentId", "=", deploymentId)
        .executeTakeFirstOrThrow();
    const waitStatus = (deploymentId: string, status: string) =>
      waitFor(`${deploymentId} ${status}`, async () => {
        const current = await row(deploymentId);
        return current.status === status && current;
      });
    const appStatus = async (applicationId: string) =>
      (await platform.query("application.one", { applicationId }, { token: session.token })).body
        .applicationStatus as string;
    return { session, as: { token: session.token }, createApp, deploy, row, waitStatus, appStatus };
  }

  it("runs a deployment: idle -> running -> done with a timestamped log, the application done and an appDeploy event", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline);
    const t = await setup(platform);
    const app = await t.createApp("Web");
    const deploymentId = await t.deploy(app);
    const running = await t.waitStatus(deploymentId, "running");
    expect(running.title).toBe("Manual deployment");
    expect(running.startedAt).not.toBeNull();
    // The worker marks the application running right after it claimed the deployment.
    await waitFor("the application running", async () => (await t.appStatus(app)) === "running");

    await pipeline.finish(deploymentId);
    const done = await t.waitStatus(deploymentId, "done");
    expect(done.imageName).toBe(`platform/test:${deploymentId}`);
    expect(done.completedAt).not.toBeNull();
    const lines = done.logs.trimEnd().split("\n");
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /);
    expect(lines.map((line) => line.slice(25))).toEqual([
      `Deployment ${deploymentId} started: Manual deployment`,
      "cloning for deploy",
      "built",
      "and deployed",
      "Deployment done",
    ]);
    expect(await t.appStatus(app)).toBe("done");
    const events = await platform.ctx.db.selectFrom("events").selectAll().execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: "appDeploy",
      applicationId: app,
      organizationId: t.session.user.organizationId,
      payload: { applicationName: "Web", status: "success" },
    });

    const list = await platform.query("deployment.all", { applicationId: app }, t.as);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({
      deploymentId,
      status: "done",
      title: "Manual deployment",
      logPath: `/api/deployment.logs?deploymentId=${deploymentId}`,
      commitHash: "a".repeat(40),
    });
    expect(list.body[0]).not.toHaveProperty("archivePath");
    const one = await platform.query("application.one", { applicationId: app }, t.as);
    expect(one.body.deployments.map((d: { deploymentId: string }) => d.deploymentId)).toEqual([deploymentId]);
  });

  it("a failed deployment is error with its reason, the application error and an appBuildError event; redeploy titles", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline);
    const t = await setup(platform);
    const app = await t.createApp("Api");
    const response = await platform.mutate("application.redeploy", { applicationId: app }, t.as);
    expect(response.status).toBe(200);
    const deploymentId = response.body.deploymentId;
    await t.waitStatus(deploymentId, "running");
    await pipeline.fail(deploymentId, "docker build exited with code 1");
    const failed = await t.waitStatus(deploymentId, "error");
    expect(failed.title).toBe("Rebuild deployment");
    expect(failed.kind).toBe("redeploy");
    expect(failed.errorMessage).toBe("docker build exited with code 1");
    expect(failed.logs).toContain("cloning for redeploy");
    expect(failed.logs).toContain("Deployment failed: docker build exited with code 1");
    expect(await t.appStatus(app)).toBe("error");
    const events = await platform.ctx.db.selectFrom("events").selectAll().execute();
    expect(events.map((event) => [event.kind, event.payload.status])).toEqual([["appBuildError", "error"]]);
    expect(events[0]!.payload.message).toContain("docker build exited with code 1");
  });

  it("runs one deployment at a time per application, others in parallel up to the concurrency", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline, 2);
    const t = await setup(platform);
    const [a, b, c] = [await t.createApp("A"), await t.createApp("B"), await t.createApp("C")];
    const a1 = await t.deploy(a, { title: "first" });
    const a2 = await t.deploy(a, { title: "second" });
    const b1 = await t.deploy(b);
    await t.waitStatus(a1, "running");
    await t.waitStatus(b1, "running");
    const c1 = await t.deploy(c);

    const jobs = await platform.query("deployment.queueList", {}, t.as);
    expect(jobs.status).toBe(200);
    const stateOf = (id: string) => jobs.body.find((job: { id: string }) => job.id === id);
    expect(stateOf(a1)).toMatchObject({ state: "active", name: "deploy", title: "first", applicationId: a });
    expect(stateOf(a1).startedAt).not.toBeNull();
    expect(stateOf(a2)).toMatchObject({
      state: "waiting",
      startedAt: null,
      finishedAt: null,
      title: "second",
    });
    expect(stateOf(a2).queuedAt).toMatch(/^\d{4}-/);
    expect(stateOf(b1).state).toBe("active");
    // Both slots are taken: C waits although its application is free.
    expect(stateOf(c1).state).toBe("waiting");
    expect((await t.row(a2)).status).toBe("idle");

    await pipeline.finish(b1);
    await t.waitStatus(c1, "running");
    expect((await t.row(a2)).status).toBe("idle");
    await pipeline.fail(a1, "boom");
    await t.waitStatus(a2, "running");
    await pipeline.finish(a2);
    await pipeline.finish(c1);
    await t.waitStatus(a2, "done");
    await t.waitStatus(c1, "done");
    expect(pipeline.started.indexOf(a2)).toBeGreaterThan(pipeline.started.indexOf(a1));

    const finished = await platform.query("deployment.queueList", {}, t.as);
    const after = (id: string) => finished.body.find((job: { id: string }) => job.id === id);
    expect(after(a1)).toMatchObject({ state: "failed", failedReason: "boom" });
    expect(after(a1).finishedAt).not.toBeNull();
    expect(after(a2)).toMatchObject({ state: "completed", failedReason: null });

    // Another organization sees none of these jobs, and none of these deployments.
    const stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
    const theirs = { token: stranger.token };
    expect((await platform.query("deployment.queueList", {}, theirs)).body).toEqual([]);
    expect((await platform.query("deployment.allCentralized", {}, theirs)).body).toEqual([]);
    expect((await platform.query("deployment.all", { applicationId: a }, theirs)).status).toBe(404);
    expect((await platform.mutate("deployment.killProcess", { deploymentId: a2 }, theirs)).status).toBe(404);
    expect((await platform.mutate("deployment.removeDeployment", { deploymentId: a2 }, theirs)).status).toBe(
      404,
    );
    expect((await platform.mutate("application.deploy", { applicationId: a }, theirs)).status).toBe(404);
    expect((await platform.mutate("application.cleanQueues", { applicationId: a }, theirs)).status).toBe(404);
    const central = await platform.query("deployment.allCentralized", {}, t.as);
    expect(central.body).toHaveLength(4);
    const applicationOf = Object.fromEntries(
      central.body.map((row: { deploymentId: string; application: unknown }) => [
        row.deploymentId,
        row.application,
      ]),
    );
    for (const [deploymentId, applicationId, name] of [
      [a1, a, "A"],
      [a2, a, "A"],
      [b1, b, "B"],
      [c1, c, "C"],
    ]) {
      expect(applicationOf[deploymentId!]).toEqual({
        applicationId,
        name,
        appName: expect.stringMatching(new RegExp(`^${name!.toLowerCase()}-`)),
      });
    }
  });

  it("killProcess aborts a running deployment and drops a waiting one; cleanQueues drops the waiting ones", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline, 2);
    const t = await setup(platform);
    const app = await t.createApp("Kill");
    const first = await t.deploy(app);
    const second = await t.deploy(app);
    const third = await t.deploy(app);
    await t.waitStatus(first, "running");

    const dropped = await platform.mutate("deployment.killProcess", { deploymentId: second }, t.as);
    expect(dropped.body).toEqual({ success: true, message: "Deployment removed from the queue" });
    expect(await t.row(second)).toMatchObject({
      status: "error",
      errorMessage: "Killed by deployment.killProcess",
    });

    const removeRunning = await platform.mutate("deployment.removeDeployment", { deploymentId: first }, t.as);
    expect(removeRunning.status).toBe(409);

    const killed = await platform.mutate("deployment.killProcess", { deploymentId: first }, t.as);
    expect(killed.body).toEqual({ success: true, message: "Deployment killed" });
    const row = await t.row(first);
    expect(row).toMatchObject({ status: "error", errorMessage: "Killed by deployment.killProcess" });
    expect(row.logs).toContain("Killed by deployment.killProcess");
    expect(await platform.ctx.db.selectFrom("events").selectAll().execute()).toEqual([]);

    await t.waitStatus(third, "running");
    const fourth = await t.deploy(app);
    const fifth = await t.deploy(app);
    const cleaned = await platform.mutate("application.cleanQueues", { applicationId: app }, t.as);
    expect(cleaned.body).toEqual({ success: true });
    for (const id of [fourth, fifth]) {
      expect(await t.row(id)).toMatchObject({
        status: "error",
        errorMessage: "Removed from the queue by application.cleanQueues",
      });
    }
    expect((await t.row(third)).status).toBe("running");
    const again = await platform.mutate("deployment.killProcess", { deploymentId: fourth }, t.as);
    expect(again.body.success).toBe(false);

    const cancelled = await platform.mutate("application.cancelDeployment", { applicationId: app }, t.as);
    expect(cancelled.body).toEqual({ success: true, message: "Deployment cancelled" });
    expect(await t.row(third)).toMatchObject({
      status: "error",
      errorMessage: "Cancelled by application.cancelDeployment",
    });
    // Nothing else waits: the application is back where it was (never deployed: idle); no event.
    expect(await t.appStatus(app)).toBe("idle");
    expect(await platform.ctx.db.selectFrom("events").selectAll().execute()).toEqual([]);
    const nothing = await platform.mutate("application.cancelDeployment", { applicationId: app }, t.as);
    expect(nothing.body.success).toBe(false);

    // A job dropped from the queue never runs, even once the queue reaches it.
    const sixth = await t.deploy(app);
    await t.waitStatus(sixth, "running");
    const killBuild = await platform.mutate("application.killBuild", { applicationId: app }, t.as);
    expect(killBuild.body).toEqual({ success: true });
    expect((await t.row(sixth)).errorMessage).toBe("Killed by application.killBuild");
    expect(pipeline.started).not.toContain(second);
    expect(pipeline.started).not.toContain(fourth);
    expect(pipeline.started).not.toContain(fifth);

    // clearDeployments keeps the newest successful deployment and the running ones.
    const seventh = await t.deploy(app);
    await t.waitStatus(seventh, "running");
    await pipeline.finish(seventh);
    await t.waitStatus(seventh, "done");
    const eighth = await t.deploy(app);
    await t.waitStatus(eighth, "running");
    const cleared = await platform.mutate("application.clearDeployments", { applicationId: app }, t.as);
    expect(cleared.body).toEqual({ success: true });
    const left = await platform.query("deployment.all", { applicationId: app }, t.as);
    expect(left.body.map((d: { deploymentId: string }) => d.deploymentId).sort()).toEqual(
      [seventh, eighth].sort(),
    );
    await pipeline.finish(eighth);
    await t.waitStatus(eighth, "done");
    const removed = await platform.mutate("deployment.removeDeployment", { deploymentId: seventh }, t.as);
    expect(removed.body).toEqual({ success: true });
    expect((await platform.query("deployment.all", { applicationId: app }, t.as)).body).toHaveLength(1);
  });

  it("members deploy and stop deployments; removing history needs canDeleteServices, as clearing it does", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline);
    const t = await setup(platform);
    const member = await platform.addMember(t.session, "member");
    const admin = await platform.addMember(t.session, "admin");
    const app = await t.createApp("Perm");
    const byMember = await platform.mutate(
      "application.deploy",
      { applicationId: app },
      { token: member.token },
    );
    expect(byMember.status).toBe(200);
    const deploymentId = byMember.body.deploymentId;
    await t.waitStatus(deploymentId, "running");
    expect((await platform.query("deployment.queueList", {}, { token: member.token })).body).toHaveLength(1);
    const killed = await platform.mutate("deployment.killProcess", { deploymentId }, { token: member.token });
    expect(killed.body.success).toBe(true);
    const denied = await platform.mutate(
      "deployment.removeDeployment",
      { deploymentId },
      { token: member.token },
    );
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toMatch(/canDeleteServices/);
    const clearDenied = await platform.mutate(
      "application.clearDeployments",
      { applicationId: app },
      { token: member.token },
    );
    expect(clearDenied.status).toBe(403);
    const byAdmin = await platform.mutate(
      "deployment.removeDeployment",
      { deploymentId },
      { token: admin.token },
    );
    expect(byAdmin.status).toBe(200);
  });

  it("application.delete stops the running deployment and drops the waiting ones first", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline);
    const t = await setup(platform);
    const app = await t.createApp("Gone");
    const running = await t.deploy(app);
    const waiting = await t.deploy(app);
    await t.waitStatus(running, "running");
    await waitFor("the pipeline to start", async () => pipeline.started.includes(running));
    const deleted = await platform.mutate("application.delete", { applicationId: app }, t.as);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    // The aborted run ended before the row went; the waiting one never started.
    expect(platform.ctx.deployments.worker.isRunning(running)).toBe(false);
    expect(pipeline.started).toEqual([running]);
    expect(await platform.ctx.db.selectFrom("deployments").selectAll().execute()).toEqual([]);
    expect(waiting).toBeDefined();
  });

  it("refuses bad input naming the field", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline);
    const t = await setup(platform);
    const app = await t.createApp("Bad");
    const title = await platform.mutate(
      "application.deploy",
      { applicationId: app, title: "x\nfake line" },
      t.as,
    );
    expect(title.status).toBe(400);
    expect(title.body.error.data.fields).toEqual(["title"]);
    const missing = await platform.mutate("application.deploy", {}, t.as);
    expect(missing.status).toBe(400);
    expect(missing.body.error.data.fields).toEqual(["applicationId"]);
    const type = await platform.query("deployment.allByType", { id: app, type: "nope" }, t.as);
    expect(type.status).toBe(400);
    expect(type.body.error.data.fields).toEqual(["type"]);
    // An application's id is no compose stack's.
    expect((await platform.query("deployment.allByType", { id: app, type: "compose" }, t.as)).status).toBe(
      404,
    );
    expect((await platform.query("deployment.allByServer", { serverId: "nope" }, t.as)).status).toBe(404);
    expect(await platform.ctx.db.selectFrom("deployments").selectAll().execute()).toEqual([]);
  });

  it("streams a deployment's log live over SSE and ends with its status", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline);
    const t = await setup(platform);
    const app = await t.createApp("Live");
    const deploymentId = await t.deploy(app);
    await t.waitStatus(deploymentId, "running");

    const response = await platform.app.request(`/api/deployment.logs?deploymentId=${deploymentId}`, {
      headers: { authorization: `Bearer ${t.session.token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = "";
    const readUntil = async (text: string) => {
      while (!received.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${text}: ${received}`);
        received += value;
      }
    };
    await readUntil("cloning for deploy");
    expect(received).toContain("event: log");
    expect(received).not.toContain("built");
    await pipeline.finish(deploymentId);
    await readUntil("event: end");
    await readUntil("}\n");
    expect(received).toMatch(/data: \S+Z built\n/);
    expect(received).toContain(`data: ${JSON.stringify({ status: "done", errorMessage: null })}`);
    expect((await reader.read()).done).toBe(true);

    // A finished deployment: its stored log, then the end.
    const replay = await platform.app.request(`/api/deployment.logs?deploymentId=${deploymentId}`, {
      headers: { authorization: `Bearer ${t.session.token}` },
    });
    const text = await replay.text();
    expect(text.match(/event: log/g)).toHaveLength(5);
    expect(text.trimEnd().endsWith(`data: ${JSON.stringify({ status: "done", errorMessage: null })}`)).toBe(
      true,
    );

    // Same authentication as procedures; another organization's deployment is a 404.
    const anonymous = await platform.app.request(`/api/deployment.logs?deploymentId=${deploymentId}`);
    expect(anonymous.status).toBe(401);
    const stranger = await createUserDirectly(platform, { email: "other@example.com" });
    const foreign = await platform.app.request(`/api/deployment.logs?deploymentId=${deploymentId}`, {
      headers: { authorization: `Bearer ${stranger.token}` },
    });
    expect(foreign.status).toBe(404);
    const missing = await platform.app.request("/api/deployment.logs", {
      headers: { authorization: `Bearer ${t.session.token}` },
    });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.data.fields).toEqual(["deploymentId"]);
  });

  it("follows a waiting deployment from its first line, and ends one dropped from the queue", async () => {
    const pipeline = new ScriptedPipeline();
    const platform = await start(pipeline, 1);
    const t = await setup(platform);
    const app = await t.createApp("Wait");
    const first = await t.deploy(app);
    const second = await t.deploy(app);
    const third = await t.deploy(app);
    await t.waitStatus(first, "running");
    const follow = async (id: string) => {
      const response = await platform.app.request(`/api/deployment.logs?deploymentId=${id}`, {
        headers: { authorization: `Bearer ${t.session.token}` },
      });
      return response.text();
    };
    const secondLog = follow(second);
    const thirdLog = follow(third);
    // Let both followers subscribe before anything moves.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await platform.mutate("deployment.killProcess", { deploymentId: third }, t.as);
    await pipeline.finish(first);
    await t.waitStatus(second, "running");
    await pipeline.finish(second);
    const secondText = await secondLog;
    expect(secondText).toContain(`started: Manual deployment`);
    expect(secondText).toContain("Deployment done");
    expect(secondText).toContain('"status":"done"');
    const thirdText = await thirdLog;
    expect(thirdText).toContain("Killed by deployment.killProcess");
    expect(thirdText).toContain('"status":"error"');
  });

  it("a job that gives its slot back (it only waits for its agent) lets another application's job run, and takes a slot back before it goes on", async () => {
    const gates = new Map<string, () => void>();
    const tookBack: string[] = [];
    let first = true;
    const runner = async (_services: unknown, run: DeploymentRun): Promise<DeploymentOutcome> => {
      const waiting = first;
      first = false;
      if (waiting) run.slot?.giveBack();
      await new Promise<void>((resolve) => gates.set(run.deploymentId, resolve));
      if (waiting) {
        // Its agent answers again: it goes on only with a slot (concurrency 1: once Other ends).
        await run.slot?.take();
        tookBack.push(run.deploymentId);
      }
      return { imageName: `platform/test:${run.deploymentId}` };
    };
    const platform = await start(runner, 1);
    const t = await setup(platform);
    const stuck = await t.deploy(await t.createApp("Stuck"));
    await waitFor("the stuck job in the pipeline", async () => gates.has(stuck));
    const other = await t.deploy(await t.createApp("Other"));
    await waitFor("the other job to run beside it", async () => gates.has(other));
    gates.get(stuck)!();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(tookBack, "the only slot is Other's").toEqual([]);
    const third = await t.deploy(await t.createApp("Third"));
    gates.get(other)!();
    await t.waitStatus(other, "done");
    await t.waitStatus(stuck, "done");
    expect(tookBack).toEqual([stuck]);
    // Third waited for the slot Stuck took back first.
    await waitFor("the third job", async () => gates.has(third));
    gates.get(third)!();
    await t.waitStatus(third, "done");
  });

  it("keeps only the last 512 KiB of a log and says so", async () => {
    const chatty = async (_services: unknown, run: DeploymentRun): Promise<DeploymentOutcome> => {
      const line = "x".repeat(1000);
      for (let i = 0; i < 700; i++) run.log(`${i} ${line}`);
      return { imageName: "platform/test:big" };
    };
    const platform = await start(chatty);
    const t = await setup(platform);
    const deploymentId = await t.deploy(await t.createApp("Big"));
    const row = await t.waitStatus(deploymentId, "done");
    expect(row.logs.length).toBeLessThanOrEqual(LOG_CAP_CHARACTERS + LOG_TRUNCATED_NOTE.length + 1);
    expect(row.logs.startsWith(`${LOG_TRUNCATED_NOTE}\n`)).toBe(true);
    expect(row.logs).toContain(" 699 xxx");
    expect(row.logs).not.toContain(" 0 xxx");
  });

  // Two control planes at once on one database.
  it.runIf(mode !== "embedded")(
    "a control plane that dies mid-run: with no agent answering the next one leaves that deployment running (unknown), and once it is stopped runs the waiting one",
    async () => {
      const crashNames = { ...queueNames, ackWaitMs: 2000 };
      const secret = randomBytes(32).toString("base64");
      const created = await createTestDatabase({ migrated: true });
      cleanups.push(created.drop);
      const before = new ScriptedPipeline();
      const dying = await startTestPlatform(
        { ...env, PLATFORM_SECRET_KEY: secret },
        {
          agents: { localAgent: false },
          deployments: { ...crashNames, concurrency: 1, runner: before.runner },
          database: created.target,
        },
      );
      open.push(dying);
      const t = await setup(dying);
      const app = await t.createApp("Crash");
      const interrupted = await t.deploy(app);
      await waitFor("the first job in the pipeline", async () => before.started.includes(interrupted));
      const waiting = await t.deploy(app);
      // Its NATS connection dies without acking: for JetStream the control plane is gone.
      await (
        dying.ctx.deployments as unknown as { connection: { close(): Promise<void> } }
      ).connection.close();

      const after = new ScriptedPipeline();
      // No agent runs here: nothing is known of the interrupted deployment, so it stays running
      // past the watchdog (never guessed failed), and the application's next job waits; a
      // stop ends it (fault tests in tests/faults/ cover a real agent that finished, failed or
      // lost the deployment).
      const next = await startTestPlatform(
        { ...env, PLATFORM_SECRET_KEY: secret, DEPLOYMENT_WATCHDOG_MS: "1000" },
        {
          agents: { localAgent: false },
          deployments: { ...crashNames, concurrency: 1, runner: after.runner },
          database: created.target,
        },
      );
      open.push(next);
      const row = (id: string) =>
        next.ctx.db
          .selectFrom("deployments")
          .selectAll()
          .where("deploymentId", "=", id)
          .executeTakeFirstOrThrow();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect((await row(interrupted)).status).toBe("running");
      expect((await row(waiting)).status).toBe("idle");
      const killed = await next.mutate("deployment.killProcess", { deploymentId: interrupted }, t.as);
      expect(killed.status).toBe(200);
      expect(await row(interrupted)).toMatchObject({ status: "error" });
      await after.finish(waiting);
      await waitFor(
        "the waiting job to run on the new control plane",
        async () => (await row(waiting)).status === "done",
      );
      expect(after.started).toEqual([waiting]);
    },
  );

  it.skipIf(mode === "embedded")(
    "JetStream removes an idle application's consumer, and the next deploy makes it again",
    async () => {
      const pipeline = new ScriptedPipeline();
      const platform = await start(pipeline, 2, { consumerInactiveMs: 1_000 });
      const t = await setup(platform);
      const app = await t.createApp("Idle");
      const connection = await connect({ servers: NATS_URL });
      const manager = await jetstreamManager(connection);
      const consumerExists = () =>
        manager.consumers.info(queueNames.stream, `app-${app}`).then(
          () => true,
          () => false,
        );
      try {
        const first = await t.deploy(app);
        await pipeline.finish(first);
        await t.waitStatus(first, "done");
        await waitFor("the idle consumer to be removed", async () => !(await consumerExists()));
        const second = await t.deploy(app);
        expect(await consumerExists()).toBe(true);
        await pipeline.finish(second);
        await t.waitStatus(second, "done");
      } finally {
        await connection.close();
      }
    },
  );

  it("a stop hands the running job back to the queue: after a restart it runs again, before the jobs queued behind it", async () => {
    const secret = randomBytes(32).toString("base64");
    const { target: database, drop } = await createTestDatabase({ migrated: true });
    cleanups.push(drop);
    const before = new ScriptedPipeline();
    const first = await start(before, 1, { database, secret, shutdownGraceMs: 300 });
    const t = await setup(first);
    const app = await t.createApp("Restart");
    const other = await t.createApp("Other");
    const interrupted = await t.deploy(app);
    await t.waitStatus(interrupted, "running");
    const queued = await t.deploy(app);
    const queuedOther = await t.deploy(other);
    const stopping = Date.now();
    await first.close();
    expect(Date.now() - stopping).toBeLessThan(5000);
    open.splice(open.indexOf(first), 1);

    const after = new ScriptedPipeline();
    const second = await start(after, 1, { database, secret });
    const query = (id: string) =>
      second.ctx.db
        .selectFrom("deployments")
        .selectAll()
        .where("deploymentId", "=", id)
        .executeTakeFirstOrThrow();
    expect((await query(interrupted)).logs).toContain(
      "Handed back to the queue: the control plane is stopping",
    );
    // One at a time (concurrency 1): the handed-back job runs before the one queued behind it.
    for (let i = 0; i < 3; i++) {
      await waitFor(`job ${i + 1} to start`, async () => after.started.length > i);
      await after.finish(after.started[i]!);
    }
    expect(after.started.indexOf(interrupted)).toBeLessThan(after.started.indexOf(queued));
    expect(after.started).toEqual(expect.arrayContaining([interrupted, queued, queuedOther]));
    for (const id of [interrupted, queued, queuedOther]) {
      await waitFor(`${id} done`, async () => (await query(id)).status === "done");
    }
    // The run after the hand-back appended to the log of the first one.
    const log = (await query(interrupted)).logs;
    expect(log).toMatch(
      /cloning for deploy\n.*Handed back to the queue[^\n]*\n(.*\n)*.*cloning for deploy\n/,
    );
    expect(log).toContain("Deployment done");
    const appRow = await second.ctx.db
      .selectFrom("applications")
      .select("applicationStatus")
      .where("applicationId", "=", app)
      .executeTakeFirstOrThrow();
    expect(appRow.applicationStatus).toBe("done");
  });
});

describe("the deployment queue on a NATS account without JetStream", () => {
  it("falls back to the in-memory queue, says so, and still runs deployments", async () => {
    const nats = await TestNatsServer.start("");
    const pipeline = new ScriptedPipeline();
    const platform = await startTestPlatform(
      { NATS_URL: nats.url },
      { agents: { localAgent: false }, deployments: { runner: pipeline.runner } },
    );
    try {
      expect(platform.logLines.join("\n")).toContain("NATS has no JetStream for this account");
      const owner = await platform.registerOwner();
      const project = await platform.mutate("project.create", { name: "P" }, { token: owner.token });
      const app = await platform.mutate(
        "application.create",
        { name: "A", environmentId: project.body.environment.environmentId },
        { token: owner.token },
      );
      const deployed = await platform.mutate(
        "application.deploy",
        { applicationId: app.body.applicationId },
        { token: owner.token },
      );
      expect(deployed.status).toBe(200);
      await pipeline.finish(deployed.body.deploymentId);
      await waitFor("the deployment to end", async () => {
        const row = await platform.ctx.db
          .selectFrom("deployments")
          .select("status")
          .where("deploymentId", "=", deployed.body.deploymentId)
          .executeTakeFirstOrThrow();
        return row.status === "done";
      });
    } finally {
      await platform.close();
      await nats.stop();
    }
  });
});
