/**
 * The running commands of jobs (builds, deploys), so that cancelJob can stop them: each gets an
 * AbortSignal that child processes and waits listen to.
 */
import { CommandError } from "../command-error.ts";

/** What a job's work gets besides its signal. */
export interface RunningJob {
  /**
   * From now on the job cannot be stopped (a volume restore writing its archive: stopping it would
   * leave half of it): a cancel answers that it still runs, and its outcome stands.
   */
  pastPointOfNoReturn(): void;
}

interface JobEntry {
  controller: AbortController;
  uncuttable: boolean;
  /** Settles once the job's work has ended, whichever way. */
  ended: Promise<void>;
}

export class JobRegistry {
  private readonly running = new Map<string, JobEntry>();

  /** Runs `work` registered under jobId; a cancelled job answers CommandError("CANCELLED"). */
  async run<T>(jobId: string, work: (signal: AbortSignal, job: RunningJob) => Promise<T>): Promise<T> {
    if (!jobId) throw new CommandError("INVALID_ARGUMENT", "jobId is required");
    if (this.running.has(jobId)) {
      throw new CommandError("INVALID_ARGUMENT", `job ${jobId} is already running on this server`);
    }
    let markEnded = () => {};
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const entry: JobEntry = { controller: new AbortController(), uncuttable: false, ended };
    const { signal } = entry.controller;
    this.running.set(jobId, entry);
    try {
      const result = await work(signal, {
        pastPointOfNoReturn: () => {
          entry.uncuttable = true;
        },
      });
      if (signal.aborted) throw cancelled();
      return result;
    } catch (error) {
      if (signal.aborted) throw cancelled();
      throw error;
    } finally {
      this.running.delete(jobId);
      markEnded();
    }
  }

  /** True while a command of `jobId` runs on this agent. */
  has(jobId: string): boolean {
    return this.running.has(jobId);
  }

  /**
   * Stops the job: "cancelled" (it ends CANCELLED), "uncuttable" (it runs on past its point of no
   * return), or "absent" (no such job runs, or it was cancelled already).
   */
  cancel(jobId: string): "cancelled" | "uncuttable" | "absent" {
    const entry = this.running.get(jobId);
    if (!entry || entry.controller.signal.aborted) return "absent";
    if (entry.uncuttable) return "uncuttable";
    entry.controller.abort();
    return "cancelled";
  }

  /**
   * True once no command of `jobId` runs, waiting at most `ms` for it to end (a cancelled
   * upload settles its requests first: what it wrote no longer changes after).
   */
  async ended(jobId: string, ms: number): Promise<boolean> {
    const entry = this.running.get(jobId);
    if (!entry) return true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([entry.ended.then(() => true as const), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export function cancelled(): CommandError {
  return new CommandError("CANCELLED", "the job was cancelled");
}

/** Throws CANCELLED when the job's signal has fired. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw cancelled();
}

/** Waits `ms`, or less when the job is cancelled (then throws CANCELLED). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelled());
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
