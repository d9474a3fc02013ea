/**
 * Build slots per server (settings.updateBuildsConcurrency, server.updateBuildsConcurrency): the
 * queue runs up to N deployments of one server at once, with a real database and the embedded
 * queue. The pipeline is a stand-in that holds each run until the test releases it, and records
 * which runs were inside when each one entered: overlap is read from those records, never from
 * timings.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import type { DeploymentOutcome, DeploymentRun } from "./pipeline.ts";

vi.setConfig({ testTimeout: 120_000 });

const WAIT_MS = 20_000;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Holds every run until release(id); `inside[id]` is what was in the pipeline when id entered. */
class Barrier {
  readonly inside = new Map<string, string[]>();
  private readonly running = new Set<string>();
  private readonly gates = new Map<string, () => void>();

  runner = async (_services: unknown, run: DeploymentRun): Promise<DeploymentOutcome> => {
    this.inside.set(run.deploymentId, [...this.running]);
    this.running.add(run.deploymentId);
    try {
      await new Promise<void>((resolve, reject) => {
        this.gates.set(run.deploymentId, resolve);
        run.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      });
    } finally {
      this.running.delete(run.deploymentId);
    }
    return { imageName: `platform/test:${run.deploymentId}` };
  };

  entered(deploymentId: string): Promise<true> {
    return waitFor(`${deploymentId} in the pipeline`, async () => this.gates.has(deploymentId));
  }

  async release(deploymentId: string): Promise<void> {
    await this.entered(deploymentId);
    this.gates.get(deploymentId)!();
  }
}

