/**
 * The running commands of jobs (builds, deploys), so that cancelJob can stop them: each gets an
 * AbortSignal that child processes and waits listen to. The outcome of an ended job is kept for
 * a while (awaitJob): a control plane that takes over a run whose control plane died (its reply
 * went nowhere) finishes it from what the job did instead of failing it.
 */
import type { AwaitJobResult } from "@platform/agent-protocol";
import { CommandError } from "../command-error.ts";

/** How long the outcome of an ended job is kept for awaitJob. */
export const ENDED_JOB_KEEP_MS = 60 * 60_000;
/** At most this many ended jobs' outcomes are kept (the oldest go first). */
export const ENDED_JOB_KEEP_COUNT = 500;
/** The longest an awaitJob answer waits for a running job. */
const AWAIT_MAX_MS = 60_000;

/** What awaitJob answers of an ended job besides its state: its result's member, or its error. */
export type JobOutcome = Omit<AwaitJobResult, "state">;

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
  /** Ended jobs' outcomes by job id, oldest first (a Map keeps insertion order). */
  private readonly endedJobs = new Map<string, { at: number; outcome: JobOutcome }>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Runs `work` registered under jobId; a cancelled job answers CommandError("CANCELLED"). With
   * `kept` (the member of awaitJob's answer its result fills, and the masking of its error's
   * message), its outcome is kept once it ended, whichever way, for awaitJob.
   */
  async run<T>(
    jobId: string,
    work: (signal: AbortSignal, job: RunningJob) => Promise<T>,
    kept?: { outcome: (result: T) => JobOutcome; mask: (message: string) => string },
  ): Promise<T> {
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
      if (kept) this.keep(jobId, kept.outcome(result));
      return result;
    } catch (error) {
      const failure = signal.aborted ? cancelled() : error;
      if (kept) {
        const { code, message } = errorOf(failure);
        this.keep(jobId, { error: { code, message: kept.mask(message) } });
      }
      throw failure;
    } finally {
      this.running.delete(jobId);
      markEnded();
    }
  }

  /**
   * The job's outcome once it ended, waiting at most `ms` (bounded) while it runs: RUNNING when
   * it still runs then, UNKNOWN when it neither runs nor ended within the kept time here.
   */
  async awaitOutcome(jobId: string, ms: number): Promise<AwaitJobResult> {
    if (this.running.has(jobId) && !(await this.ended(jobId, Math.min(ms, AWAIT_MAX_MS)))) {
      return { state: "RUNNING" };
    }
    this.expire();
    const kept = this.endedJobs.get(jobId);
    return kept ? { state: "ENDED", ...kept.outcome } : { state: "UNKNOWN" };
  }

  private keep(jobId: string, outcome: JobOutcome): void {
    this.endedJobs.delete(jobId);
    this.endedJobs.set(jobId, { at: this.now(), outcome });
    this.expire();
  }

  private expire(): void {
    const oldest = this.now() - ENDED_JOB_KEEP_MS;
    for (const [jobId, kept] of this.endedJobs) {
      if (kept.at >= oldest && this.endedJobs.size <= ENDED_JOB_KEEP_COUNT) break;
      this.endedJobs.delete(jobId);
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

/** The protocol error a job's failure is answered with (the agent's own CommandError, else INTERNAL). */
function errorOf(error: unknown): { code: CommandError["code"]; message: string } {
  if (error instanceof CommandError) return { code: error.code, message: error.message };
  return { code: "INTERNAL", message: (error as Error)?.message ?? String(error) };
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
