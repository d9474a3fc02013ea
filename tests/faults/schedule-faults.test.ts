/**
 * A scheduled job under a control-plane crash, with the real processes of deploy-harness.ts (a
 * control plane, an enrolled agent, a private NATS with JetStream). A server schedule fires
 * every second; its first run writes a mark and sleeps, the later ones only tick. While the
 * first run is running the control plane is killed with SIGKILL and started again: the agent goes
 * on with that run's script, and the restarted control plane records its outcome once it ended
 * (done, its exit code, a log line saying it took the run over: issue 40 item 4); it is never run
 * again (one mark, no later run of it), and the schedule goes on firing (ticks, done runs).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireDocker } from "../../apps/agent/src/testing/docker.ts";
import { DeployFaultRig } from "./deploy-harness.ts";

type Run = { deploymentId: string; status: string; errorMessage: string | null; logs: string };

const rig = new DeployFaultRig();
let directory: string;

beforeAll(async () => {
  await requireDocker();
  directory = await mkdtemp(path.join(tmpdir(), "schedule-faults-"));
  await rig.start();
}, 180_000);

afterAll(async () => {
  await rig.close();
  if (directory) await rm(directory, { recursive: true, force: true });
}, 120_000);

/** Ran the first branch: its output line (the log shows the script first, which names it too). */
const ranFirstBranch = (run: Run) => run.logs.split("\n").some((line) => /(^|\s)started$/.test(line.trim()));

const linesOf = async (file: string) =>
  (await readFile(path.join(directory, file), "utf8").catch(() => "")).split("\n").filter(Boolean);

describe("a schedule's run and a control-plane kill -9", () => {
  it("records the interrupted run's outcome from the agent, never runs it again, and keeps firing", async () => {
    const first = path.join(directory, "first");
    const script = `if [ -e '${first}' ]; then echo tick >> '${directory}/ticks'; echo tick; else touch '${first}'; echo started >> '${directory}/starts'; echo started; sleep 20; fi`;
    const schedule = await rig.api.mutateOk("schedule.create", {
      name: "Every second",
      scheduleType: "server",
      serverId: rig.serverId,
      cronExpression: "* * * * * *",
      command: "echo unused",
      script,
      shellType: "sh",
    });
    const runs = (): Promise<Run[]> =>
      rig.api.queryOk("deployment.allByType", { id: schedule.scheduleId, type: "schedule" });
    let interrupted: Run | undefined;
    await rig.until("the first run running and marked", async () => {
      interrupted = (await runs()).find((run) => run.status === "running" && ranFirstBranch(run));
      return interrupted !== undefined;
    });
    await rig.controlPlane.stop("SIGKILL");
    await rig.controlPlane.start();

    await rig.until(
      "the interrupted run settled",
      async () =>
        (await runs()).find((run) => run.deploymentId === interrupted!.deploymentId)?.status !== "running",
      90_000,
    );
    await rig.until("the schedule firing again", async () => (await linesOf("ticks")).length >= 2, 90_000);
    const after = await runs();
    const again = after.find((run) => run.deploymentId === interrupted!.deploymentId);
    expect(again?.status, rig.processOutput()).toBe("done");
    expect(again?.errorMessage ?? null).toBeNull();
    expect(again?.logs).toMatch(/another one took the run over/);
    expect(again?.logs).toMatch(/Command executed successfully \(exit code 0\)/);
    expect(await linesOf("starts")).toEqual(["started"]);
    const later = after.filter((run) => run.deploymentId !== interrupted!.deploymentId);
    expect(later.some((run) => run.status === "done" && run.logs.includes("tick"))).toBe(true);
    expect(ranFirstBranch(again!)).toBe(true);
    expect(later.filter(ranFirstBranch)).toEqual([]);
  }, 240_000);
});
