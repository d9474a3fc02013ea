/**
 * Several control planes on one PostgreSQL and one NATS (issue 40): copies started from dist/ as
 * processes differing only in PLATFORM_INSTANCE_ID, PORT and PLATFORM_DATA_DIR, with a private
 * NATS (JetStream, JWT) and an enrolled agent process. A login through one copy authorizes
 * project.all on another; what one copy writes the other answers (its caches invalidated through
 * NOTIFY); a server schedule firing every second runs once per tick however many copies fire it;
 * kill -9 of the copy that accepted application.deploy leaves the deployment done on the other
 * copy's deployment.all (the lease ran out and the live copy took it over).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import {
  type AgentProcess,
  killAgentProcess,
  startAgentProcess,
} from "../../apps/control-plane/src/agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../../apps/control-plane/src/agents/testing/nats-jwt.ts";
import { createTestDatabase } from "../../apps/control-plane/src/testing/harness.ts";
import type { ApiClient, ControlPlaneProcess } from "../support/control-plane.ts";
import { SERVING_COMMAND, startCopy as startSharedCopy, waitFor } from "./support.ts";

let nats: JwtNats;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let directory: string;
let agent: AgentProcess | undefined;
const copies: ControlPlaneProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

const copySet = { prefix: "ha-", copies, cleanups };

function startCopy(name: string): Promise<{ copy: ControlPlaneProcess; api: ApiClient }> {
  return startSharedCopy(
    copySet,
    name,
    {
      ...nats.env,
      PLATFORM_SECRET_KEY: "ha-test-secret-key-0123456789abcdef0123",
      RECONCILE_INTERVAL_MS: "1000",
    },
    database,
  );
}

function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  return waitFor(copies, what, check, { timeoutMs });
}

let a: ApiClient;
let b: ApiClient;
let first: ControlPlaneProcess;

beforeAll(async () => {
  await requireDocker();
  nats = await startJwtNats({ jetstream: true });
  database = await createTestDatabase();
  directory = await mkdtemp(path.join(tmpdir(), "ha-files-"));
  const one = await startCopy("copy-a");
  first = one.copy;
  a = one.api;
  b = (await startCopy("copy-b")).api;
}, 180_000);

afterAll(async () => {
  await killAgentProcess(agent);
  for (const copy of copies) await copy.stop();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await database?.drop();
  await nats?.stop();
  if (directory) await rm(directory, { recursive: true, force: true });
}, 120_000);

describe("two control planes on one database and one NATS", () => {
  it("a login through one copy authorizes project.all on the other, which lists what the first made", async () => {
    const session = await a.mutateOk("auth.register", {
      email: "owner@example.com",
      password: "correct-horse-battery",
      name: "Owner",
    });
    a.token = session.token;
    b.token = session.token;
    expect(await b.queryOk("project.all")).toEqual([]);
    const { project } = await a.mutateOk("project.create", { name: "Made on A" });
    await until("the project listed by copy B", async () =>
      (await b.queryOk<{ projectId: string }[]>("project.all")).some(
        (p) => p.projectId === project.projectId,
      ),
    );
    await b.mutateOk("project.update", { projectId: project.projectId, name: "Renamed on B" });
    await until(
      "the rename answered by copy A",
      async () => {
        const one = await a.queryOk("project.one", { projectId: project.projectId });
        return one.name === "Renamed on B";
      },
      20_000,
    );
  }, 90_000);

  it("runs a server schedule firing every second once per tick, whichever copy claims it", async () => {
    const server = await a.mutateOk("server.create", {
      name: "ha",
      ipAddress: "127.0.0.1",
      port: 22,
      username: "root",
    });
    const enrollment = await a.mutateOk("server.enrollmentCommand", { serverId: server.serverId });
    const stateDir = await mkdtemp(path.join(tmpdir(), "ha-agent-"));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    agent = startAgentProcess({
      stateDir,
      controlPlaneUrl: first.url,
      enrollmentToken: enrollment.token,
      heartbeatIntervalMs: 1000,
    });
    await until(
      "the agent online",
      async () => (await b.queryOk("server.one", { serverId: server.serverId })).online,
    );
    const file = path.join(directory, "ticks");
    const schedule = await b.mutateOk("schedule.create", {
      name: "Every second",
      scheduleType: "server",
      serverId: server.serverId,
      cronExpression: "* * * * * *",
      command: "echo unused",
      // The run's tick second, once per run: a second run of one tick would repeat a line.
      script: `date -u +%s >> '${file}'`,
      shellType: "sh",
    });
    const lines = async () => (await readFile(file, "utf8").catch(() => "")).split("\n").filter(Boolean);
    await until("six runs", async () => (await lines()).length >= 6);
    await a.mutateOk("schedule.update", { scheduleId: schedule.scheduleId, enabled: false });
    const runs = await a.queryOk<{ status: string }[]>("deployment.allByType", {
      id: schedule.scheduleId,
      type: "schedule",
    });
    // Each run appends one line; one copy's run per tick means no second holds two lines.
    const seconds = await lines();
    expect(new Set(seconds).size).toBe(seconds.length);
    expect(runs.filter((run) => run.status === "done").length).toBeLessThanOrEqual(seconds.length);
  }, 120_000);

  it("finishes on the other copy a deployment whose copy was killed with SIGKILL", async () => {
    const { environmentId } = (
      await a.queryOk<{ environments: { environmentId: string }[] }[]>("project.all")
    )[0]!.environments[0]!;
    const appName = uniqueName("ha");
    const application = await a.mutateOk("application.create", { name: appName, appName, environmentId });
    cleanups.push(() => dockerCli(["service", "rm", appName]));
    const { applicationId } = application;
    await a.mutateOk("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    await a.mutateOk("application.update", { applicationId, command: SERVING_COMMAND });
    await a.mutateOk("port.create", {
      applicationId,
      publishedPort: await freePort(),
      targetPort: 8080,
      publishMode: "host",
    });
    await a.mutateOk("application.deploy", { applicationId });
    await until("the deployment running", async () => {
      const all = await b.queryOk<{ status: string }[]>("deployment.all", { applicationId });
      return all.some((d) => d.status === "running");
    });
    first.child.kill("SIGKILL");
    await until(
      "the deployment done on copy B",
      async () => {
        const all = await b.queryOk<{ status: string }[]>("deployment.all", { applicationId });
        return all.length === 1 && all[0]!.status === "done";
      },
      60_000,
    );
    const all = await b.queryOk<{ status: string; logs?: string }[]>("deployment.all", { applicationId });
    expect(all.map((d) => d.status)).toEqual(["done"]);
  }, 120_000);
});
