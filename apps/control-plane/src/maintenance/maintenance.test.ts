/**
 * The maintenance settings: settings.clean*, updateDockerCleanup and saveSSHPrivateKey.
 * settings.clean* run on the real Docker Engine, as a tenant: another organization's owner cleans
 * a server of their own whose agent drives the shared engine. What the tenant's objects were
 * (a stopped container, an unused image, a volume with data) is gone and the reclaimed bytes
 * are reported; another organization's objects and unlabelled ones on the same engine survive.
 * The whole-engine cleanup (the instance administrator's) is never run here: it would prune
 * objects of everything else sharing this engine.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type RunningAgent, startAgent } from "@platform/agent";
import { requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { MANAGED_LABEL, ORGANIZATION_LABEL } from "@platform/ownership";
import { staticConfigFor, toYaml, validateStaticConfig } from "@platform/traefik-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { insertTestServer } from "../agents/testing/agents.ts";
import { newId } from "../crypto/ids.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import {
  createTestDatabase,
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../testing/harness.ts";
import { DAILY_CLEANUP_PATTERN, DockerCleanupSchedule } from "./cleanup-schedule.ts";

const BLOB_KIB = 256;
const WRITE_BLOB = [
  "sh",
  "-c",
  `mkdir -p /data && dd if=/dev/zero of=/data/blob bs=1024 count=${BLOB_KIB} 2>/dev/null`,
];

type Docker = Awaited<ReturnType<typeof requireDocker>>;

let docker: Docker;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let platform: TestPlatform;
let owner: Session;
let tenant: Session;
let tenantServerId: string;
let ownerServerId: string;
let agent: RunningAgent | undefined;
let mainDirectory: string;
const otherOrganization = `other-${newId()}`;
const created = { containers: [] as string[], images: [] as string[], volumes: [] as string[] };

const labelsOf = (organizationId: string) => ({
  [MANAGED_LABEL]: "true",
  [ORGANIZATION_LABEL]: organizationId,
  "platform.test": "cleanup",
});

/** A container that wrote BLOB_KIB into its own layer (and `volume`, when given) and exited. */
async function stoppedContainer(labels: Record<string, string>, volume?: string): Promise<string> {
  const container = await docker.createContainer({
    name: uniqueName("cleanup"),
    Image: TEST_IMAGE,
    Cmd: WRITE_BLOB,
    Labels: labels,
    HostConfig: volume ? { Binds: [`${volume}:/data`] } : {},
  });
  created.containers.push(container.id);
  await container.start();
  const { StatusCode } = await container.wait();
  expect(StatusCode).toBe(0);
  return container.id;
}

/** An untagged image (a commit of a container that wrote BLOB_KIB) carrying `labels`. */
async function danglingImage(labels: Record<string, string>): Promise<string> {
  const id = await stoppedContainer(labels);
  const image = (await docker.getContainer(id).commit({})) as { Id: string };
  created.images.push(image.Id);
  await docker.getContainer(id).remove();
  return image.Id;
}

/** A volume holding BLOB_KIB of data and used by no container. */
async function filledVolume(labels: Record<string, string>): Promise<string> {
  const name = uniqueName("cleanup-volume");
  await docker.createVolume({ Name: name, Labels: labels });
  created.volumes.push(name);
  const writer = await stoppedContainer({ "platform.test": "cleanup" }, name);
  await docker.getContainer(writer).remove();
  return name;
}

const exists = (inspect: () => Promise<unknown>) =>
  inspect().then(
    () => true,
    () => false,
  );
const containerExists = (id: string) => exists(() => docker.getContainer(id).inspect());
const imageExists = (id: string) => exists(() => docker.getImage(id).inspect());
const volumeExists = (name: string) => exists(() => docker.getVolume(name).inspect());

const as = (session: Session) => ({ token: session.token });

