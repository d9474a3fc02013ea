/**
 * A job taken from the queue while the database is away: it cannot be claimed, so the worker
 * answers "retry" (the queue keeps the job) instead of "ran" (the job would be acked and its
 * deployment left idle for good).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/database.ts";
import { databaseUnavailable } from "../errors.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let owner: Session;

beforeAll(async () => {
  platform = await startTestPlatform({}, { agents: { localAgent: false } });
  owner = await platform.registerOwner();
});

afterAll(() => platform?.close());

describe("a deployment taken while the database is away", () => {
  it("is not claimed, stays idle, and is handed back for a later try", async () => {
    const as = { token: owner.token };
    const project = await platform.mutateOk("project.create", { name: "Outage" }, as);
    const app = await platform.mutateOk(
      "application.create",
      { name: "web", environmentId: project.environment.environmentId },
      as,
    );
    const deploymentId = `outage-${Date.now()}`;
    await platform.services.db
      .insertInto("deployments")
      .values({
        deploymentId,
        applicationId: app.applicationId,
        kind: "deploy",
        title: "during the cut",
        description: null,
        errorMessage: null,
        commitHash: null,
        commitMessage: null,
        imageName: null,
        archivePath: null,
        archiveFormat: null,
        serverId: null,
      })
      .execute();
    // Every query fails as db/database.ts reports a lost database.
    const away = new Proxy({} as Db, {
      get: () => () => {
        throw databaseUnavailable(new Error("Connection terminated unexpectedly"));
      },
    });
    const outcome = await platform.services.deployments.worker.execute(
      { ...platform.services, db: away },
      deploymentId,
    );
    expect(outcome).toBe("retry");
    const row = await platform.services.db
      .selectFrom("deployments")
      .select(["status", "errorMessage"])
      .where("deploymentId", "=", deploymentId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: "idle", errorMessage: null });
    expect(platform.services.deployments.worker.isRunning(deploymentId)).toBe(false);
  });
});
