/**
 * The reconciler writes only what is still true of what it read: a deployment that ends
 * between its read of the applications and its write (here: while it waits for the agent's
 * observation) decides the status, and the stale pass leaves it alone. The agent's answer is
 * scripted (a missing service) so that the deployment can end exactly inside that window; the
 * database is the real one.
 */
import type { ObservedServices } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceContext } from "../context.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
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
  const { deploymentId } = await insertDeployment(platform.services.db, {
    applicationId,
    kind: "deploy",
    title,
    description: null,
    serverId: null,
  });
  await platform.services.db
    .updateTable("deployments")
    .set({ status: "done", completedAt: new Date().toISOString() })
    .where("deploymentId", "=", deploymentId)
    .execute();
}

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
    await platform.services.db
      .updateTable("applications")
      .set({ applicationStatus: "done" })
      .where("applicationId", "=", applicationId)
      .execute();

    let deployMeanwhile = false;
    const client: ServiceContext["agents"]["client"] = Object.create(platform.services.agents.client);
    client.observeServices = async (): Promise<ObservedServices> => {
      if (deployMeanwhile) {
        deployMeanwhile = false;
        // A deployment runs and ends while the pass waits for this answer.
        await new Promise((resolve) => setTimeout(resolve, 5));
        await insertDone(applicationId, `meanwhile-${Date.now()}`);
      }
      return { services: [], activeJobs: [] };
    };
    const services: ServiceContext = {
      ...platform.services,
      agents: Object.assign(Object.create(platform.services.agents), { client }),
    };
    const reconciler = new Reconciler(services);
    const status = () =>
      platform.services.db
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