beforeAll(async () => {
  docker = await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-cleanup-"));
  // No agent for this machine: a whole-engine cleanup cannot run by mistake.
  database = await createTestDatabase({ migrated: true });
  platform = await startTestPlatform({}, { agents: { localAgent: false }, database: database.target });
  owner = await platform.registerOwner();
  tenant = await createUserDirectly(platform, { email: "tenant@example.com" });
  tenantServerId = await insertTestServer(platform, tenant.user.organizationId, "tenant edge");
  ownerServerId = await insertTestServer(platform, owner.user.organizationId, "owner edge");
  agent = await startAgent({
    serverId: tenantServerId,
    transport: platform.ctx.agents.client.transport,
    docker,
    mainDirectory,
    heartbeatIntervalMs: 60_000,
    // A proxy service of its own name that does not exist: reloads never touch a real proxy.
    proxyServiceName: uniqueName("no-proxy"),
  });
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await platform?.close();
  await database?.drop();
  for (const id of created.containers)
    await docker
      ?.getContainer(id)
      .remove({ force: true })
      .catch(() => {});
  for (const id of created.images)
    await docker
      ?.getImage(id)
      .remove({ force: true })
      .catch(() => {});
  for (const name of created.volumes)
    await docker
      ?.getVolume(name)
      .remove()
      .catch(() => {});
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

describe("settings.clean* by a tenant on a shared engine", () => {
  it("cleanStoppedContainers removes the tenant's stopped container only and reports the bytes", async () => {
    const mine = await stoppedContainer(labelsOf(tenant.user.organizationId));
    const theirs = await stoppedContainer(labelsOf(otherOrganization));
    const unlabelled = await stoppedContainer({ "platform.test": "cleanup" });

    const response = await platform.mutate(
      "settings.cleanStoppedContainers",
      { serverId: tenantServerId },
      as(tenant),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ success: true, scope: "organization", imagesDeleted: 0 });
    expect(response.body.containersDeleted).toBeGreaterThanOrEqual(1);
    expect(response.body.reclaimedBytes).toBeGreaterThanOrEqual(BLOB_KIB * 1024);
    expect(await containerExists(mine)).toBe(false);
    expect(await containerExists(theirs)).toBe(true);
    expect(await containerExists(unlabelled)).toBe(true);
  });

  it("cleanUnusedImages removes the tenant's dangling image only and reports the bytes", async () => {
    const mine = await danglingImage(labelsOf(tenant.user.organizationId));
    const theirs = await danglingImage(labelsOf(otherOrganization));

    const response = await platform.mutate(
      "settings.cleanUnusedImages",
      { serverId: tenantServerId },
      as(tenant),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.imagesDeleted).toBeGreaterThanOrEqual(1);
    expect(response.body.reclaimedBytes).toBeGreaterThanOrEqual(BLOB_KIB * 1024);
    expect(await imageExists(mine)).toBe(false);
    expect(await imageExists(theirs)).toBe(true);
    expect(await imageExists(TEST_IMAGE)).toBe(true);
  });

  it("cleanUnusedVolumes removes the tenant's unused volume only and reports the bytes", async () => {
    const mine = await filledVolume(labelsOf(tenant.user.organizationId));
    const theirs = await filledVolume(labelsOf(otherOrganization));

    const response = await platform.mutate(
      "settings.cleanUnusedVolumes",
      { serverId: tenantServerId },
      as(tenant),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.volumesDeleted).toBe(1);
    expect(response.body.reclaimedBytes).toBeGreaterThanOrEqual(BLOB_KIB * 1024);
    expect(await volumeExists(mine)).toBe(false);
    expect(await volumeExists(theirs)).toBe(true);
  });

  it("cleanAll removes the tenant's container, image and volume together, never the build cache", async () => {
    const organizationId = tenant.user.organizationId;
    const container = await stoppedContainer(labelsOf(organizationId));
    const image = await danglingImage(labelsOf(organizationId));
    const volume = await filledVolume(labelsOf(organizationId));
    const theirs = await stoppedContainer(labelsOf(otherOrganization));

    const response = await platform.mutate("settings.cleanAll", { serverId: tenantServerId }, as(tenant));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({
      success: true,
      scope: "organization",
      buildCacheReclaimedBytes: 0,
    });
    expect(response.body.reclaimedBytes).toBeGreaterThanOrEqual(3 * BLOB_KIB * 1024);
    expect(await containerExists(container)).toBe(false);
    expect(await imageExists(image)).toBe(false);
    expect(await volumeExists(volume)).toBe(false);
    expect(await containerExists(theirs)).toBe(true);
  });

  it("cleanDockerPrune prunes the tenant's container, image and volume as cleanAll does, never another organization's", async () => {
    const organizationId = tenant.user.organizationId;
    const container = await stoppedContainer(labelsOf(organizationId));
    const image = await danglingImage(labelsOf(organizationId));
    const volume = await filledVolume(labelsOf(organizationId));
    const theirs = await filledVolume(labelsOf(otherOrganization));

    const response = await platform.mutate(
      "settings.cleanDockerPrune",
      { serverId: tenantServerId },
      as(tenant),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({
      success: true,
      scope: "organization",
      buildCacheReclaimedBytes: 0,
    });
    expect(response.body.reclaimedBytes).toBeGreaterThanOrEqual(3 * BLOB_KIB * 1024);
    expect(await containerExists(container)).toBe(false);
    expect(await imageExists(image)).toBe(false);
    expect(await volumeExists(volume)).toBe(false);
    expect(await volumeExists(theirs)).toBe(true);
  });

  it("refuses the shared build cache (403), this machine (403) and another organization's server (404)", async () => {
    const builder = await platform.mutate(
      "settings.cleanDockerBuilder",
      { serverId: tenantServerId },
      as(tenant),
    );
    expect(builder.status, JSON.stringify(builder.body)).toBe(403);
    expect(builder.body.error.message).toMatch(/build cache/);

    for (const input of [{}, { serverId: "local" }]) {
      const local = await platform.mutate("settings.cleanAll", input, as(tenant));
      expect(local.status, JSON.stringify(local.body)).toBe(403);
      expect(local.body.error.message).toMatch(/instance administrator/);
    }

    const foreign = await platform.mutate(
      "settings.cleanStoppedContainers",
      { serverId: ownerServerId },
      as(tenant),
    );
    expect(foreign.status, JSON.stringify(foreign.body)).toBe(404);
  });

  it("refuses a bad serverId with a 400 naming it, and a member with a 403", async () => {
    const bad = await platform.mutate("settings.cleanAll", { serverId: "x".repeat(65) }, as(tenant));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("serverId");
    const unknown = await platform.mutate(
      "settings.cleanAll",
      { serverId: tenantServerId, all: true },
      as(tenant),
    );
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain("all");

    const member = await platform.addMember(tenant, "member");
    const refused = await platform.mutate("settings.cleanAll", { serverId: tenantServerId }, as(member));
    expect(refused.status).toBe(403);
  });
});

describe("settings.updateDockerCleanup", () => {
  it("schedules the server's cleanup daily, keeps it over a restart and stops it", async () => {
    const on = await platform.mutate(
      "settings.updateDockerCleanup",
      { enableDockerCleanup: true, serverId: tenantServerId },
      as(tenant),
    );
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    const next = platform.ctx.dockerCleanup.nextRun(tenantServerId);
    expect(next?.getHours()).toBe(0);
    expect(next?.getMinutes()).toBe(0);
    expect(next!.getTime() - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    expect(DAILY_CLEANUP_PATTERN).toBe("0 0 * * *");

    // A second control plane on the same database (a restart) schedules it again from the row.
    const restarted = await startTestPlatform(
      {},
      { agents: { localAgent: false }, database: database.target },
    );
    try {
      expect(restarted.ctx.dockerCleanup.nextRun(tenantServerId)).toEqual(next);
      expect(restarted.ctx.dockerCleanup.nextRun(ownerServerId)).toBeNull();
    } finally {
      await restarted.close();
    }

    const off = await platform.mutate(
      "settings.updateDockerCleanup",
      { enableDockerCleanup: false, serverId: tenantServerId },
      as(tenant),
    );
    expect(off.status).toBe(200);
    expect(platform.ctx.dockerCleanup.nextRun(tenantServerId)).toBeNull();
    const row = await platform.ctx.db
      .selectFrom("servers")
      .select("enableDockerCleanup")
      .where("serverId", "=", tenantServerId)
      .executeTakeFirstOrThrow();
    expect(row.enableDockerCleanup).toBe(false);
  });

  it("a scheduled run cleans the tenant's objects and records a dockerCleanup event", async () => {
    const mine = await stoppedContainer(labelsOf(tenant.user.organizationId));
    const theirs = await stoppedContainer(labelsOf(otherOrganization));
    // The same schedule, firing every second instead of at midnight.
    const schedule = new DockerCleanupSchedule(platform.ctx, "* * * * * *");
    schedule.set(tenantServerId, true);
    const events = () =>
      platform.ctx.db
        .selectFrom("events")
        .selectAll()
        .where("organizationId", "=", tenant.user.organizationId)
        .where("kind", "=", "dockerCleanup")
        .execute();
    try {
      for (let waited = 0; waited < 20_000 && (await events()).length === 0; waited += 200) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await schedule.close();
    }
    const [event] = await events();
    expect(event?.applicationId).toBeNull();
    expect(event?.payload).toMatchObject({
      status: "success",
      message: expect.stringMatching(/bytes reclaimed/),
    });
    expect(await containerExists(mine)).toBe(false);
    expect(await containerExists(theirs)).toBe(true);
  });

  it("this machine's schedule is the instance administrator's, shown by getWebServerSettings", async () => {
    const refused = await platform.mutate(
      "settings.updateDockerCleanup",
      { enableDockerCleanup: true },
      as(tenant),
    );
    expect(refused.status).toBe(403);
    const missing = await platform.mutate(
      "settings.updateDockerCleanup",
      { serverId: tenantServerId },
      as(tenant),
    );
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain("enableDockerCleanup");

    const on = await platform.mutate(
      "settings.updateDockerCleanup",
      { enableDockerCleanup: true },
      as(owner),
    );
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(platform.ctx.dockerCleanup.nextRun("local")).not.toBeNull();
    const settings = await platform.query("settings.getWebServerSettings", {}, as(owner));
    expect(settings.body.enableDockerCleanup).toBe(true);
    await platform.mutate("settings.updateDockerCleanup", { enableDockerCleanup: false }, as(owner));
    expect(platform.ctx.dockerCleanup.nextRun("local")).toBeNull();
    expect(
      (await platform.query("settings.getWebServerSettings", {}, as(owner))).body.enableDockerCleanup,
    ).toBe(false);
  });
});

describe("settings.saveSSHPrivateKey", () => {
  it("seals the key at rest and shows it only as redacted; a bad key is a 400 naming the field", async () => {
    const before = await platform.query("settings.getWebServerSettings", {}, as(owner));
    expect(before.body.sshPrivateKey).toBeNull();
    const pair = await platform.mutateOk("sshKey.generate", { type: "ed25519" }, as(owner));

    const bad = await platform.mutate(
      "settings.saveSSHPrivateKey",
      { sshPrivateKey: "not a key" },
      as(owner),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(["sshPrivateKey"]);
    const publicOnly = await platform.mutate(
      "settings.saveSSHPrivateKey",
      { sshPrivateKey: pair.publicKey },
      as(owner),
    );
    expect(publicOnly.status).toBe(400);
    const stranger = await platform.mutate(
      "settings.saveSSHPrivateKey",
      { sshPrivateKey: pair.privateKey },
      as(tenant),
    );
    expect(stranger.status).toBe(403);
    expect(
      (await platform.query("settings.getWebServerSettings", {}, as(owner))).body.sshPrivateKey,
    ).toBeNull();

    const saved = await platform.mutate(
      "settings.saveSSHPrivateKey",
      { sshPrivateKey: pair.privateKey },
      as(owner),
    );
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body).toEqual({ success: true });
    const shown = await platform.query("settings.getWebServerSettings", {}, as(owner));
    expect(shown.body.sshPrivateKey).toBe("[redacted]");
    expect(JSON.stringify(shown.body)).not.toContain("PRIVATE KEY");

    const row = await platform.ctx.db
      .selectFrom("webServerSettings")
      .select("sshPrivateKeySealed")
      .executeTakeFirstOrThrow();
    expect(row.sshPrivateKeySealed).not.toContain("PRIVATE KEY");
    expect(
      platform.ctx.secrets.decrypt(row.sshPrivateKeySealed!, {
        table: "web_server_settings",
        rowId: "1",
        organizationId: owner.user.organizationId,
      }),
    ).toBe(pair.privateKey.trim());
    expect(platform.logLines.join("\n")).not.toContain("PRIVATE KEY");
  });
});

describe("settings.readStatsLogs on a recorded Traefik access log", () => {
  const fixture = new URL("../../../agent/src/proxy/fixtures/access.log", import.meta.url);
  const read = (input: Record<string, unknown>) =>
    platform.mutate("settings.readStatsLogs", { serverId: tenantServerId, ...input }, as(tenant));
  const paths = (body: { data: { path: string }[] }) => body.data.map((entry) => entry.path);

  beforeAll(async () => {
    await mkdir(path.join(mainDirectory, "traefik"), { recursive: true });
    await copyFile(fixture, path.join(mainDirectory, "traefik", "access.log"));
  });

  it("answers {data, totalCount}, newest first, in pages", async () => {
    const all = await read({});
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.totalCount).toBe(8);
    expect(all.body.data[0]).toEqual({
      timestamp: "2026-11-24T10:06:15.000Z",
      method: "GET",
      path: "/healthz",
      status: 200,
      duration: 150000,
      ip: "203.0.113.9",
      userAgent: "kube-probe/1.30",
      host: "shop.example.com",
    });
    const second = await read({ page: { pageIndex: 1, pageSize: 3 } });
    expect(second.body.totalCount).toBe(8);
    expect(paths(second.body)).toEqual(["/posts/hello", "/wp-login.php", "/api/checkout"]);
    expect((await read({ page: 2 })).body.data).toEqual([]);
  });

  it("filters by status, search and date range, and sorts by any column", async () => {
    expect(paths((await read({ status: "4xx" })).body)).toEqual(["/api/cart/17", "/wp-login.php"]);
    expect(paths((await read({ status: ["server", "301"] })).body)).toEqual([
      "/posts/hello",
      "/api/checkout",
    ]);
    expect((await read({ search: "API" })).body.totalCount).toBe(3);
    expect((await read({ search: "googlebot" })).body.totalCount).toBe(2);
    expect((await read({ search: "198.51.100.23", status: "client" })).body.totalCount).toBe(1);
    const range = await read({ dateRange: { start: "2026-11-24T10:00:00Z", end: "2026-11-24T10:03:00Z" } });
    expect(paths(range.body)).toEqual(["/posts/hello", "/wp-login.php", "/api/checkout"]);
    expect(paths((await read({ sort: { id: "duration", desc: false } })).body)[0]).toBe("/healthz");
    expect(paths((await read({ sort: { id: "Duration", desc: true } })).body)[0]).toBe("/api/checkout");
  });

  it("refuses bad filters with a 400 naming the field, and this machine's log to a tenant", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ status: "4x" }, "status"],
      [{ page: 0 }, "page"],
      [{ page: { pageIndex: 0, pageSize: 5000 } }, "page"],
      [{ dateRange: { start: "yesterday" } }, "dateRange"],
      [{ dateRange: { start: "2026-11-25T00:00:00Z", end: "2026-11-24T00:00:00Z" } }, "dateRange"],
      [{ search: "x".repeat(300) }, "search"],
      [{ sort: { id: "password", desc: true } }, "sort"],
    ];
    for (const [input, field] of cases) {
      const response = await read(input);
      expect(response.status, JSON.stringify(input)).toBe(400);
      expect(JSON.stringify(response.body.error.data.fields), JSON.stringify(input)).toContain(field);
    }
    const local = await platform.mutate("settings.readStatsLogs", {}, as(tenant));
    expect(local.status).toBe(403);
  });
});

