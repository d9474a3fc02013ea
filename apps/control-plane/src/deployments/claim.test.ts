/**
 * The claim `idle -> running` keeps one running deployment per service (issue 40 item 6e), on a
 * real database: of two jobs of one service claimed at once exactly one runs and the other is
 * answered "busy" (it stays idle, to be tried again); a job whose own row is running (a message
 * delivered again while its copy runs it) is "busy" too, an ended one is dropped; another
 * service's job is not held back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { claimDeployment, insertDeployment, moveDeployments } from "./repository.ts";

let platform: TestPlatform;
let applications: string[];

beforeAll(async () => {
  platform = await startTestPlatform({}, { agents: { localAgent: false } });
  const as = { token: (await platform.registerOwner()).token };
  const project = await platform.mutateOk("project.create", { name: "Claims" }, as);
  applications = [];
  for (const name of ["one", "two"]) {
    const app = await platform.mutateOk(
      "application.create",
      { name, environmentId: project.environment.environmentId },
      as,
    );
    applications.push(app.applicationId);
  }
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

async function waiting(applicationId: string): Promise<string> {
  const { deploymentId } = await insertDeployment(platform.ctx.db, {
    target: { kind: "application", id: applicationId },
    kind: "deploy",
    title: "claim test",
    description: null,
    serverId: null,
  });
  return deploymentId;
}

async function statusOf(deploymentId: string): Promise<string> {
  const row = await platform.ctx.db
    .selectFrom("deployments")
    .select("status")
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirstOrThrow();
  return row.status;
}

const end = (deploymentId: string) =>
  moveDeployments(
    platform.ctx.db,
    { deploymentId },
    ["running"],
    { status: "done" },
    { line: "done" },
    new Date(),
  );

describe("claimDeployment", () => {
  it("of two jobs of one service claimed at once, runs exactly one and answers busy for the other", async () => {
    const [app] = applications as [string];
    for (let round = 0; round < 20; round++) {
      const ids = [await waiting(app), await waiting(app)];
      const claims = await Promise.all(ids.map((id) => claimDeployment(platform.ctx.db, id, new Date())));
      const ran = claims.filter((claim) => typeof claim === "object");
      expect(ran, `round ${round}`).toHaveLength(1);
      expect(
        claims.filter((claim) => claim === "busy"),
        `round ${round}`,
      ).toHaveLength(1);
      const refused = ids[claims.indexOf("busy")]!;
      expect(await statusOf(refused)).toBe("idle");
      await end((ran[0] as { deploymentId: string }).deploymentId);
      // The running one ended: the refused one runs now.
      const again = await claimDeployment(platform.ctx.db, refused, new Date());
      expect(again).toMatchObject({ deploymentId: refused, status: "running" });
      await end(refused);
    }
  }, 60_000);

  it("answers busy for a job whose own row runs, drops an ended one, and holds no other service back", async () => {
    const [app, other] = applications as [string, string];
    const id = await waiting(app);
    expect(await claimDeployment(platform.ctx.db, id, new Date())).toMatchObject({ status: "running" });
    expect(await claimDeployment(platform.ctx.db, id, new Date())).toBe("busy");
    const otherId = await waiting(other);
    expect(await claimDeployment(platform.ctx.db, otherId, new Date())).toMatchObject({ status: "running" });
    await end(id);
    await end(otherId);
    expect(await claimDeployment(platform.ctx.db, id, new Date())).toBeUndefined();
    expect(await claimDeployment(platform.ctx.db, "no-such-deployment", new Date())).toBeUndefined();
  });
});
