/**
 * schedule.* on a real database, without agents: the rules of who reaches what (another
 * organization's application, stack, server or schedule is a 404; a host schedule is a 403 for
 * anyone but an instance administrator), fields refused with a 400 naming them (shell characters
 * in serviceName, cron expressions, time zones, a change of target), every accepted field
 * applied, and a run the control plane left running failed, never run again. Runs on Docker are
 * in schedules/e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertTestServer } from "../agents/testing/agents.ts";
import { newId } from "../crypto/ids.ts";
import { DeploymentLeases } from "../deployments/leases.ts";
import { DeploymentRecovery } from "../deployments/recovery.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let owner: Session;
let member: Session;
let stranger: Session;
let applicationId: string;
let composeId: string;
let serverId: string;
let theirs: { applicationId: string; composeId: string; serverId: string; scheduleId: string };
const as = (session: Session) => ({ token: session.token });

const base = { name: "Nightly", cronExpression: "0 3 * * *", command: "echo hi" };

async function makeServices(session: Session, label: string) {
  const project = await platform.mutateOk("project.create", { name: `${label} shop` }, as(session));
  const environmentId = project.environment.environmentId as string;
  const app = await platform.mutateOk(
    "application.create",
    { name: `${label} web`, environmentId },
    as(session),
  );
  const stack = await platform.mutateOk(
    "compose.create",
    {
      name: `${label} stack`,
      appName: `${label}-stack`,
      environmentId,
      composeFile: "services:\n  web:\n    image: busybox\n",
    },
    as(session),
  );
  const server = await insertTestServer(platform, session.user.organizationId, `${label}-edge`);
  return {
    applicationId: app.applicationId as string,
    composeId: stack.composeId as string,
    serverId: server,
  };
}

beforeAll(async () => {
  platform = await startTestPlatform({}, { agents: { localAgent: false, commandTimeoutMs: 2_000 } });
  owner = await platform.registerOwner();
  member = await platform.addMember(owner, "member");
  stranger = await createUserDirectly(platform, { email: "stranger@example.com", role: "owner" });
  ({ applicationId, composeId, serverId } = await makeServices(owner, "ours"));
  const other = await makeServices(stranger, "theirs");
  const schedule = await platform.mutateOk(
    "schedule.create",
    { ...base, scheduleType: "application", applicationId: other.applicationId },
    as(stranger),
  );
  theirs = { ...other, scheduleId: schedule.scheduleId };
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

describe("schedule", () => {
  it("creates, lists, reads, updates and deletes an application's schedule, every field applied", async () => {
    const created = await platform.mutateOk(
      "schedule.create",
      {
        ...base,
        scheduleType: "application",
        applicationId,
        shellType: "sh",
        timezone: "Europe/Paris",
        enabled: true,
      },
      as(member),
    );
    expect(created).toMatchObject({
      ...base,
      scheduleType: "application",
      applicationId,
      shellType: "sh",
      timezone: "Europe/Paris",
      enabled: true,
      userId: member.user.userId,
      organizationId: owner.user.organizationId,
    });
    expect(created.appName).toMatch(/^schedule-[a-z0-9]+$/);
    // 03:00 in Paris is 02:00 or 01:00 UTC (summer time): the zone is the cron expression's.
    expect(["01", "02"]).toContain(created.nextRunAt.slice(11, 13));
    const listed = await platform.query(
      "schedule.list",
      { id: applicationId, scheduleType: "application" },
      as(member),
    );
    expect(listed.status).toBe(200);
    expect(listed.body.map((row: { scheduleId: string }) => row.scheduleId)).toContain(created.scheduleId);
    const one = await platform.query("schedule.one", { scheduleId: created.scheduleId }, as(member));
    expect(one.body.application.applicationId).toBe(applicationId);
    expect(one.body.deployments).toEqual([]);

    const updated = await platform.mutateOk(
      "schedule.update",
      {
        scheduleId: created.scheduleId,
        name: "Hourly",
        cronExpression: "@hourly",
        command: "date",
        shellType: "bash",
        timezone: "",
        enabled: false,
        script: null,
        scheduleType: "application",
        applicationId,
        composeId: null,
        serverId: null,
        serviceName: null,
      },
      as(member),
    );
    expect(updated).toMatchObject({
      name: "Hourly",
      cronExpression: "@hourly",
      command: "date",
      shellType: "bash",
      timezone: null,
      enabled: false,
      nextRunAt: null,
    });
    expect(platform.ctx.schedules.nextRun(created.scheduleId)).toBeNull();
    expect(
      (await platform.mutate("schedule.delete", { scheduleId: created.scheduleId }, as(member))).status,
    ).toBe(200);
    expect(
      (await platform.query("schedule.one", { scheduleId: created.scheduleId }, as(member))).status,
    ).toBe(404);
  });

  it("creates a compose service's schedule; serviceName with shell characters is refused", async () => {
    const created = await platform.mutateOk(
      "schedule.create",
      { ...base, scheduleType: "compose", composeId, serviceName: "web" },
      as(owner),
    );
    expect(created).toMatchObject({ composeId, serviceName: "web" });
    for (const serviceName of ["web; rm -rf /", "$(id)", "web`id`", "a b", "../web", "-web", "web|x"]) {
      const response = await platform.mutate(
        "schedule.create",
        { ...base, scheduleType: "compose", composeId, serviceName },
        as(owner),
      );
      expect(response.status, serviceName).toBe(400);
      expect(response.body.error.data.fields).toEqual(["serviceName"]);
      const update = await platform.mutate(
        "schedule.update",
        { scheduleId: created.scheduleId, serviceName },
        as(owner),
      );
      expect(update.status, serviceName).toBe(400);
    }
    const missing = await platform.mutate(
      "schedule.create",
      { ...base, scheduleType: "compose", composeId },
      as(owner),
    );
    expect(missing.body.error.data.fields).toEqual(["serviceName"]);
  });

  it("refuses bad fields with a 400 naming them, and changes nothing", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ cronExpression: "every day" }, "cronExpression"],
      [{ cronExpression: "61 * * * *" }, "cronExpression"],
      [{ timezone: "Mars/Olympus" }, "timezone"],
      [{ timezone: "UTC; rm -rf /" }, "timezone"],
      [{ shellType: "zsh" }, "shellType"],
      [{ name: "a\nb" }, "name"],
      [{ command: "" }, "command"],
      [{ serviceName: "web" }, "serviceName"],
      [{ serverId }, "serverId"],
      [{ composeId }, "composeId"],
      // Only server schedules run a script; a container's runs `command`.
      [{ script: "uptime" }, "script"],
    ];
    const before = await platform.ctx.db.selectFrom("schedules").select("scheduleId").execute();
    for (const [fields, field] of cases) {
      const response = await platform.mutate(
        "schedule.create",
        { ...base, scheduleType: "application", applicationId, ...fields },
        as(owner),
      );
      expect(response.status, JSON.stringify(fields)).toBe(400);
      expect(response.body.error.data.fields, JSON.stringify(fields)).toEqual([field]);
    }
    const noApplication = await platform.mutate(
      "schedule.create",
      { ...base, scheduleType: "application" },
      as(owner),
    );
    expect(noApplication.body.error.data.fields).toEqual(["applicationId"]);
    expect(await platform.ctx.db.selectFrom("schedules").select("scheduleId").execute()).toEqual(before);

    const created = await platform.mutateOk("schedule.create", { ...base, applicationId }, as(owner));
    for (const [fields, field] of [
      [{ scheduleType: "compose" }, "scheduleType"],
      [{ composeId }, "composeId"],
      [{ serverId }, "serverId"],
      [{ cronExpression: "nope" }, "cronExpression"],
      [{ timezone: "Nowhere/Town" }, "timezone"],
    ] as const) {
      const response = await platform.mutate(
        "schedule.update",
        { scheduleId: created.scheduleId, ...fields },
        as(owner),
      );
      expect(response.status, JSON.stringify(fields)).toBe(400);
      expect(response.body.error.data.fields).toEqual([field]);
    }
  });

  it("keeps a description (Dokploy's CLI option, shown only) and takes the caller's own organizationId", async () => {
    const created = await platform.mutateOk(
      "schedule.create",
      {
        ...base,
        applicationId,
        description: "nightly cache warm-up",
        organizationId: owner.user.organizationId,
      },
      as(owner),
    );
    expect(created.description).toBe("nightly cache warm-up");
    const updated = await platform.mutateOk(
      "schedule.update",
      { scheduleId: created.scheduleId, description: "", organizationId: owner.user.organizationId },
      as(owner),
    );
    expect(updated.description).toBeNull();
    // Dokploy's CLI sends organizationId: another organization's is a 404, as any foreign id.
    const foreign = await platform.mutate(
      "schedule.update",
      { scheduleId: created.scheduleId, organizationId: "another-organization" },
      as(owner),
    );
    expect(foreign.status).toBe(404);
    await platform.mutateOk("schedule.delete", { scheduleId: created.scheduleId }, as(owner));
  });

  it("answers 404 for another organization's application, stack, server or schedule", async () => {
    const attempts: [string, "query" | "mutate", Record<string, unknown>][] = [
      ["schedule.create", "mutate", { ...base, applicationId: theirs.applicationId }],
      [
        "schedule.create",
        "mutate",
        { ...base, scheduleType: "compose", composeId: theirs.composeId, serviceName: "web" },
      ],
      ["schedule.create", "mutate", { ...base, scheduleType: "server", serverId: theirs.serverId }],
      ["schedule.update", "mutate", { scheduleId: theirs.scheduleId, command: "id" }],
      ["schedule.delete", "mutate", { scheduleId: theirs.scheduleId }],
      ["schedule.runManually", "mutate", { scheduleId: theirs.scheduleId }],
      ["schedule.one", "query", { scheduleId: theirs.scheduleId }],
      ["schedule.list", "query", { id: theirs.applicationId, scheduleType: "application" }],
      ["schedule.list", "query", { id: theirs.composeId, scheduleType: "compose" }],
      ["schedule.list", "query", { id: theirs.serverId, scheduleType: "server" }],
      ["deployment.allByType", "query", { id: theirs.scheduleId, type: "schedule" }],
    ];
    const before = await platform.ctx.db.selectFrom("schedules").selectAll().execute();
    for (const [name, kind, input] of attempts) {
      const response =
        kind === "query"
          ? await platform.query(name, input, as(owner))
          : await platform.mutate(name, input, as(owner));
      expect(response.status, `${name} ${JSON.stringify(input)} ${JSON.stringify(response.body)}`).toBe(404);
    }
    expect(await platform.ctx.db.selectFrom("schedules").selectAll().execute()).toEqual(before);
    expect(
      await platform.ctx.db
        .selectFrom("deployments")
        .select("deploymentId")
        .where("scheduleId", "=", theirs.scheduleId)
        .execute(),
    ).toEqual([]);
  });

  it("lets only instance administrators manage schedules on a server or this machine (403)", async () => {
    const host = { ...base, command: "df -h" };
    // A plain member of the instance organization.
    expect(
      (await platform.mutate("schedule.create", { ...host, scheduleType: "dokploy-server" }, as(member)))
        .status,
    ).toBe(403);
    expect(
      (await platform.mutate("schedule.create", { ...host, scheduleType: "server", serverId }, as(member)))
        .status,
    ).toBe(403);
    expect(
      (await platform.query("schedule.list", { id: serverId, scheduleType: "server" }, as(member))).status,
    ).toBe(403);
    // Another organization's owner, even on its own server: a tenant is never given a host shell.
    expect(
      (
        await platform.mutate(
          "schedule.create",
          { ...host, scheduleType: "server", serverId: theirs.serverId },
          as(stranger),
        )
      ).status,
    ).toBe(403);
    expect(
      (await platform.mutate("schedule.create", { ...host, scheduleType: "dokploy-server" }, as(stranger)))
        .status,
    ).toBe(403);
    // The instance administrator may; a member then cannot read, run or change it.
    const created = await platform.mutateOk(
      "schedule.create",
      { ...host, scheduleType: "server", serverId, script: "uptime" },
      as(owner),
    );
    expect(created).toMatchObject({ scheduleType: "server", serverId, script: "uptime" });
    const local = await platform.mutateOk(
      "schedule.create",
      { ...host, scheduleType: "dokploy-server" },
      as(owner),
    );
    const listed = await platform.query(
      "schedule.list",
      { id: "local", scheduleType: "dokploy-server" },
      as(owner),
    );
    expect(listed.body.map((row: { scheduleId: string }) => row.scheduleId)).toEqual([local.scheduleId]);
    for (const scheduleId of [created.scheduleId, local.scheduleId]) {
      expect((await platform.query("schedule.one", { scheduleId }, as(member))).status).toBe(403);
      expect((await platform.mutate("schedule.runManually", { scheduleId }, as(member))).status).toBe(403);
      expect(
        (await platform.mutate("schedule.update", { scheduleId, command: "id" }, as(member))).status,
      ).toBe(403);
      expect((await platform.mutate("schedule.delete", { scheduleId }, as(member))).status).toBe(403);
      expect(
        (await platform.query("deployment.allByType", { id: scheduleId, type: "schedule" }, as(member)))
          .status,
      ).toBe(403);
    }
  });

  it("fails a run the control plane left running, never running it again", async () => {
    const created = await platform.mutateOk("schedule.create", { ...base, applicationId }, as(owner));
    const deploymentId = newId();
    await platform.ctx.db
      .insertInto("deployments")
      .values({
        deploymentId,
        targetKind: "schedule",
        targetId: created.scheduleId,
        scheduleId: created.scheduleId,
        applicationId: null,
        kind: "schedule",
        title: "Scheduled run",
        description: null,
        status: "running",
        errorMessage: null,
        commitHash: null,
        commitMessage: null,
        imageName: null,
        archivePath: null,
        archiveFormat: null,
        serverId: null,
      })
      .execute();
    const leases = new DeploymentLeases("schedule-test-recovery");
    const requeued: string[] = [];
    const recovery = new DeploymentRecovery(platform.ctx, leases, async (job) => {
      requeued.push(job.deploymentId);
    });
    await recovery.start();
    // Settled in the background: the agent is asked for the job's outcome first (none is
    // connected here: the run fails once it was not for AWAIT_UNCONNECTED_MS, 20 s).
    const read = () =>
      platform.ctx.db
        .selectFrom("deployments")
        .selectAll()
        .where("deploymentId", "=", deploymentId)
        .executeTakeFirstOrThrow();
    let row = await read();
    for (let waited = 0; row.status === "running" && waited < 50_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      row = await read();
    }
    expect(row.status).toBe("error");
    expect(row.errorMessage).toMatch(/not run again/);
    expect(requeued).not.toContain(deploymentId);
    const runs = await platform.query(
      "deployment.allByType",
      { id: created.scheduleId, type: "schedule" },
      as(owner),
    );
    expect(runs.body.map((run: { deploymentId: string }) => run.deploymentId)).toEqual([deploymentId]);
  }, 70_000);
});
