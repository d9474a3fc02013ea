/**
 * Issue 39's engine settings on the real database, this machine's real agent and Docker:
 * updateLogCleanup's cron empties the proxy's access log (croner fires, the tick is claimed in
 * cron_ticks, the agent truncates the file); cleanMonitoring deletes the agent's stored metrics
 * and docker.getServerHealth reads them and the engine; reloadServer and updateServer force a
 * new task of a real Swarm service standing for the control plane's (and refuse with a 400 when
 * the control plane runs as none). Another organization's administrator is refused each.
 */
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";

vi.setConfig({ testTimeout: 120_000 });

type Docker = Awaited<ReturnType<typeof requireDocker>>;

const WAIT_MS = 30_000;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let docker: Docker;
let mainDirectory: string;
let platform: TestPlatform;
let owner: Session;
let stranger: Session;
const as = (session: Session) => ({ token: session.token });

beforeAll(async () => {
  docker = await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-engine-"));
  platform = await startTestPlatform(
    {},
    { agents: { localAgent: { docker, mainDirectory, proxyServiceName: uniqueName("no-proxy") } } },
  );
  owner = await platform.registerOwner();
  stranger = await createUserDirectly(platform, { email: "engine-stranger@example.com" });
}, 60_000);

afterAll(async () => {
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

describe("settings.updateLogCleanup", () => {
  const accessLog = () => path.join(mainDirectory, "traefik", "access.log");

  it("refuses what is not a cron expression, naming cronExpression", async () => {
    for (const cronExpression of ["every day", "61 * * * *", "", 5]) {
      const refused = await platform.mutate("settings.updateLogCleanup", { cronExpression }, as(owner));
      expect(refused.status, JSON.stringify(cronExpression)).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["cronExpression"]);
    }
    expect((await platform.query("settings.getLogCleanupStatus", {}, as(owner))).body).toEqual({
      enabled: false,
      cronExpression: null,
    });
  });

  it("empties the proxy's access log on its cron, through this machine's agent, and stops with null", async () => {
    await mkdir(path.dirname(accessLog()), { recursive: true });
    await writeFile(
      accessLog(),
      `${JSON.stringify({ RequestPath: "/", DownstreamStatus: 200 })}\n`.repeat(50),
    );
    expect((await stat(accessLog())).size).toBeGreaterThan(0);

    // Every second (croner's six fields), so the test sees a tick.
    const set = await platform.mutate(
      "settings.updateLogCleanup",
      { cronExpression: "* * * * * *" },
      as(owner),
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await platform.query("settings.getLogCleanupStatus", {}, as(owner))).body).toEqual({
      enabled: true,
      cronExpression: "* * * * * *",
    });
    await waitFor("the access log emptied", async () => (await stat(accessLog())).size === 0);
    // Emptied in place: the file Traefik holds open is still there.
    expect((await stat(accessLog())).isFile()).toBe(true);
    const ticks = await platform.ctx.db
      .selectFrom("cronTicks")
      .select("job")
      .where("job", "=", "log cleanup")
      .execute();
    expect(ticks.length).toBeGreaterThan(0);

    const off = await platform.mutate("settings.updateLogCleanup", { cronExpression: null }, as(owner));
    expect(off.status).toBe(200);
    expect((await platform.query("settings.getLogCleanupStatus", {}, as(owner))).body).toEqual({
      enabled: false,
      cronExpression: null,
    });
    expect(platform.ctx.logCleanup.nextRun()).toBeNull();
  });

  it("is the instance administrator's: another organization's owner is refused and nothing changes", async () => {
    const refused = await platform.mutate(
      "settings.updateLogCleanup",
      { cronExpression: "0 0 * * *" },
      as(stranger),
    );
    expect(refused.status).toBe(403);
    const row = await platform.ctx.db
      .selectFrom("webServerSettings")
      .select("logCleanupCron")
      .executeTakeFirstOrThrow();
    expect(row.logCleanupCron).toBeNull();
  });
});

