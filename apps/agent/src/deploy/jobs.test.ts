/**
 * The agent's running jobs (deploy/jobs.ts): cancels before and after a job's point of no return;
 * the outcome of an ended job kept for awaitJob, for a bounded time and count.
 */
import { describe, expect, it } from "vitest";
import { CommandError } from "../command-error.ts";
import { ENDED_JOB_KEEP_COUNT, ENDED_JOB_KEEP_MS, JobRegistry } from "./jobs.ts";

const keep = {
  outcome: (sizeBytes: number) => ({ backupDatabase: { sizeBytes, dumpBytes: 0 } }),
  mask: (m: string) => m.replaceAll("hunter2", "***"),
};

describe("JobRegistry", () => {
  it("cancels a job: its signal fires and it ends CANCELLED, even when its work returns", async () => {
    const jobs = new JobRegistry();
    let release = () => {};
    const running = jobs.run(
      "job-1",
      (signal) => new Promise<string>((resolve) => (release = () => resolve(String(signal.aborted)))),
    );
    expect(jobs.cancel("job-1")).toBe("cancelled");
    release();
    await expect(running).rejects.toMatchObject({ code: "CANCELLED" });
    expect(jobs.cancel("job-1")).toBe("absent");
  });

  it("runs a job past its point of no return on: the cancel answers so, the signal stays quiet and the outcome stands", async () => {
    const jobs = new JobRegistry();
    let release = () => {};
    let signalled = false;
    const running = jobs.run(
      "job-2",
      (signal, job) =>
        new Promise<string>((resolve) => {
          job.pastPointOfNoReturn();
          signal.addEventListener("abort", () => (signalled = true));
          release = () => resolve("written");
        }),
    );
    expect(jobs.cancel("job-2")).toBe("uncuttable");
    release();
    await expect(running).resolves.toBe("written");
    expect(signalled).toBe(false);
    expect(jobs.has("job-2")).toBe(false);
  });

  it("answers absent for a job it does not run", () => {
    expect(new JobRegistry().cancel("nope")).toBe("absent");
  });

  it("answers a running job as RUNNING after the wait, then its result once it ended", async () => {
    const jobs = new JobRegistry();
    let release = (_size: number) => {};
    const running = jobs.run("job-3", () => new Promise<number>((resolve) => (release = resolve)), keep);
    expect(await jobs.awaitOutcome("job-3", 10)).toEqual({ state: "RUNNING" });
    const waiting = jobs.awaitOutcome("job-3", 60_000);
    release(2048);
    await running;
    expect(await waiting).toEqual({ state: "ENDED", backupDatabase: { sizeBytes: 2048, dumpBytes: 0 } });
    // Asked again later (another control plane): the same answer.
    expect(await jobs.awaitOutcome("job-3", 0)).toMatchObject({ state: "ENDED" });
  });

  it("keeps a failed job's error, masked, and a cancelled one's as CANCELLED", async () => {
    const jobs = new JobRegistry();
    const failed = jobs.run(
      "job-4",
      async () => {
        throw new CommandError("FAILED", "upload with password hunter2 failed");
      },
      keep,
    );
    await expect(failed).rejects.toThrow();
    expect(await jobs.awaitOutcome("job-4", 0)).toEqual({
      state: "ENDED",
      error: { code: "FAILED", message: "upload with password *** failed" },
    });
    let release = () => {};
    const cancelledJob = jobs.run(
      "job-5",
      () => new Promise<number>((resolve) => (release = () => resolve(1))),
      keep,
    );
    jobs.cancel("job-5");
    release();
    await expect(cancelledJob).rejects.toMatchObject({ code: "CANCELLED" });
    expect(await jobs.awaitOutcome("job-5", 0)).toMatchObject({
      state: "ENDED",
      error: { code: "CANCELLED" },
    });
  });

  it("answers UNKNOWN for a job it never ran, one run without keeping, and one whose outcome expired", async () => {
    let now = 1_000_000;
    const jobs = new JobRegistry(() => now);
    expect(await jobs.awaitOutcome("never", 0)).toEqual({ state: "UNKNOWN" });
    await jobs.run("unkept", async () => 1);
    expect(await jobs.awaitOutcome("unkept", 0)).toEqual({ state: "UNKNOWN" });
    await jobs.run("old", async () => 1, keep);
    now += ENDED_JOB_KEEP_MS + 1;
    expect(await jobs.awaitOutcome("old", 0)).toEqual({ state: "UNKNOWN" });
  });

  it("keeps at most ENDED_JOB_KEEP_COUNT outcomes, dropping the oldest", async () => {
    const jobs = new JobRegistry();
    for (let index = 0; index <= ENDED_JOB_KEEP_COUNT; index++)
      await jobs.run(`job-${index}`, async () => index, keep);
    expect(await jobs.awaitOutcome("job-0", 0)).toEqual({ state: "UNKNOWN" });
    expect(await jobs.awaitOutcome("job-1", 0)).toMatchObject({ state: "ENDED" });
    expect(await jobs.awaitOutcome(`job-${ENDED_JOB_KEEP_COUNT}`, 0)).toMatchObject({ state: "ENDED" });
  });
});
