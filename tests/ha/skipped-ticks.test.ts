/**
 * Issue 40 item 6d: a cron tick due while no control plane runs is recorded as a skipped run
 * (one row of the schedule, ended with status error and a message naming how many runs and
 * when), never caught up; copies starting together after the downtime record it once, and a copy
 * restarting while another one fires the schedule records nothing.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestDatabase,
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../../apps/control-plane/src/testing/harness.ts";

const env = { PLATFORM_SECRET_KEY: randomBytes(32).toString("base64") };
let database: Awaited<ReturnType<typeof createTestDatabase>>;
const open: TestPlatform[] = [];

const start = async () => {
  const platform = await startTestPlatform(env, {
    database: database.target,
    agents: { localAgent: false, commandTimeoutMs: 2_000 },
  });
  open.push(platform);
  return platform;
};
const stop = async (platform: TestPlatform) => {
  open.splice(open.indexOf(platform), 1);
  await platform.close();
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  database = await createTestDatabase({ migrated: true });
});

afterAll(async () => {
  for (const platform of open) await platform.close();
  await database?.drop();
});

describe("cron ticks due while no control plane runs", () => {
  it("records one skipped run per schedule, once however many copies start, and none while a copy fires", async () => {
    const first = await start();
    const owner: Session = await first.registerOwner();
    const as = { token: owner.token };
    const project = await first.mutateOk("project.create", { name: "Shop" }, as);
    const app = await first.mutateOk(
      "application.create",
      { name: "web", environmentId: project.environment.environmentId },
      as,
    );
    const schedule = await first.mutateOk(
      "schedule.create",
      {
        name: "Every second",
        scheduleType: "application",
        applicationId: app.applicationId,
        cronExpression: "* * * * * *",
        command: "echo hi",
      },
      as,
    );
    const skippedRuns = async (platform: TestPlatform) =>
      (
        await platform.ctx.db
          .selectFrom("deployments")
          .select(["status", "errorMessage", "logs", "title"])
          .where("scheduleId", "=", schedule.scheduleId)
          .where("errorMessage", "like", "Skipped:%")
          .execute()
      ).map((row) => ({ ...row, count: Number(row.errorMessage!.match(/^Skipped: (\d+) runs? due/)?.[1]) }));

    await first.ctx.schedules.recording;
    expect(await skippedRuns(first)).toEqual([]);
    // Every control plane down for three seconds: at least two ticks of the schedule were due.
    await stop(first);
    await sleep(3_000);
    const [b, c] = await Promise.all([start(), start()]);
    await Promise.all([b.ctx.schedules.recording, c.ctx.schedules.recording]);
    const skipped = await skippedRuns(b);
    expect(skipped, b.logLines.join("\n")).toHaveLength(1);
    expect(skipped[0]!.status).toBe("error");
    expect(skipped[0]!.count).toBeGreaterThanOrEqual(2);
    expect(skipped[0]!.errorMessage).toMatch(/while no control plane was running; not caught up/);
    expect(skipped[0]!.logs).toContain(skipped[0]!.errorMessage);
    expect(skipped[0]!.title).toBe("Skipped run: Every second");
    // It is read like any run of the schedule.
    const answer = await b.query<{ status: string; errorMessage: string | null }[]>(
      "deployment.allByType",
      { id: schedule.scheduleId, type: "schedule" },
      as,
    );
    expect(answer.status).toBe(200);
    const runs = answer.body;
    expect(runs.filter((run) => run.errorMessage?.startsWith("Skipped:"))).toHaveLength(1);

    // A copy restarting while another fires every tick: nothing was skipped.
    await stop(b);
    await sleep(3_000);
    const again = await start();
    await again.ctx.schedules.recording;
    expect(await skippedRuns(again)).toHaveLength(1);
  }, 120_000);
});