describe("docker.getServerHealth and settings.cleanMonitoring", () => {
  const storeDay = (series: string, day: string) =>
    path.join(mainDirectory, "monitoring", "store", series, `${day}.jsonl`);

  beforeAll(async () => {
    const now = Date.now();
    const sample = (minutesAgo: number, cpu: number, memory: number) =>
      JSON.stringify({
        timestamp: new Date(now - minutesAgo * 60_000).toISOString(),
        cpu: cpu.toFixed(2),
        memUsed: memory.toFixed(2),
        diskUsed: "42.50",
      });
    const today = new Date(now).toISOString().slice(0, 10);
    await mkdir(path.dirname(storeDay("system", today)), { recursive: true });
    await mkdir(path.dirname(storeDay("containers", today)), { recursive: true });
    // Two samples in the last hour, one three days old (outside a 24 h window, in its own file).
    await writeFile(storeDay("system", today), `${sample(30, 10, 40)}\n${sample(5, 30, 60)}\n`);
    const old = new Date(now - 3 * 86_400_000).toISOString().slice(0, 10);
    await writeFile(storeDay("system", old), `${sample(3 * 1440, 99, 99)}\n`);
    await writeFile(storeDay("containers", today), `${JSON.stringify({ appName: "x", timestamp: "" })}\n`);
  });

  it("getServerHealth answers the engine as it runs and the samples of the window", async () => {
    // A stopped container of the test's own, so that the engine has at least one whatever the
    // other test files run meanwhile.
    const own = await docker.createContainer({
      Image: TEST_IMAGE,
      name: uniqueName("health"),
      Cmd: ["true"],
    });
    // Other test files create and remove containers meanwhile: the answer is bracketed by a
    // listing before and one after it, each within the same tolerance of 5.
    const before = (await docker.listContainers({ all: true })).length;
    const answer = await platform.query("docker.getServerHealth", { sinceHours: 24 }, as(owner));
    const after = (await docker.listContainers({ all: true })).length;
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const health = answer.body;
    const version = (await docker.version()).Version;
    expect(health.serverId).toBeNull();
    expect(health.docker).toMatchObject({ reachable: true, version, error: null });
    const counted = health.docker.containers.running + health.docker.containers.stopped;
    await own.remove({ force: true });
    expect(health.docker.containers.stopped).toBeGreaterThan(0);
    expect(counted).toBeGreaterThan(Math.min(before, after) - 5);
    expect(counted).toBeLessThan(Math.max(before, after) + 5);
    expect(health.metrics).toMatchObject({
      sinceHours: 24,
      samples: 2,
      cpu: { average: 20, max: 30 },
      memory: { average: 50, max: 60 },
      diskUsed: 42.5,
    });
    const wide = await platform.query("docker.getServerHealth", { sinceHours: 96 }, as(owner));
    expect(wide.body.metrics.samples).toBe(3);
    expect(wide.body.metrics.cpu.max).toBe(99);

    for (const sinceHours of [0, 721, 1.5]) {
      const refused = await platform.query("docker.getServerHealth", { sinceHours }, as(owner));
      expect(refused.status).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["sinceHours"]);
    }
  });

  it("another organization's server is a 404; this machine is not another organization's", async () => {
    const theirs = await insertServer(platform.ctx.db, owner.user.organizationId, { name: "owner-node" });
    const asStranger = await platform.query("docker.getServerHealth", { serverId: theirs }, as(stranger));
    expect(asStranger.status).toBe(404);
    const local = await platform.query("docker.getServerHealth", {}, as(stranger));
    expect(local.status).toBe(400);
    expect(local.body.error.data.fields).toEqual(["serverId"]);
    const cleaned = await platform.mutate("settings.cleanMonitoring", { serverId: theirs }, as(stranger));
    expect(cleaned.status).toBe(404);
  });

  it("cleanMonitoring deletes every stored sample: the health then counts none", async () => {
    const refused = await platform.mutate("settings.cleanMonitoring", {}, as(stranger));
    expect(refused.status).toBe(403);
    expect(
      (await platform.query("docker.getServerHealth", { sinceHours: 96 }, as(owner))).body.metrics.samples,
    ).toBe(3);

    const cleaned = await platform.mutate("settings.cleanMonitoring", {}, as(owner));
    expect(cleaned.status, JSON.stringify(cleaned.body)).toBe(200);
    expect(cleaned.body).toMatchObject({ success: true, filesRemoved: 3 });
    expect(cleaned.body.bytesRemoved).toBeGreaterThan(0);
    const after = await platform.query("docker.getServerHealth", { sinceHours: 96 }, as(owner));
    expect(after.body.metrics).toMatchObject({ samples: 0, cpu: null, memory: null, diskUsed: null });
    await expect(stat(path.join(mainDirectory, "monitoring", "store", "system"))).resolves.toBeTruthy();
  });
});

