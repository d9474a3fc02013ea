/**
 * Scheduled jobs end to end on the real Docker Engine with the in-process agent (never skipped):
 * a command full of shell characters runs by hand and on its schedule inside the application's
 * container (labelled as the platform labels it), as one argument of the shell the user chose,
 * its output in the run's deployment log; a container of the same service name that carries
 * another organization's labels is never chosen; an instance administrator's script runs on the
 * server itself, and only instance administrators follow its log and kill it (deployment.logs,
 * deployment.killProcess); a compose service's command runs in the stack's container of that service. One sleeping busybox container per case stands in for a deployed service.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeContainer,
  requireDocker,
  runTestContainer,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { applicationOwner, composeOwner, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { startScheduleRun } from "./runs.ts";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
const containers: string[] = [];
const directories: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

/** An application and a running container of its Swarm service name, labelled for `organizationId`. */
async function applicationWithContainer(organizationId?: string) {
  const appName = uniqueName("sched");
  const app = await ok("application.create", { name: "Web", appName, environmentId });
  const name = uniqueName("sched-c");
  containers.push(name);
  const labels = {
    "com.docker.swarm.service.name": app.appName,
    ...ownershipLabels(applicationOwner(organizationId ?? owner.user.organizationId, app.applicationId)),
  };
  await runTestContainer(name, ["sleep", "600"], labels);
  return { applicationId: app.applicationId as string, container: name };
}

const logsOf = async (deploymentId: string) =>
  await platform.ctx.db
    .selectFrom("deployments")
    .select(["logs", "status", "errorMessage"])
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirstOrThrow();

beforeAll(async () => {
  await requireDocker();
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "schedule-e2e-"));
  directories.push(mainDirectory);
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
  environmentId = (await ok("project.create", { name: "Jobs" })).environment.environmentId;
}, 120_000);

