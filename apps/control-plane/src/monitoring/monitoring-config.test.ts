/**
 * Monitoring set up through the API, against the in-process agent of this machine and the real
 * Docker Engine: admin.setupMonitoring refuses each bound of spec 2.13/8 with a 400 naming the
 * field, applies a valid configuration live (the agent then serves /metrics with the token),
 * the token is shown sealed-at-rest and only to instance administrators (getMetricsToken,
 * getWebServerSettings), server.getServerMetrics reads the agent's series through the outbound
 * guard (without a token: the stored one of the caller's own endpoint, never another
 * organization's), another organization cannot set this machine up, and a sustained threshold is recorded
 * as a serverThreshold event.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";
import { createOtherOrganization } from "../users/test-support.ts";
import { storeMonitoringConfig } from "./monitoring-config.ts";

let platform: TestPlatform;
let owner: Session;
let mainDirectory: string;
let port: number;
const token = "cp-monitoring-token-abcdef0123456789";
const appName = uniqueName("stored-metrics");

/** getServerMetrics in tRPC's `?input=` form: a plain `?token=` is refused like any credential in a query string. */
const getServerMetrics = (input: Record<string, string>, session: Session) =>
  platform.request(`/api/server.getServerMetrics?input=${encodeURIComponent(JSON.stringify(input))}`, {
    token: session.token,
  });

function metricsConfig(server: Record<string, unknown> = {}, containers: Record<string, unknown> = {}) {
  return {
    server: {
      refreshRate: 2,
      port,
      token,
      urlCallback: "http://127.0.0.1:9/threshold",
      retentionDays: 7,
      cronJob: "0 3 * * *",
      thresholds: { cpu: 0, memory: 0 },
      ...server,
    },
    containers: { refreshRate: 2, services: { include: ["nothing-here"] }, ...containers },
  };
}

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-monitoring-config-"));
  port = await freePort();
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory, metricsListenHost: "127.0.0.1" } } },
  );
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await dockerCli(["service", "rm", appName]).catch(() => {});
  await platform?.close();
  await rm(mainDirectory, { recursive: true, force: true });
});