describe("settings.toggleRequests and haveActivateRequests", () => {
  const staticFile = () => path.join(mainDirectory, "traefik", "traefik.yml");
  const state = () =>
    platform.query("settings.haveActivateRequests", { serverId: tenantServerId }, as(tenant));
  const toggle = (enable: boolean) =>
    platform.mutate("settings.toggleRequests", { enable, serverId: tenantServerId }, as(tenant));

  it("switches the proxy's access log in traefik.yml, valid against Traefik's schema, keeping the rest", async () => {
    await rm(staticFile(), { force: true });
    expect((await state()).body).toEqual({ enabled: false, filePath: null });
    expect((await toggle(true)).status).toBe(404);

    const generated = staticConfigFor({
      letsEncryptEmail: null,
      acmeStoragePath: "/etc/traefik/acme.json",
      dynamicConfigDirectory: "/etc/traefik/dynamic",
      accessLogPath: null,
      dashboardEnabled: false,
    });
    await mkdir(path.dirname(staticFile()), { recursive: true });
    await writeFile(staticFile(), toYaml(generated));
    expect((await state()).body).toEqual({ enabled: false, filePath: null });

    const on = await toggle(true);
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body).toEqual({ success: true, enabled: true });
    const written = parse(await readFile(staticFile(), "utf8"));
    expect(validateStaticConfig(written)).toEqual([]);
    expect(written.accessLog).toEqual({
      filePath: "/etc/traefik/access.log",
      format: "json",
      fields: { headers: { names: { "User-Agent": "keep" } } },
    });
    expect(written.entryPoints).toEqual(generated.entryPoints);
    expect((await state()).body).toEqual({ enabled: true, filePath: "/etc/traefik/access.log" });

    const off = await toggle(false);
    expect(off.body).toEqual({ success: true, enabled: false });
    const after = parse(await readFile(staticFile(), "utf8"));
    expect(after.accessLog).toBeUndefined();
    expect(after.providers).toEqual(generated.providers);
    expect((await state()).body).toEqual({ enabled: false, filePath: null });
  });

  it("refuses a missing enable (400) and this machine to a tenant (403)", async () => {
    const missing = await platform.mutate(
      "settings.toggleRequests",
      { serverId: tenantServerId },
      as(tenant),
    );
    expect(missing.status).toBe(400);
    expect(missing.body.error.data.fields).toContain("enable");
    expect((await platform.mutate("settings.toggleRequests", { enable: true }, as(tenant))).status).toBe(403);
    expect((await platform.query("settings.haveActivateRequests", {}, as(tenant))).status).toBe(403);
  });
});
