/** The agent's running jobs (deploy/jobs.ts): cancels before and after a job's point of no return. */
import { describe, expect, it } from "vitest";
import { JobRegistry } from "./jobs.ts";

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
});
