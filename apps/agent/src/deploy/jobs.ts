/**
 * The running commands of jobs (builds, deploys), so that cancelJob can stop them: each gets an
 * AbortSignal that child processes and waits listen to.
 */
import { CommandError } from "../command-error.ts";

export class JobRegistry {
  private readonly running = new Map<string, AbortController>();

  /** Runs `work` registered under jobId; a cancelled job answers CommandError("CANCELLED"). */
  async run<T>(jobId: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (!jobId) throw new CommandError("INVALID_ARGUMENT", "jobId is required");
    if (this.running.has(jobId)) {
      throw new CommandError("INVALID_ARGUMENT", `job ${jobId} is already running on this server`);
    }
    const controller = new AbortController();
    this.running.set(jobId, controller);
    try {
      const result = await work(controller.signal);
      if (controller.signal.aborted) throw cancelled();
      return result;
    } catch (error) {
      if (controller.signal.aborted) throw cancelled();
      throw error;
    } finally {
      this.running.delete(jobId);
    }
  }

  /** True while a command of `jobId` runs on this agent. */
  has(jobId: string): boolean {
    return this.running.has(jobId);
  }

  cancel(jobId: string): boolean {
    const controller = this.running.get(jobId);
    if (!controller || controller.signal.aborted) return false;
    controller.abort();
    return true;
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
