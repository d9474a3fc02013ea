/**
 * The reconciler writes only what is still true of what it read: a deployment that ends
 * between its read of the applications and its write (here: while it waits for the agent's
 * observation) decides the status, and the stale pass leaves it alone. The agent's answer is
 * scripted (a missing service) so that the deployment can end exactly inside that window; the
 * database is the real one. And a pass asks every server's agent at once, not one after another.
 */
import type { ObservedServices } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";
import { Reconciler } from "./reconcile.ts";
import { insertDeployment } from "./repository.ts";

let platform: TestPlatform;
let owner: Session;

beforeAll(async () => {
  platform = await startTestPlatform({ RECONCILE_INTERVAL_MS: "0" }, { agents: { localAgent: false } });
  owner = await platform.registerOwner();
});

afterAll(() => platform?.close());

async function insertDone(applicationId: string, title: string): Promise<void> {
  const { deploymentId } = await insertDeployment(platform.ctx.db, {
    target: { kind: "application", id: applicationId },
    kind: "deploy",
    title,
    description: null,
    serverId: null,
  });
  await platform.ctx.db
    .updateTable("deployments")
    .set({ status: "done", completedAt: new Date().toISOString() })
    .where("deploymentId", "=", deploymentId)
    .execute();
}

/** The platform's services with observeServices answered by `observe`. */
function withObserve(observe: ServiceContext["agents"]["client"]["observeServices"]): ServiceContext {
  const client: ServiceContext["agents"]["client"] = Object.create(platform.ctx.agents.client);
  client.observeServices = observe;
  return {
    ...platform.ctx,
    agents: Object.assign(Object.create(platform.ctx.agents), { client }),
  };
}

/** A deployed application (status done, one done deployment) on `serverId` (null: this machine). */
async function deployedApplication(name: string, serverId: string | null): Promise<string> {
  const as = { token: owner.token };
  const project = await platform.mutateOk("project.create", { name }, as);
  const app = await platform.mutateOk(
    "application.create",
    { name, environmentId: project.environment.environmentId },
    as,
  );
  const applicationId = app.applicationId as string;
  await insertDone(applicationId, `first-${Date.now()}`);
  await platform.ctx.db
    .updateTable("applications")
    .set({ applicationStatus: "done", serverId })
    .where("applicationId", "=", applicationId)
    .execute();
  return applicationId;
}

describe("reconciliation across servers", () => {
  it("asks every server's agent at once: one that does not answer holds back no other", async () => {
    // More servers than Node's default of 10 listeners on one abort signal, which each waiting
    // observation adds to the reconciler's: a pass must not warn of a leak.
    const remote = Array.from({ length: 11 }, () => newId());
    for (const [index, serverId] of remote.entries()) {
      await insertServer(platform.ctx.db, owner.user.organizationId, {
        serverId,
        name: `remote-${index}`,
        ipAddress: `198.51.100.${30 + index}`,
      });
      await deployedApplication(`there-${index}`, serverId);
    }
    await deployedApplication("here", null);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);

    // No agent answers until all were asked: a pass asking one server after the other would
    // wait on the first forever.
    const asked = new Set<string>();
    let answer = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const reconciler = new Reconciler(
      withObserve(async (server): Promise<ObservedServices> => {
        asked.add(server);
        await answered;
        return { services: [], activeJobs: [] };
      }),
    );
    const pass = reconciler.reconcile();
    try {
      await vi.waitFor(() => expect([...asked].sort()).toEqual([LOCAL_SERVER_ID, ...remote].sort()), {
        timeout: 10_000,
      });
    } finally {
      answer();
      await pass;
      await reconciler.close();
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      process.off("warning", onWarning);
    }
    expect(warnings.map((warning) => warning.name)).not.toContain("MaxListenersExceededWarning");
  });
});

describe("reconciliation against stale reads", () => {
  it("does not flag drift when a deployment ended after the pass read the application", async () => {
    const as = { token: owner.token };
    const project = await platform.mutateOk("project.create", { name: "Reconcile" }, as);
    const app = await platform.mutateOk(
      "application.create",
      { name: "web", environmentId: project.environment.environmentId },
      as,
    );
    const applicationId = app.applicationId as string;
    await insertDone(applicationId, `first-${Date.now()}`);
    await platform.ctx.db
      .updateTable("applications")
      .set({ applicationStatus: "done" })
      .where("applicationId", "=", applicationId)
      .execute();

    let deployMeanwhile = false;
    const reconciler = new Reconciler(
      withObserve(async (server): Promise<ObservedServices> => {
        // Other tests' servers are asked too, side by side: only this application's counts.
        if (deployMeanwhile && server === LOCAL_SERVER_ID) {
          deployMeanwhile = false;
          // A deployment runs and ends while the pass waits for this answer.
          await new Promise((resolve) => setTimeout(resolve, 5));
          await insertDone(applicationId, `meanwhile-${Date.now()}`);
        }
        return { services: [], activeJobs: [] };
      }),
    );
    const status = () =>
      platform.ctx.db
        .selectFrom("applications")
        .select(["applicationStatus", "applicationStatusMessage"])
        .where("applicationId", "=", applicationId)
        .executeTakeFirstOrThrow();

    await reconciler.reconcile(); // first sight of the drift: only suspected
    deployMeanwhile = true;
    await reconciler.reconcile(); // would flag it, but a deployment ended since the read
    expect(await status()).toEqual({ applicationStatus: "done", applicationStatusMessage: null });

    await reconciler.reconcile(); // the drift is still there after it: flagged
    expect(await status()).toMatchObject({
      applicationStatus: "error",
      applicationStatusMessage: expect.stringMatching(/missing/),
    });
    await reconciler.close();
  });
});
