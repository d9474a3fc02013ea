/**
 * Fault injection: the control plane outlives its dependencies. A real control plane process
 * runs on Postgres through a TCP proxy this test owns, and on a private nats-server (JetStream,
 * JWT auth) this test stops and starts. Through each outage the process stays alive, liveness
 * answers 200, readiness names the dependency as down, requests that need the database answer
 * 503 with a clear message, and once the dependency is back the same requests succeed without a
 * restart.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type JwtNats, startJwtNats } from "../../apps/control-plane/src/agents/testing/nats-jwt.ts";
import {
  ApiClient,
  type ControlPlaneProcess,
  startControlPlaneProcess,
  tail,
} from "../support/control-plane.ts";
import { TcpProxy } from "./tcp-proxy.ts";

/** How long each outage lasts. */
const OUTAGE_MS = 5000;
const UNAVAILABLE_MESSAGE = "The database is unavailable; try again in a few seconds";

async function getJson(url: string): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

function expectAlive(controlPlane: ControlPlaneProcess): void {
  const output = controlPlane.output.join("");
  expect(controlPlane.child.exitCode, tail(controlPlane.output)).toBeNull();
  expect(controlPlane.child.signalCode, tail(controlPlane.output)).toBeNull();
  expect(output).not.toContain("Unhandled 'error' event");
  expect(output).not.toContain("unhandled promise rejection");
}

async function registerOwner(api: ApiClient): Promise<void> {
  const session = await api.mutateOk("auth.register", {
    email: "owner@example.com",
    password: "correct-horse-battery",
    name: "Owner",
  });
  api.token = session.token;
}