describe("settings.reloadServer and settings.updateServer", () => {
  let release: Server;
  let latest = "0.0.1";
  let serviceName: string;
  let configured: TestPlatform;
  let configuredOwner: Session;
  let otherDirectory: string;

  type ServiceInfo = { Spec: { TaskTemplate: { ForceUpdate?: number; ContainerSpec: { Image: string } } } };
  const spec = async () =>
    ((await docker.getService(serviceName).inspect()) as ServiceInfo).Spec.TaskTemplate;

  beforeAll(async () => {
    release = createServer((_request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ version: latest }));
    });
    await new Promise<void>((resolve) => release.listen(0, "127.0.0.1", resolve));
    const port = (release.address() as AddressInfo).port;
    serviceName = uniqueName("cp-standin");
    await docker.createService({
      Name: serviceName,
      Labels: { "platform.test": "engine-settings" },
      TaskTemplate: { ContainerSpec: { Image: TEST_IMAGE, Command: ["sleep", "3600"] } },
    });
    otherDirectory = await mkdtemp(path.join(tmpdir(), "cp-engine-service-"));
    configured = await startTestPlatform(
      {
        PLATFORM_CONTROL_PLANE_SERVICE: serviceName,
        PLATFORM_RELEASE_URL: `http://127.0.0.1:${port}/release.json`,
        PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
      },
      {
        agents: {
          localAgent: { docker, mainDirectory: otherDirectory, proxyServiceName: uniqueName("no-proxy") },
        },
      },
    );
    configuredOwner = await configured.registerOwner();
  }, 60_000);

  afterAll(async () => {
    await configured?.close();
    await docker
      ?.getService(serviceName)
      .remove()
      .catch(() => {});
    await new Promise((resolve) => release?.close(resolve));
    if (otherDirectory) await rm(otherDirectory, { recursive: true, force: true });
  });

  it("a control plane that is no Swarm service is told how to restart it (400)", async () => {
    const reload = await platform.mutate("settings.reloadServer", {}, as(owner));
    expect(reload.status).toBe(400);
    expect(reload.body.error.message).toMatch(/does not run as a Swarm service/);
  });

  it("reloadServer forces a new task of the control plane's service, same image", async () => {
    const before = await spec();
    const reload = await configured.mutate("settings.reloadServer", {}, as(configuredOwner));
    expect(reload.status, JSON.stringify(reload.body)).toBe(200);
    const after = await spec();
    expect(after.ForceUpdate).toBe((before.ForceUpdate ?? 0) + 1);
    expect(after.ContainerSpec.Image).toBe(before.ContainerSpec.Image);
  });

  it("updateServer refuses when no newer release is known, then rolls the service to the newest release's tag", async () => {
    const same = await configured.mutate("settings.updateServer", {}, as(configuredOwner));
    expect(same.status).toBe(400);
    expect(same.body.error.message).toMatch(/No newer release/);
    const unchanged = await spec();

    latest = "99.0.0";
    const update = await configured.mutate("settings.updateServer", {}, as(configuredOwner));
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    const after = await spec();
    const repository = TEST_IMAGE.split("@")[0]!.replace(/:[^:/]+$/, "");
    expect(after.ContainerSpec.Image).toBe(`${repository}:99.0.0`);
    expect(after.ForceUpdate).toBe((unchanged.ForceUpdate ?? 0) + 1);
  });

  it("another organization's owner is refused both and the service is left as it is", async () => {
    const other = await createUserDirectly(configured, { email: "engine-other@example.com" });
    const before = await spec();
    for (const name of ["settings.reloadServer", "settings.updateServer"]) {
      const refused = await configured.mutate(name, {}, as(other));
      expect(refused.status, name).toBe(403);
    }
    expect(await spec()).toEqual(before);
  });
});