afterAll(async () => {
  await platform?.close();
  for (const name of containers) await removeContainer(name);
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describe("scheduled jobs on Docker", () => {
  it("runs a command with shell characters in the application's container, by hand and on its schedule", async () => {
    const { applicationId, container } = await applicationWithContainer();
    const marker = `/${uniqueName("ran")}`;
    // Every character here reaches sh as one argument: the shell the user chose interprets it
    // inside the container; nothing of it is ever read by a shell on the host.
    const command = `echo "tz=$TZ"; echo 'a;b&c' | tr ';&' '+-'; echo $((6*7)) > ${marker}; cat ${marker}; echo "$(echo nested)" \`echo ticks\``;
    const pwned = `/tmp/${uniqueName("pwned")}`;
    const schedule = await ok("schedule.create", {
      // Shell characters in a name are inert: it is only shown.
      name: `Report;touch ${pwned}$(touch ${pwned})\`touch ${pwned}\``,
      scheduleType: "application",
      applicationId,
      cronExpression: "0 0 1 1 *",
      shellType: "sh",
      timezone: "Asia/Tokyo",
      command,
    });
    const manual = await ok("schedule.runManually", { scheduleId: schedule.scheduleId });
    expect(manual.status).toBe("done");
    const run = await logsOf(manual.deploymentId);
    expect(run.logs).toContain("tz=Asia/Tokyo");
    expect(run.logs).toContain("a+b-c");
    expect(run.logs).toContain("42");
    expect(run.logs).toContain("nested ticks");
    // In the container, not on this machine.
    expect(await dockerCli(["exec", container, "cat", marker])).toBe("42");
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(pwned)).toBe(false);
    const runs = await platform.query(
      "deployment.allByType",
      { id: schedule.scheduleId, type: "schedule" },
      as(),
    );
    expect(runs.body.map((row: { deploymentId: string }) => row.deploymentId)).toEqual([manual.deploymentId]);

    // Every second, then off again: the scheduled run is a deployment of the schedule too.
    await ok("schedule.update", {
      scheduleId: schedule.scheduleId,
      cronExpression: "* * * * * *",
      command: "echo tick",
    });
    const deadline = Date.now() + 60_000;
    let scheduled: { deploymentId: string; title: string; status: string } | undefined;
    while (!scheduled && Date.now() < deadline) {
      const listed = await platform.query("schedule.one", { scheduleId: schedule.scheduleId }, as());
      scheduled = listed.body.deployments.find(
        (row: { title: string; status: string }) =>
          row.title.startsWith("Scheduled run") && row.status === "done",
      );
      if (!scheduled) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await ok("schedule.update", { scheduleId: schedule.scheduleId, enabled: false });
    expect(scheduled).toBeDefined();
    expect((await logsOf(scheduled!.deploymentId)).logs).toContain("tick");
  }, 120_000);

  it("runs a compose service's command in the stack's container of that service", async () => {
    const appName = uniqueName("schedc");
    const stack = await ok("compose.create", {
      name: "Stack",
      appName,
      environmentId,
      composeType: "docker-compose",
      composeFile: "services:\n  worker:\n    image: busybox\n",
    });
    const name = uniqueName("sched-w");
    containers.push(name);
    await runTestContainer(name, ["sleep", "600"], {
      "com.docker.compose.project": stack.appName,
      "com.docker.compose.service": "worker",
      ...ownershipLabels(composeOwner(owner.user.organizationId, stack.composeId)),
    });
    const schedule = await ok("schedule.create", {
      name: "Worker job",
      scheduleType: "compose",
      composeId: stack.composeId,
      serviceName: "worker",
      cronExpression: "0 0 1 1 *",
      shellType: "sh",
      command: "echo worker-$((40+2)) && hostname",
    });
    const manual = await ok("schedule.runManually", { scheduleId: schedule.scheduleId });
    expect(manual.status).toBe("done");
    const logs = (await logsOf(manual.deploymentId)).logs;
    expect(logs).toContain("worker-42");
    const hostname = await dockerCli(["inspect", "--format", "{{.Config.Hostname}}", name]);
    expect(logs).toContain(hostname);
  }, 60_000);

  it("never runs in a container of the service's name that carries another organization's labels", async () => {
    const { applicationId, container } = await applicationWithContainer("someone-else");
    const marker = `/${uniqueName("never")}`;
    const schedule = await ok("schedule.create", {
      name: "Probe",
      applicationId,
      cronExpression: "0 0 1 1 *",
      command: `touch ${marker}`,
      shellType: "sh",
    });
    const manual = await ok("schedule.runManually", { scheduleId: schedule.scheduleId });
    expect(manual.status).toBe("error");
    expect(manual.errorMessage).toMatch(
      /no running container of the service carries this schedule's organization's labels/,
    );
    await expect(dockerCli(["exec", container, "test", "-e", marker])).rejects.toThrow();

    // Beside the application's own container, the look-alike is never chosen.
    const appName = await dockerCli([
      "inspect",
      "--format",
      '{{index .Config.Labels "com.docker.swarm.service.name"}}',
      container,
    ]);
    const own = uniqueName("sched-own");
    containers.push(own);
    await runTestContainer(own, ["sleep", "600"], {
      "com.docker.swarm.service.name": appName,
      ...ownershipLabels(applicationOwner(owner.user.organizationId, applicationId)),
    });
    const again = await ok("schedule.runManually", { scheduleId: schedule.scheduleId });
    expect(again.status).toBe("done");
    await dockerCli(["exec", own, "test", "-e", marker]);
    await expect(dockerCli(["exec", container, "test", "-e", marker])).rejects.toThrow();
  }, 60_000);

  it("stops a running run with deployment.killProcess", async () => {
    const { applicationId } = await applicationWithContainer();
    const schedule = await ok("schedule.create", {
      name: "Long",
      applicationId,
      cronExpression: "0 0 1 1 *",
      shellType: "sh",
      command: "echo started; sleep 30",
    });
    const row = await platform.ctx.db
      .selectFrom("schedules")
      .selectAll()
      .where("scheduleId", "=", schedule.scheduleId)
      .executeTakeFirstOrThrow();
    const { deploymentId } = await startScheduleRun(platform.ctx, row);
    const deadline = Date.now() + 30_000;
    while (!(await logsOf(deploymentId)).logs.includes("started") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const killed = await ok("deployment.killProcess", { deploymentId });
    expect(killed.success).toBe(true);
    const ended = await platform.waitForDeployment(deploymentId, 30_000);
    expect(ended.status).toBe("error");
    expect(ended.errorMessage).toMatch(/Killed/);
  }, 60_000);

  it("runs an instance administrator's script on the server itself", async () => {
    const marker = path.join(directories[0]!, "host-ran");
    const schedule = await ok("schedule.create", {
      name: "Host",
      scheduleType: "dokploy-server",
      cronExpression: "0 0 1 1 *",
      command: "echo unused",
      script: `echo "host-$((2+3))" > '${marker}'; cat '${marker}'`,
      shellType: "bash",
    });
    const manual = await ok("schedule.runManually", { scheduleId: schedule.scheduleId });
    expect(manual.status).toBe("done");
    expect((await logsOf(manual.deploymentId)).logs).toContain("host-5");
    expect(existsSync(marker)).toBe(true);
  }, 60_000);
  it("lets instance administrators follow and kill a server schedule's run; to anyone else it is a 404", async () => {
    const schedule = await ok("schedule.create", {
      name: "Host long",
      scheduleType: "dokploy-server",
      cronExpression: "0 0 1 1 *",
      command: "echo unused",
      script: "echo host-started; sleep 30",
      shellType: "bash",
    });
    const row = await platform.ctx.db
      .selectFrom("schedules")
      .selectAll()
      .where("scheduleId", "=", schedule.scheduleId)
      .executeTakeFirstOrThrow();
    const { deploymentId } = await startScheduleRun(platform.ctx, row);
    const deadline = Date.now() + 30_000;
    while (!(await logsOf(deploymentId)).logs.includes("host-started") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const member = await platform.addMember(owner, "member");
    const stranger = await createUserDirectly(platform, { email: `stranger-${Date.now()}@example.com` });
    for (const session of [member, stranger]) {
      for (const name of ["deployment.killProcess", "deployment.removeDeployment"]) {
        expect((await platform.mutate(name, { deploymentId }, { token: session.token })).status, name).toBe(
          404,
        );
      }
      const log = await platform.request(`/api/deployment.logs?deploymentId=${deploymentId}`, {
        token: session.token,
      });
      expect(log.status).toBe(404);
    }
    expect((await logsOf(deploymentId)).status).toBe("running");
    const killed = await ok("deployment.killProcess", { deploymentId });
    expect(killed.success).toBe(true);
    const ended = await platform.waitForDeployment(deploymentId, 30_000);
    expect(ended.status).toBe("error");
    expect(ended.errorMessage).toMatch(/Killed/);
    const log = await platform.request(`/api/deployment.logs?deploymentId=${deploymentId}`, as());
    expect(log.status).toBe(200);
    expect(String(log.body)).toContain("host-started");
    expect(String(log.body)).toContain("event: end");
  }, 60_000);
});
