/**
 * The agent's monitoring against the real Docker Engine: applying a configuration collects
 * system and container samples into the store, the /metrics endpoints answer them with the
 * token only (JSON and Prometheus text), each 7.5 error appears in its situation, a restarted
 * Monitoring over the same directory keeps every sample and resumes its configuration, and a
 * sustained threshold calls urlCallback (a receiver on 127.0.0.1) and publishes serverThreshold.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import type { AgentEvent, MetricsConfig } from "@platform/agent-protocol";
import { parseAllowList } from "@platform/outbound-guard";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { removeContainer, requireDocker, runSleepingContainer, uniqueName } from "../testing/docker.ts";
import { freePort } from "../testing/net.ts";
import { Monitoring } from "./index.ts";

let docker: Docker;
let directory: string;
let monitoring: Monitoring;
let port: number;
let receiver: Server;
let receiverPort: number;
const callbacks: unknown[] = [];
const events: AgentEvent[] = [];
const ownApp = uniqueName("mon-app");
const stoppedApp = uniqueName("mon-stopped");
const excludedApp = uniqueName("mon-excluded");
const token = "monitoring-test-token-0123456789";

function config(overrides: Partial<MetricsConfig["server"]> = {}): MetricsConfig {
  return {
    server: {
      refreshRate: 2,
      port,
      token,
      urlCallback: `http://127.0.0.1:${receiverPort}/threshold`,
      retentionDays: 2,
      cronJob: "0 0 * * *",
      thresholds: { cpu: 0, memory: 0 },
      ...overrides,
    },
    containers: { refreshRate: 2, services: { include: [ownApp, stoppedApp], exclude: [excludedApp] } },
  };
}

function newMonitoring(): Monitoring {
  const allow = parseAllowList("127.0.0.0/8");
  if (!("list" in allow)) throw new Error(allow.problem);
  return new Monitoring({
    serverId: "monitoring-test",
    docker,
    directory,
    listenHost: "127.0.0.1",
    outboundAllow: allow.list,
    publishEvent: (event) => events.push(event),
  });
}

const get = (pathname: string, headers: Record<string, string> = { authorization: `Bearer ${token}` }) =>
  fetch(`http://127.0.0.1:${port}${pathname}`, { headers });

beforeAll(async () => {
  docker = await requireDocker();
  directory = await mkdtemp(path.join(tmpdir(), "agent-monitoring-"));
  port = await freePort();
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      callbacks.push(JSON.parse(body));
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverPort = (receiver.address() as { port: number }).port;
  await runSleepingContainer(ownApp, ["--label", "platform.organization=org-a"]);
  await runSleepingContainer(excludedApp);
  monitoring = newMonitoring();
  await monitoring.apply(JSON.stringify(config()));
}, 60_000);

afterAll(async () => {
  await monitoring?.stop();
  receiver?.close();
  await Promise.all([removeContainer(ownApp), removeContainer(excludedApp)]);
  await rm(directory, { recursive: true, force: true });
});

describe("agent monitoring", () => {
  it("refuses every request without the right Bearer token", async () => {
    expect((await get("/metrics", {})).status).toBe(401);
    expect((await get("/metrics", { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await get(`/metrics/containers?appName=${ownApp}`, { authorization: token })).status).toBe(401);
    expect((await get("/metrics/prometheus", {})).status).toBe(401);
  });

  it("serves collected system samples with every field of the 2.13 record", async () => {
    const samples = await vi.waitFor(
      async () => {
        const response = await get("/metrics?limit=all");
        expect(response.status).toBe(200);
        const body = (await response.json()) as Record<string, unknown>[];
        expect(body.length).toBeGreaterThanOrEqual(2);
        return body;
      },
      { timeout: 20_000, interval: 500 },
    );
    const last = samples.at(-1)!;
    for (const field of [
      "cpu",
      "memUsed",
      "memUsedGB",
      "memTotal",
      "diskUsed",
      "totalDisk",
      "networkIn",
      "networkOut",
      "cpuModel",
      "os",
      "distro",
      "kernel",
      "arch",
      "timestamp",
    ]) {
      expect(typeof last[field], field).toBe("string");
    }
    for (const field of ["cpuCores", "cpuPhysicalCores", "cpuSpeed", "uptime"]) {
      expect(typeof last[field], field).toBe("number");
    }
    expect(Number(last.memTotal)).toBeGreaterThan(0);
    const one = (await (await get("/metrics?limit=1")).json()) as unknown[];
    expect(one).toHaveLength(1);
    expect((await get("/metrics?limit=zero")).status).toBe(400);
  });

  it("serves the container samples of an included service, with its ownership labels", async () => {
    const records = await vi.waitFor(
      async () => {
        const response = await get(`/metrics/containers?appName=${ownApp}&limit=10`);
        expect(response.status).toBe(200);
        const body = (await response.json()) as Record<string, any>[];
        expect(body.length).toBeGreaterThan(0);
        return body;
      },
      { timeout: 20_000, interval: 500 },
    );
    const record = records.at(-1)!;
    expect(record.containerName).toBe(ownApp);
    expect(record.containerImage).toContain("busybox");
    expect(record.containerCommand).toContain("sleep");
    expect(JSON.parse(record.containerLabels)["platform.organization"]).toBe("org-a");
    expect(record.organizationId).toBe("org-a");
    expect(Date.parse(record.containerCreated)).toBeGreaterThan(0);
    expect(record.memory.used).toBeGreaterThan(0);
    expect(record.memory.total).toBeGreaterThan(0);
    expect(record.network).toMatchObject({ unit: "bytes" });
    expect(record.blockIO).toMatchObject({ unit: "bytes" });
    expect(typeof record.cpu).toBe("number");
  });

  it("answers each 7.5 error in its situation", async () => {
    const excluded = await get(`/metrics/containers?appName=${excludedApp}`);
    expect(excluded.status).toBe(400);
    expect(((await excluded.json()) as any).error.message).toBe("Service not included");
    const notListed = await get("/metrics/containers?appName=some-other-service");
    expect(((await notListed.json()) as any).error.message).toBe("Service not included");
    const stopped = await get(`/metrics/containers?appName=${stoppedApp}`);
    expect(stopped.status).toBe(404);
    expect(((await stopped.json()) as any).error.message).toBe("Container not running");
    expect((await get("/metrics/containers?appName=../etc")).status).toBe(400);

    // A fresh store with nothing collected yet (monitoring not set up on this directory).
    const emptyDirectory = await mkdtemp(path.join(tmpdir(), "agent-monitoring-empty-"));
    const empty = new Monitoring({
      serverId: "empty",
      docker,
      directory: emptyDirectory,
      listenHost: "127.0.0.1",
    });
    expect(await empty.containers(ownApp, 10)).toBe("noData");
    await rm(emptyDirectory, { recursive: true, force: true });
  });

  it("answers Prometheus text at /metrics/prometheus and for Accept: text/plain", async () => {
    await vi.waitFor(
      async () => {
        const response = await get("/metrics/prometheus");
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toContain("text/plain");
        const text = await response.text();
        expect(text).toMatch(/^platform_node_memory_total_bytes \d/m);
        expect(text).toContain(`platform_container_memory_used_bytes{container_id=`);
        expect(text).toContain(`app_name="${ownApp}"`);
        expect(text).not.toContain(`app_name="${excludedApp}"`);
      },
      { timeout: 20_000, interval: 500 },
    );
    const byAccept = await get("/metrics", { authorization: `Bearer ${token}`, accept: "text/plain" });
    expect(await byAccept.text()).toContain("# TYPE platform_node_cpu_usage_percent gauge");
    const containers = await get(`/metrics/containers?appName=${ownApp}`, {
      authorization: `Bearer ${token}`,
      accept: "text/plain;version=0.0.4",
    });
    expect(await containers.text()).toContain(`container_name="${ownApp}"`);
  });

  it("keeps every sample and its configuration across a restart", async () => {
    const before = (await (await get("/metrics?limit=all")).json()) as { timestamp: string }[];
    await monitoring.stop();
    expect(await get("/metrics").catch(() => "closed")).toBe("closed");
    monitoring = newMonitoring();
    await monitoring.start();
    const after = (await (await get("/metrics?limit=all")).json()) as { timestamp: string }[];
    expect(after.slice(0, before.length).map((r) => r.timestamp)).toEqual(before.map((r) => r.timestamp));
  });

  it("calls urlCallback and publishes serverThreshold when memory stays above its threshold", async () => {
    await monitoring.apply(JSON.stringify(config({ thresholds: { cpu: 0, memory: 0.01 } })));
    await vi.waitFor(() => expect(callbacks.length).toBeGreaterThan(0), { timeout: 20_000, interval: 500 });
    expect(callbacks[0]).toMatchObject({ type: "Memory", threshold: 0.01, serverId: "monitoring-test" });
    expect(events.find((event) => event.kind === "serverThreshold")?.attributes.type).toBe("Memory");
  });
});