describe("Postgres cut through a proxy", () => {
  let proxy: TcpProxy;
  let controlPlane: ControlPlaneProcess;
  let api: ApiClient;

  beforeAll(async () => {
    proxy = await TcpProxy.start();
    controlPlane = await startControlPlaneProcess({}, { databaseUrl: (url) => proxy.proxiedUrl(url) });
    api = new ApiClient(controlPlane.url);
    await registerOwner(api);
  }, 90_000);

  afterAll(async () => {
    await proxy?.restore();
    await controlPlane?.stop();
    await proxy?.close();
  }, 30_000);

  /** What must hold while Postgres is away. */
  async function expectDatabaseDown(): Promise<void> {
    expectAlive(controlPlane);
    const live = await getJson(`${controlPlane.url}/health/live`);
    expect(live).toMatchObject({ status: 200, body: { status: "ok" } });
    for (const path of ["/health/ready", "/health"]) {
      const ready = await getJson(`${controlPlane.url}${path}`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({
        status: "unavailable",
        checks: { database: { status: "down", kind: "postgres" }, nats: { status: "disabled" } },
      });
    }
    const query = await fetch(`${controlPlane.url}/api/project.all`, {
      headers: { authorization: `Bearer ${api.token}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(query.status).toBe(503);
    expect(query.headers.get("retry-after")).toBe("5");
    expect(await query.json()).toEqual({
      error: {
        message: UNAVAILABLE_MESSAGE,
        code: "SERVICE_UNAVAILABLE",
        data: { dependency: "database", httpStatus: 503 },
      },
    });
    const mutation = await api.mutate("project.create", { name: "During the cut" });
    expect(mutation.status).toBe(503);
    expect(mutation.body.error).toMatchObject({ code: "SERVICE_UNAVAILABLE", message: UNAVAILABLE_MESSAGE });
    // The tRPC prefix answers the same error in its envelope.
    const trpc = await fetch(`${controlPlane.url}/api/trpc/project.all`, {
      headers: { authorization: `Bearer ${api.token}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(trpc.status).toBe(503);
  }

  /** What must hold once Postgres is back: the same calls work, no restart. */
  async function expectRecovered(name: string): Promise<void> {
    await vi.waitFor(
      async () => {
        const ready = await getJson(`${controlPlane.url}/health/ready`);
        expect(ready).toMatchObject({
          status: 200,
          body: { status: "ok", checks: { database: { status: "up" } } },
        });
      },
      { timeout: 15_000, interval: 200 },
    );
    const created = await api.mutateOk("project.create", { name });
    const projects = await api.queryOk<Array<{ projectId: string; name: string }>>("project.all");
    expect(projects.map((project) => project.projectId)).toContain(created.project.projectId);
    expectAlive(controlPlane);
  }

  it("a cut while idle: the pool's dropped connections do not end the process; 503 during, all back after", async () => {
    // Connections idle in the pool when Postgres goes away.
    for (let i = 0; i < 3; i++) await api.queryOk("project.all");
    await api.mutateOk("project.create", { name: "Before the idle cut" });
    expect(proxy.connections).toBeGreaterThan(0);

    const cutAt = Date.now();
    await proxy.cut();
    // The idle clients noticed (the warning is logged) and the process lived on.
    await vi.waitFor(() => expect(controlPlane.output.join("")).toContain("database connection lost"), {
      timeout: 5000,
      interval: 100,
    });
    await expectDatabaseDown();
    await sleep(Math.max(0, cutAt + OUTAGE_MS - Date.now()));
    await expectDatabaseDown();

    await proxy.restore();
    await expectRecovered("After the idle cut");
  }, 45_000);

  it("a cut while requests are in flight: each of them answers 503, and later ones succeed", async () => {
    await api.queryOk("project.all");
    // Requests whose queries left the control plane but never reached Postgres.
    proxy.hold();
    const inFlight = [
      api.query("project.all"),
      api.query("project.all"),
      api.mutate("project.create", { name: "In flight 1" }),
      api.mutate("project.create", { name: "In flight 2" }),
    ];
    // Concurrent requests share the caller cache's settle round trip, so fewer chunks than
    // requests may be held: once traffic is held, give the others a moment to park behind it.
    await vi.waitFor(() => expect(proxy.heldChunks).toBeGreaterThanOrEqual(1), {
      timeout: 10_000,
      interval: 20,
    });
    await sleep(300);
    const cutAt = Date.now();
    await proxy.cut();
    for (const response of await Promise.all(inFlight)) {
      expect(response.status, JSON.stringify(response.body)).toBe(503);
      expect(response.body.error).toMatchObject({
        code: "SERVICE_UNAVAILABLE",
        message: UNAVAILABLE_MESSAGE,
      });
    }
    await expectDatabaseDown();
    await sleep(Math.max(0, cutAt + OUTAGE_MS - Date.now()));
    await expectDatabaseDown();

    await proxy.restore();
    await expectRecovered("After the busy cut");
  }, 45_000);

  it("a control plane started while Postgres is away waits for it, then serves", async () => {
    await proxy.cut();
    const output: string[] = [];
    const starting = startControlPlaneProcess({}, { databaseUrl: (url) => proxy.proxiedUrl(url), output });
    try {
      // It tried, failed and waits: the outage lasts OUTAGE_MS more from then.
      await vi.waitFor(() => expect(output.join("")).toContain("a dependency is not reachable at start"), {
        timeout: 30_000,
        interval: 100,
      });
      await sleep(OUTAGE_MS);
    } finally {
      await proxy.restore();
    }
    // Resolves once /health answers 200; throws if the process exited meanwhile.
    const late = await starting;
    try {
      const client = new ApiClient(late.url);
      await registerOwner(client);
      await client.mutateOk("project.create", { name: "Started late" });
      expectAlive(late);
    } finally {
      await late.stop();
    }
    expectAlive(controlPlane);
  }, 60_000);
});

describe("NATS stopped and started", () => {
  let nats: JwtNats;
  let controlPlane: ControlPlaneProcess;
  let api: ApiClient;

  beforeAll(async () => {
    nats = await startJwtNats({ jetstream: true });
    controlPlane = await startControlPlaneProcess(nats.env);
    api = new ApiClient(controlPlane.url);
    await registerOwner(api);
  }, 90_000);

  afterAll(async () => {
    await nats?.server.resume().catch(() => {});
    await controlPlane?.stop();
    await nats?.stop();
  }, 30_000);

  it("the process stays alive, readiness shows NATS down then up, and agent calls work again", async () => {
    const before = await getJson(`${controlPlane.url}/health/ready`);
    expect(before).toMatchObject({ status: 200, body: { status: "ok", checks: { nats: { status: "up" } } } });
    // The machine's own agent answers over NATS.
    expect((await api.query("docker.getContainers")).status).toBe(200);

    const stoppedAt = Date.now();
    await nats.server.pause();
    await vi.waitFor(
      async () => {
        const ready = await getJson(`${controlPlane.url}/health/ready`);
        // The API still serves what needs only the database: degraded, not unavailable.
        expect(ready).toMatchObject({
          status: 200,
          body: { status: "degraded", checks: { database: { status: "up" }, nats: { status: "down" } } },
        });
      },
      { timeout: 10_000, interval: 200 },
    );
    expect((await getJson(`${controlPlane.url}/health/live`)).status).toBe(200);
    await api.mutateOk("project.create", { name: "While NATS is away" });
    await sleep(Math.max(0, stoppedAt + OUTAGE_MS - Date.now()));
    expectAlive(controlPlane);

    await nats.server.resume();
    await vi.waitFor(
      async () => {
        const ready = await getJson(`${controlPlane.url}/health/ready`);
        expect(ready).toMatchObject({
          status: 200,
          body: { status: "ok", checks: { nats: { status: "up" } } },
        });
      },
      { timeout: 15_000, interval: 200 },
    );
    // Subscriptions came back with the connection: the local agent answers again.
    await vi.waitFor(async () => expect((await api.query("docker.getContainers")).status).toBe(200), {
      timeout: 10_000,
      interval: 250,
    });
    expect(controlPlane.output.join("")).toContain("NATS connection lost");
    expectAlive(controlPlane);
  }, 60_000);

  it("a control plane started while NATS is away waits for it, then serves", async () => {
    await nats.server.pause();
    const output: string[] = [];
    const starting = startControlPlaneProcess(nats.env, { output });
    try {
      // It tried, failed and waits: the outage lasts OUTAGE_MS more from then.
      await vi.waitFor(() => expect(output.join("")).toContain("a dependency is not reachable at start"), {
        timeout: 30_000,
        interval: 100,
      });
      await sleep(OUTAGE_MS);
    } finally {
      await nats.server.resume();
    }
    const late = await starting;
    try {
      const ready = await getJson(`${late.url}/health/ready`);
      expect(ready).toMatchObject({
        status: 200,
        body: { status: "ok", checks: { nats: { status: "up" } } },
      });
      expectAlive(late);
    } finally {
      await late.stop();
    }
  }, 60_000);
});
