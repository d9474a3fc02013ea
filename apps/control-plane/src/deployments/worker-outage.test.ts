/**
 * The database away around a deployment. A job taken from the queue while it is away cannot be
 * claimed, so the worker answers "retry" (the queue keeps the job) instead of "ran" (the job
 * would be acked and its deployment left idle for good). A deployment whose database goes away
 * after the claim (Postgres cut through a proxy the test owns) stores its outcome once the
 * database is back, without a restart: it never stays running.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TcpProxy } from "../../../../tests/faults/tcp-proxy.ts";
import type { Db } from "../db/database.ts";
import { databaseUnavailable } from "../errors.ts";
import {
  createTestDatabase,
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../testing/harness.ts";
import type { DeploymentOutcome, DeploymentRun } from "./pipeline.ts";

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
    await platform.ctx.db
      .insertInto("deployments")
      .values({
        deploymentId,
        applicationId: app.applicationId,
        targetKind: "application",
        targetId: app.applicationId,
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
    const outcome = await platform.ctx.deployments.worker.execute(
      { ...platform.ctx, db: away },
      deploymentId,
    );
    expect(outcome).toBe("retry");
    const row = await platform.ctx.db
      .selectFrom("deployments")
      .select(["status", "errorMessage"])
      .where("deploymentId", "=", deploymentId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: "idle", errorMessage: null });
    expect(platform.ctx.deployments.worker.isRunning(deploymentId)).toBe(false);
  });
});

describe("a deployment whose database goes away after the claim", () => {
  it("stores its outcome once the database is back: done, with its log, not left running", async () => {
    const database = await createTestDatabase({ migrated: true });
    const proxy = await TcpProxy.start();
    const url = proxy.proxiedUrl((database.target as { url: string }).url);
    let finishRun: (() => void) | undefined;
    const runner = async (_services: unknown, run: DeploymentRun): Promise<DeploymentOutcome> => {
      run.log("building");
      await new Promise<void>((resolve) => {
        finishRun = resolve;
      });
      run.log("deployed");
      return { imageName: "platform/test:outage" };
    };
    const cut = await startTestPlatform(
      {},
      {
        agents: { localAgent: false },
        deployments: { runner },
        database: { kind: "postgres", url },
      },
    );
    try {
      const as = { token: (await cut.registerOwner()).token };
      const project = await cut.mutateOk("project.create", { name: "Cut" }, as);
      const app = await cut.mutateOk(
        "application.create",
        { name: "web", environmentId: project.environment.environmentId },
        as,
      );
      const { deploymentId } = await cut.mutateOk(
        "application.deploy",
        { applicationId: app.applicationId },
        as,
      );
      const deadline = Date.now() + 20_000;
      while (!finishRun && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(finishRun, "the run in the pipeline").toBeDefined();

      await proxy.cut();
      finishRun!(); // the outcome is ready while the database is away
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await proxy.restore();

      const read = () =>
        cut.ctx.db
          .selectFrom("deployments")
          .select(["status", "logs"])
          .where("deploymentId", "=", deploymentId)
          .executeTakeFirst()
          .catch(() => undefined);
      let row = await read();
      const settleBy = Date.now() + 20_000;
      while (row?.status !== "done" && Date.now() < settleBy) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        row = await read();
      }
      expect(row?.status).toBe("done");
      expect(row?.logs).toMatch(/building\n(.*\n)*.*deployed\n/);
      const application = await cut.ctx.db
        .selectFrom("applications")
        .select("applicationStatus")
        .where("applicationId", "=", app.applicationId)
        .executeTakeFirstOrThrow();
      expect(application.applicationStatus).toBe("done");
    } finally {
      await cut.close();
      await proxy.close();
      await database.drop();
    }
  }, 90_000);
});
