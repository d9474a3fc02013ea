/**
 * followRunJob (backups/run-steps.ts) when its run is stopped, the agent stood in for by spies on
 * the agent client (no agent runs: the job's reply is a promise the test settles): a job the
 * agent says runs past its point of no return is followed to its end and its outcome is the
 * run's; a job the agent stopped, or any job of a run that does not allow it, ends the run at
 * once.
 */
import type { CancelJobResult } from "@platform/agent-protocol";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { DeploymentRun } from "../deployments/pipeline.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { followRunJob } from "./run-steps.ts";

let platform: TestPlatform;
let runs = 0;

beforeAll(async () => {
  platform = await startTestPlatform({}, { agents: { localAgent: false } });
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A run of its own, its job's reply settled by `finish`, cancelled with "Cancelled by the user". */
function startFollowing(answer: CancelJobResult, options: { resend?: boolean; mayRunOn?: boolean }) {
  const cancelJob = vi.spyOn(platform.ctx.agents.client, "cancelJob").mockResolvedValue(answer);
  const controller = new AbortController();
  const lines: string[] = [];
  const run = {
    deploymentId: `follow-${++runs}`,
    target: { kind: "application", id: "app-1" },
    kind: "volumeRestore",
    log: () => {},
    signal: controller.signal,
  } as unknown as DeploymentRun;
  let finish: (value: string) => void = () => {};
  const following = followRunJob(
    { ctx: platform.ctx, run, serverId: "server-follow", log: (line) => lines.push(line) },
    "volume",
    () => new Promise<string>((resolve) => (finish = resolve)),
    options,
  );
  following.catch(() => {});
  controller.abort(new Error("Cancelled by the user"));
  return {
    following,
    finish: (value: string) => finish(value),
    lines,
    cancelJob,
    jobId: `${run.deploymentId}-volume`,
  };
}

describe("followRunJob, its run stopped", () => {
  it("follows a job that runs past its point of no return to its end: the run has its outcome", async () => {
    const run = startFollowing(
      { cancelled: false, runsOn: true, ended: false },
      { resend: true, mayRunOn: true },
    );
    await vi.waitFor(() => expect(run.lines.join("\n")).toMatch(/past the point where it can be stopped/));
    run.finish("written");
    await expect(run.following).resolves.toBe("written");
    expect(run.cancelJob).toHaveBeenCalledWith("server-follow", run.jobId, 2000);
  });

  it("ends the run when the agent stopped the job", async () => {
    const run = startFollowing(
      { cancelled: true, runsOn: false, ended: false },
      { resend: true, mayRunOn: true },
    );
    await expect(run.following).rejects.toThrow(/Cancelled by the user/);
    expect(run.cancelJob).toHaveBeenCalledOnce();
  });

  it("ends the run at once when it does not allow a job to run on, whatever the agent answers", async () => {
    const run = startFollowing({ cancelled: false, runsOn: true, ended: false }, {});
    await expect(run.following).rejects.toThrow(/Cancelled by the user/);
    expect(run.lines.join("\n")).not.toMatch(/past the point/);
  });
});
