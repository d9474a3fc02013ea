/**
 * application.readAppMonitoring against the real Docker Engine through the in-process agent: a
 * Swarm service named like the application is sampled (memory, limits, uptime, containers), the
 * pure summary adds replicas up, and bad or foreign names are refused before any agent call.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { applicationOwner, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { summarizeAppMonitoring } from "./app-monitoring.ts";

let platform: TestPlatform;
let owner: Session;
let mainDirectory: string;
const appName = uniqueName("monitored");

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-monitoring-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await dockerCli(["service", "rm", appName]).catch(() => {});
  await platform?.close();
  await rm(mainDirectory, { recursive: true, force: true });
});

describe("application.readAppMonitoring", () => {
  it("samples the running containers of the application's service", async () => {
    const created = await platform.mutate("project.create", { name: "Monitored" }, { token: owner.token });
    const environmentId = created.body.environment.environmentId as string;
    const app = await platform.mutate(
      "application.create",
      { name: "monitored", environmentId, appName },
      { token: owner.token },
    );
    expect(app.status).toBe(200);
    await platform.mutate(
      "application.update",
      { applicationId: app.body.applicationId, cpuLimit: "0.5" },
      { token: owner.token },
    );
    await dockerCli([
      "service",
      "create",
      "--detach",
      "--name",
      appName,
      // The labels the agent gives an application's containers: it samples no others.
      ...Object.entries(
        ownershipLabels(applicationOwner(owner.user.organizationId, app.body.applicationId)),
      ).flatMap(([key, value]) => ["--container-label", `${key}=${value}`]),
      "--limit-memory",
      "64m",
      TEST_IMAGE,
      "httpd",
      "-f",
      "-p",
      "8080",
    ]);

    const sample = await vi.waitFor(
      async () => {
        const response = await platform.query(
          "application.readAppMonitoring",
          { appName },
          { token: owner.token },
        );
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body.containers).toHaveLength(1);
        return response.body;
      },
      { timeout: 60_000, interval: 500 },
    );
    expect(sample.memory.limit).toBe(64 * 1024 * 1024);
    expect(sample.memory.usage).toBeGreaterThan(0);
    expect(sample.memory.percentage).toBeGreaterThan(0);
    expect(sample.cpu.limit).toBe(50);
    expect(sample.cpu.usage).toBeGreaterThanOrEqual(0);
    const [container] = sample.containers;
    expect(container.id).toMatch(/^[0-9a-f]{12}$/);
    expect(container.name.startsWith(`${appName}.1.`)).toBe(true);
    expect(container.status).toMatch(/^Up/);
    expect(container.uptime).toBeGreaterThanOrEqual(0);
  }, 90_000);

  it("refuses a bad appName with a 400 and hides other organizations' applications", async () => {
    const bad = await platform.query(
      "application.readAppMonitoring",
      { appName: "x;rm -rf /" },
      { token: owner.token },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(["appName"]);
    const stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
    const foreign = await platform.query(
      "application.readAppMonitoring",
      { appName },
      { token: stranger.token },
    );
    expect(foreign.status).toBe(404);
  });

  it("is not served on the cloud edition", async () => {
    const cloud = await startTestPlatform({ PLATFORM_EDITION: "cloud" }, { agents: { localAgent: false } });
    try {
      const session = await cloud.registerOwner();
      const response = await cloud.query(
        "application.readAppMonitoring",
        { appName },
        { token: session.token },
      );
      expect(response.status).toBe(403);
    } finally {
      await cloud.close();
    }
  });
});

describe("summarizeAppMonitoring", () => {
  it("adds replicas up and turns start times into uptime", () => {
    const replica = (id: string, startedAtUnixMs: number) => ({
      id: `${id}${"0".repeat(60)}`,
      name: `web.${id}`,
      status: "Up 1 minute",
      startedAtUnixMs,
      cpuPercent: 12.345,
      memoryUsageBytes: 100,
      memoryLimitBytes: 400,
      networkRxBytes: 10,
      networkTxBytes: 5,
    });
    const summary = summarizeAppMonitoring([replica("1", 1_000), replica("2", 0)], null, 61_000);
    expect(summary).toEqual({
      cpu: { usage: 24.69, limit: null },
      memory: { usage: 200, limit: 800, percentage: 25 },
      network: { rx: 20, tx: 10 },
      containers: [
        { id: `1${"0".repeat(11)}`, name: "web.1", status: "Up 1 minute", uptime: 60 },
        { id: `2${"0".repeat(11)}`, name: "web.2", status: "Up 1 minute", uptime: 0 },
      ],
    });
    expect(summarizeAppMonitoring([], "2", 0)).toMatchObject({
      cpu: { usage: 0, limit: 200 },
      memory: { percentage: 0 },
    });
  });
});