describe("monitoring set-up through the API", () => {
  it("refuses each bound with a 400 naming the field, and changes nothing", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [metricsConfig({ refreshRate: 1 }), "metricsConfig.server.refreshRate"],
      [metricsConfig({ port: 0 }), "metricsConfig.server.port"],
      [metricsConfig({ retentionDays: 0 }), "metricsConfig.server.retentionDays"],
      [metricsConfig({ thresholds: { cpu: -1, memory: 0 } }), "metricsConfig.server.thresholds.cpu"],
      [metricsConfig({ thresholds: { cpu: 0, memory: -1 } }), "metricsConfig.server.thresholds.memory"],
      [metricsConfig({ cronJob: "every day" }), "metricsConfig.server.cronJob"],
      [metricsConfig({ urlCallback: "not a url" }), "metricsConfig.server.urlCallback"],
      [metricsConfig({ token: undefined }), "metricsConfig.server.token"],
      [metricsConfig({}, { refreshRate: 1 }), "metricsConfig.containers.refreshRate"],
      [
        metricsConfig({}, { services: { include: ["../etc"] } }),
        "metricsConfig.containers.services.include.0",
      ],
      [metricsConfig({ urlCallback: "http://169.254.169.254/latest" }), "metricsConfig.server.urlCallback"],
    ];
    for (const [config, field] of cases) {
      const response = await platform.mutate(
        "admin.setupMonitoring",
        { metricsConfig: config },
        { token: owner.token },
      );
      expect(response.status, field).toBe(400);
      expect(response.body.error.data.fields, field).toContain(field);
    }
    const settings = await platform.query("settings.getWebServerSettings", {}, { token: owner.token });
    expect(settings.body.metricsConfig).toBeNull();
    // include/exclude are optional.
    const { services: _, ...withoutServices } = metricsConfig().containers;
    expect(
      (
        await platform.mutate(
          "admin.setupMonitoring",
          { metricsConfig: { ...metricsConfig(), containers: withoutServices }, extra: 1 },
          { token: owner.token },
        )
      ).status,
    ).toBe(400);
  });

  it("applies a configuration live: the agent serves /metrics with the token", async () => {
    const response = await platform.mutate(
      "admin.setupMonitoring",
      { metricsConfig: metricsConfig() },
      { token: owner.token },
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ success: true });
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);

    const series = await vi.waitFor(
      async () => {
        const metrics = await getServerMetrics(
          { url: `http://127.0.0.1:${port}/metrics`, token, dataPoints: "all" },
          owner,
        );
        expect(metrics.status, JSON.stringify(metrics.body)).toBe(200);
        expect(metrics.body.length).toBeGreaterThan(0);
        return metrics.body;
      },
      { timeout: 20_000, interval: 500 },
    );
    expect(series[0]).toHaveProperty("memTotal");
    const wrongToken = await getServerMetrics(
      { url: `http://127.0.0.1:${port}/metrics`, token: "wrong", dataPoints: "5" },
      owner,
    );
    expect(wrongToken.status).toBe(400);
    expect(wrongToken.body.error.data.fields).toEqual(["token"]);
    const metadata = await getServerMetrics({ url: "http://169.254.169.254", token, dataPoints: "5" }, owner);
    const plainQuery = await platform.query(
      "server.getServerMetrics",
      { url: `http://127.0.0.1:${port}`, token, dataPoints: "5" },
      { token: owner.token },
    );
    expect(plainQuery.status).toBe(401);
    expect(metadata.status).toBe(400);
    expect(metadata.body.error.data.fields).toEqual(["url"]);
  });

  it("without a token, reads with the stored token of the caller's own endpoint only", async () => {
    const local = await getServerMetrics({ url: `http://127.0.0.1:${port}/metrics`, dataPoints: "5" }, owner);
    expect(local.status, JSON.stringify(local.body)).toBe(200);
    expect(local.body.length).toBeGreaterThan(0);
    expect(local.body[0]).toHaveProperty("memTotal");

    // Stand-in agents of two remote servers: they record the Bearer tokens they are sent.
    const received: { mine: string[]; theirs: string[] } = { mine: [], theirs: [] };
    const stubs: Server[] = [];
    const startStub = async (host: string, name: keyof typeof received, wanted: string) => {
      const stub = createServer((request, response) => {
        received[name].push(request.headers.authorization ?? "");
        const ok = request.headers.authorization === `Bearer ${wanted}`;
        response.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
        response.end(
          JSON.stringify(
            ok
              ? [{ cpu: "12.5", memUsed: "40", timestamp: new Date().toISOString() }]
              : {
                  error: { code: "UNAUTHORIZED", message: "Unauthorized" },
                },
          ),
        );
      });
      await new Promise<void>((resolve) => stub.listen(0, host, resolve));
      stubs.push(stub);
      return (stub.address() as { port: number }).port;
    };
    try {
      const mineToken = "own-remote-monitoring-token-0123456789";
      const theirToken = "their-remote-monitoring-token-0123456789";
      const minePort = await startStub("127.0.0.2", "mine", mineToken);
      const theirPort = await startStub("127.0.0.3", "theirs", theirToken);
      const ownServer = await insertServer(platform.ctx.db, owner.user.organizationId, {
        ipAddress: "127.0.0.2",
      });
      await storeMonitoringConfig(
        platform.ctx,
        owner.user.organizationId,
        ownServer,
        metricsConfig({ port: minePort, token: mineToken }),
      );
      const other = await createOtherOrganization(platform, "metrics-other@example.com");
      const theirServer = await insertServer(platform.ctx.db, other.organizationId, {
        ipAddress: "127.0.0.3",
      });
      await storeMonitoringConfig(
        platform.ctx,
        other.organizationId,
        theirServer,
        metricsConfig({ port: theirPort, token: theirToken }),
      );

      const mine = await getServerMetrics(
        { url: `http://127.0.0.2:${minePort}/metrics`, dataPoints: "5" },
        owner,
      );
      expect(mine.status, JSON.stringify(mine.body)).toBe(200);
      expect(mine.body).toEqual([expect.objectContaining({ cpu: "12.5" })]);
      expect(received.mine).toEqual([`Bearer ${mineToken}`]);
      // Another port of the same address is not its metrics endpoint.
      const otherPort = await getServerMetrics(
        { url: `http://127.0.0.2:${theirPort}/metrics`, dataPoints: "5" },
        owner,
      );
      expect(otherPort.status).toBe(400);
      expect(otherPort.body.error.data.fields).toEqual(["token"]);

      const theirs = await getServerMetrics(
        { url: `http://127.0.0.3:${theirPort}/metrics`, dataPoints: "5" },
        owner,
      );
      expect(theirs.status).toBe(400);
      expect(theirs.body.error.data.fields).toEqual(["token"]);
      expect(theirs.body.error.message).toContain(
        "token is required for a url that is not one of your servers' metrics endpoints",
      );
      expect(received.theirs).toEqual([]);

      // A member, who may not read the stored token, must send one.
      const member = await platform.addMember(owner, "member");
      const byMember = await getServerMetrics(
        { url: `http://127.0.0.1:${port}/metrics`, dataPoints: "5" },
        member,
      );
      expect(byMember.status).toBe(400);
      expect(byMember.body.error.data.fields).toEqual(["token"]);

      // Dokploy's way, with the token, is unchanged (and used as sent).
      const withToken = await getServerMetrics(
        { url: `http://127.0.0.2:${minePort}/metrics`, token: "wrong-token", dataPoints: "5" },
        owner,
      );
      expect(withToken.status).toBe(400);
      expect(withToken.body.error.data.fields).toEqual(["token"]);
      expect(received.mine.at(-1)).toBe("Bearer wrong-token");
      expect(received.theirs).toEqual([]);
    } finally {
      for (const stub of stubs) stub.close();
    }
  });

  it("keeps the token sealed and shows it only to instance administrators", async () => {
    const row = await platform.ctx.db.selectFrom("monitoringConfigs").selectAll().executeTakeFirstOrThrow();
    expect(row.configSealed).not.toContain(token);
    const mine = await platform.query("user.getMetricsToken", {}, { token: owner.token });
    expect(mine.body.metricsConfig.server.token).toBe(token);
    const settings = await platform.query("settings.getWebServerSettings", {}, { token: owner.token });
    expect(settings.body.metricsConfig.server.port).toBe(port);

    const member = await platform.addMember(owner, "member");
    expect(
      (await platform.query("user.getMetricsToken", {}, { token: member.token })).body.metricsConfig,
    ).toBeNull();
    const other = await createOtherOrganization(platform);
    expect(
      (await platform.query("user.getMetricsToken", {}, { token: other.token })).body.metricsConfig,
    ).toBeNull();
    const refused = await platform.mutate(
      "admin.setupMonitoring",
      { metricsConfig: metricsConfig() },
      { token: other.token },
    );
    expect(refused.status).toBe(403);
    const foreignServer = await platform.mutate(
      "server.setupMonitoring",
      { serverId: "local", metricsConfig: metricsConfig() },
      { token: other.token },
    );
    expect(foreignServer.status).toBe(404);
  });

  it("records a sustained threshold as a serverThreshold event of the instance organization", async () => {
    const response = await platform.mutate(
      "admin.setupMonitoring",
      { metricsConfig: metricsConfig({ thresholds: { cpu: 0, memory: 0.01 } }) },
      { token: owner.token },
    );
    expect(response.status).toBe(200);
    const event = await vi.waitFor(
      async () => {
        const row = await platform.ctx.db
          .selectFrom("events")
          .selectAll()
          .where("kind", "=", "serverThreshold")
          .executeTakeFirst();
        expect(row).toBeDefined();
        return row!;
      },
      { timeout: 30_000, interval: 500 },
    );
    expect(event.organizationId).toBe(owner.user.organizationId);
    const payload = typeof event.payload === "string" ? JSON.parse(event.payload) : event.payload;
    expect(payload).toMatchObject({ type: "Memory", serverId: "local" });
  });

  it("answers readAppMonitoring from the stored samples of the application's own containers", async () => {
    const created = await platform.mutate("project.create", { name: "Stored" }, { token: owner.token });
    const environmentId = created.body.environment.environmentId as string;
    const app = await platform.mutate(
      "application.create",
      { name: "stored", environmentId, appName },
      { token: owner.token },
    );
    expect(app.status).toBe(200);
    await dockerCli([
      "service",
      "create",
      "--detach",
      "--name",
      appName,
      "--container-label",
      `platform.organization=${owner.user.organizationId}`,
      TEST_IMAGE,
      "sleep",
      "600",
    ]);
    const config = metricsConfig({}, { services: { include: [appName] } });
    expect(
      (await platform.mutate("admin.setupMonitoring", { metricsConfig: config }, { token: owner.token }))
        .status,
    ).toBe(200);
    const sample = await vi.waitFor(
      async () => {
        const response = await platform.query(
          "application.readAppMonitoring",
          { appName },
          { token: owner.token },
        );
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        // "running" is the stored form; a live sample shows Docker's "Up … seconds".
        expect(response.body.containers).toEqual([expect.objectContaining({ status: "running" })]);
        return response.body;
      },
      { timeout: 60_000, interval: 1000 },
    );
    expect(sample.memory.usage).toBeGreaterThan(0);
  }, 90_000);
});