describe("build slots per server", () => {
  const barrier = new Barrier();
  let platform: TestPlatform;
  let as: { token: string };
  let environmentId: string;

  beforeAll(async () => {
    platform = await startTestPlatform(
      {},
      { agents: { localAgent: false }, deployments: { concurrency: 4, runner: barrier.runner } },
    );
    const owner = await platform.registerOwner();
    as = { token: owner.token };
    const project = await platform.mutate("project.create", { name: "Slots" }, as);
    environmentId = project.body.environment.environmentId;
  });

  afterAll(async () => {
    await platform?.close();
  });

  async function app(name: string, serverId?: string): Promise<string> {
    const created = await platform.mutate("application.create", { name, environmentId, serverId }, as);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.applicationId;
  }

  async function deploy(applicationId: string): Promise<string> {
    const response = await platform.mutate("application.deploy", { applicationId }, as);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.deploymentId;
  }

  const slots = () => platform.ctx.deployments.worker.buildSlots;

  const done = (deploymentId: string) =>
    waitFor(`${deploymentId} done`, async () => {
      const row = await platform.ctx.db
        .selectFrom("deployments")
        .select("status")
        .where("deploymentId", "=", deploymentId)
        .executeTakeFirstOrThrow();
      return row.status === "done";
    });

  it("this machine: with 1 slot the second build starts after the first ended, with 2 both run at once", async () => {
    const one = await platform.mutate("settings.updateBuildsConcurrency", { buildsConcurrency: 1 }, as);
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    const settings = await platform.query("settings.getWebServerSettings", {}, as);
    expect(settings.body.buildsConcurrency).toBe(1);

    const [a, b] = [await app("A"), await app("B")];
    const a1 = await deploy(a);
    const b1 = await deploy(b);
    await barrier.entered(a1);
    // B waits for this machine's one slot while A holds it.
    await waitFor("B waiting for a slot", async () => slots().waitingOn(LOCAL_SERVER_ID) === 1);
    expect(barrier.inside.has(b1)).toBe(false);
    await barrier.release(a1);
    await barrier.release(b1);
    await done(b1);
    // B entered the pipeline only once A had left it.
    expect(barrier.inside.get(b1)).not.toContain(a1);

    await platform.mutateOk("settings.updateBuildsConcurrency", { buildsConcurrency: 2 }, as);
    const a2 = await deploy(a);
    const b2 = await deploy(b);
    // Both are in the pipeline before either is released: they overlap.
    await barrier.entered(a2);
    await barrier.entered(b2);
    const together = [barrier.inside.get(a2)!, barrier.inside.get(b2)!];
    expect(together.some((inside) => inside.includes(a2) || inside.includes(b2))).toBe(true);
    await barrier.release(a2);
    await barrier.release(b2);
    await done(a2);
    await done(b2);
  });

  it("a server: 1 slot holds the second build back until the limit is raised to 2, then both run at once", async () => {
    const server = await platform.mutate(
      "server.create",
      { name: "builder", ipAddress: "10.0.0.41", username: "root" },
      as,
    );
    expect(server.status, JSON.stringify(server.body)).toBe(200);
    const serverId = server.body.serverId as string;
    const set = await platform.mutate(
      "server.updateBuildsConcurrency",
      { serverId, buildsConcurrency: 1 },
      as,
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ serverId, buildsConcurrency: 1 });

    // This machine's limit (2, from the test above) is not the server's.
    const [c, d] = [await app("C", serverId), await app("D", serverId)];
    const c1 = await deploy(c);
    const d1 = await deploy(d);
    await barrier.entered(c1);
    // D waits, still idle, for the server's slot; raising the limit lets it start beside C.
    await waitFor("D waiting for its slot", async () => slots().waitingOn(serverId) === 1);
    const row = await platform.ctx.db
      .selectFrom("deployments")
      .select("status")
      .where("deploymentId", "=", d1)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("idle");
    expect(barrier.inside.has(d1)).toBe(false);
    await platform.mutateOk("server.updateBuildsConcurrency", { serverId, buildsConcurrency: 2 }, as);
    await barrier.entered(d1);
    expect(barrier.inside.get(d1)).toContain(c1);
    await barrier.release(c1);
    await barrier.release(d1);
    await done(c1);
    await done(d1);
    const one = await platform.query("server.one", { serverId }, as);
    expect(one.body.buildsConcurrency).toBe(2);
  });

  it("a waiting deployment dropped from the queue stops waiting for its slot", async () => {
    await platform.mutateOk("settings.updateBuildsConcurrency", { buildsConcurrency: 1 }, as);
    const [e, f] = [await app("E"), await app("F")];
    const e1 = await deploy(e);
    const f1 = await deploy(f);
    await barrier.entered(e1);
    await waitFor("F waiting for a slot", async () => slots().waitingOn(LOCAL_SERVER_ID) === 1);
    await platform.mutateOk("settings.cleanAllDeploymentQueue", {}, as);
    // Without E leaving the pipeline, F's wait ends (its row is no longer waiting) and it never runs.
    await waitFor("F no longer waiting", async () => slots().waitingOn(LOCAL_SERVER_ID) === 0);
    await waitFor("F's job ended", async () => !platform.ctx.deployments.worker.isRunning(f1));
    expect(barrier.inside.has(f1)).toBe(false);
    const row = await platform.ctx.db
      .selectFrom("deployments")
      .select("status")
      .where("deploymentId", "=", f1)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("error");
    await barrier.release(e1);
    await done(e1);
  });

  it("refuses another organization's server (404, unchanged), a member, and limits outside 1 to 100", async () => {
    const server = await platform.mutate(
      "server.create",
      { name: "mine", ipAddress: "10.0.0.42", username: "root" },
      as,
    );
    const serverId = server.body.serverId as string;
    const stranger = await createUserDirectly(platform, { email: "slots-stranger@example.com" });
    const theirs = await platform.mutate(
      "server.updateBuildsConcurrency",
      { serverId, buildsConcurrency: 7 },
      { token: stranger.token },
    );
    expect(theirs.status).toBe(404);
    expect((await platform.query("server.one", { serverId }, as)).body.buildsConcurrency).toBeNull();
    for (const buildsConcurrency of [0, 101, 1.5]) {
      const refused = await platform.mutate(
        "server.updateBuildsConcurrency",
        { serverId, buildsConcurrency },
        as,
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["buildsConcurrency"]);
      const local = await platform.mutate("settings.updateBuildsConcurrency", { buildsConcurrency }, as);
      expect(local.status).toBe(400);
    }
    // Another organization's administrator is not this machine's: settings.* is refused.
    const local = await platform.mutate(
      "settings.updateBuildsConcurrency",
      { buildsConcurrency: 3 },
      { token: stranger.token },
    );
    expect(local.status).toBe(403);
  });
});
