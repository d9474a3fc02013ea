/**
 * Several control planes on one Postgres database: a
 * control plane that starts does not recover a deployment another live one runs (its lease
 * holds), and of two that start together exactly one recovers a deployment whose control plane
 * died. No agent answers here, so a recovered deployment stays followed (running): the test
 * reads who follows it from the log and the lease.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import type { DeploymentOutcome, DeploymentRun } from "./pipeline.ts";
import { insertDeployment } from "./repository.ts";

const open: TestPlatform[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const platform of open.splice(0)) await platform.close();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("control planes sharing one database", () => {
  it("a starting control plane leaves a deployment another live one runs; of two starting together exactly one recovers a dead one's", async () => {
    const { target: database, drop } = await createTestDatabase({ migrated: true });
    cleanups.push(drop);
    const secret = "leases-test-secret-key-0123456789abcdef";
    const gates = new Map<string, () => void>();
    const runner = async (_services: unknown, run: DeploymentRun): Promise<DeploymentOutcome> => {
      await new Promise<void>((resolve) => gates.set(run.deploymentId, resolve));
      return { imageName: `platform/test:${run.deploymentId}` };
    };
    const start = async (instanceId: string) => {
      const platform = await startTestPlatform(
        { PLATFORM_SECRET_KEY: secret },
        { agents: { localAgent: false }, deployments: { runner, instanceId }, database },
      );
      open.push(platform);
      return platform;
    };
    const a = await start("a");
    const as = { token: (await a.registerOwner()).token };
    const project = await a.mutateOk("project.create", { name: "Leases" }, as);
    const app = await a.mutateOk(
      "application.create",
      { name: "web", environmentId: project.environment.environmentId },
      as,
    );
    const { deploymentId: live } = await a.mutateOk(
      "application.deploy",
      { applicationId: app.applicationId },
      as,
    );
    await waitFor("the deployment running on a", async () => gates.has(live));

    const b = await start("b");
    expect(b.logLines.join("\n")).not.toContain("recovering deployments");
    const lease = await b.ctx.db
      .selectFrom("deploymentLeases")
      .selectAll()
      .where("deploymentId", "=", live)
      .executeTakeFirstOrThrow();
    expect(lease.owner).toBe("a");
    gates.get(live)!();
    await waitFor("a to finish it", async () => {
      const row = await a.ctx.db
        .selectFrom("deployments")
        .select("status")
        .where("deploymentId", "=", live)
        .executeTakeFirstOrThrow();
      return row.status === "done";
    });

    // A deployment left running by a control plane that died (its lease ran out long ago).
    const { deploymentId: dead } = await insertDeployment(a.ctx.db, {
      target: { kind: "application", id: app.applicationId },
      kind: "deploy",
      title: "left by a dead control plane",
      description: null,
      serverId: null,
    });
    await a.ctx.db
      .updateTable("deployments")
      .set({ status: "running" })
      .where("deploymentId", "=", dead)
      .execute();
    await a.ctx.db
      .insertInto("deploymentLeases")
      .values({ deploymentId: dead, owner: "died", until: new Date(Date.now() - 60_000).toISOString() })
      .execute();
    const [c, d] = await Promise.all([start("c"), start("d")]);
    const recovered = [c, d].filter((platform) =>
      platform.logLines.some((line) => line.includes("recovering deployments") && line.includes(dead)),
    );
    expect(recovered).toHaveLength(1);
    const taken = await c.ctx.db
      .selectFrom("deploymentLeases")
      .select("owner")
      .where("deploymentId", "=", dead)
      .executeTakeFirstOrThrow();
    expect(taken.owner).toBe(recovered[0] === c ? "c" : "d");
  });
});
