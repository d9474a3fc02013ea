/**
 * Runs one deployment job: claims the record (idle -> running), runs the pipeline of its
 * service (an application, or a database service: deployments/targets.ts) with a log and an
 * abort signal, and stores the outcome: deployment done | error, service done | error, and an
 * appDeploy | appBuildError event (a database service's names it in its payload). A deployment
 * stopped by killProcess, killBuild or cancelDeployment ends in error with the reason as its
 * errorMessage and puts the service back to the status it had before (the previous version
 * keeps serving); it emits no event. A deployment handed back by a stopping control plane
 * (handBackAll) is idle again, to run at the next start.
 */
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { DeploymentStatus } from "../db/schema.ts";
import { ApiError } from "../errors.ts";
import { buildServerOf, buildsConcurrencyOf, ServerBuildSlots } from "./build-slots.ts";
import { deploymentErrorMessage } from "./error-message.ts";
import { DeploymentLeases } from "./leases.ts";
import { DeploymentLogHub } from "./logs.ts";
import { claimDeployment, type DeploymentResult, failDeployments, moveDeployments } from "./repository.ts";
import { type DeploymentRunner, loadDeploymentTarget, settleTarget } from "./targets.ts";

export type { DeploymentRunner };

/** The abort reason of a deployment handed back to the queue by a stopping control plane. */
class HandBack extends Error {}

/** True when an abort reason is a stopping control plane's hand-back (not a user's stop). */
export function isHandBack(reason: unknown): boolean {
  return reason instanceof HandBack;
}

/** A counting semaphore: at most `size` holders at once, served in arrival order. */
export class Slots {
  private used = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly size: number) {}

  async acquire(): Promise<() => void> {
    if (this.used >= this.size) await new Promise<void>((resolve) => this.waiters.push(resolve));
    else this.used++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.used--;
    };
  }
}

/**
 * One deployment's hold on a global slot: given back while the deployment only waits for an
 * unreachable agent, taken back (waiting for a free one) before it goes on.
 */
export class DeploymentSlot {
  private release: (() => void) | undefined;
  private taking: Promise<void> | undefined;
  /** Set by giveBack while a take is pending: the slot it gets is given back at once. */
  private dropTaken = false;

  constructor(private readonly slots: Slots) {}

  /** Takes a slot unless one is held. */
  take(): Promise<void> {
    if (this.release) return Promise.resolve();
    this.dropTaken = false;
    this.taking ??= this.slots.acquire().then((release) => {
      this.taking = undefined;
      if (this.dropTaken) release();
      else this.release = release;
    });
    return this.taking;
  }

  giveBack(): void {
    if (this.taking) this.dropTaken = true;
    const release = this.release;
    this.release = undefined;
    release?.();
  }
}

/** How long a write the database refused (it is away) waits before it is tried again. */
const STORE_RETRY_MS = 1000;

interface RunningJob {
  controller: AbortController;
  finished: Promise<void>;
}

export class DeploymentWorker {
  readonly logs = new DeploymentLogHub();
  readonly slots: Slots;
  /** Build slots per server (build-slots.ts), beside the global ones. */
  readonly buildSlots = new ServerBuildSlots();
  private readonly running = new Map<string, RunningJob>();
  /** Aborted by handBackAll: writes waiting for the database give up (the next start recovers). */
  private readonly stopping = new AbortController();

  constructor(
    concurrency: number,
    /** A stand-in for every target's own run (tests); undefined: each target runs as its kind says. */
    private readonly runner?: DeploymentRunner,
    /** This control plane's leases on running deployments (several control planes, one database). */
    readonly leases = new DeploymentLeases(newId()),
  ) {
    this.slots = new Slots(concurrency);
  }

  /** Whether the deployment runs in this process. */
  isRunning(deploymentId: string): boolean {
    return this.running.has(deploymentId);
  }

  /**
   * Aborts a deployment running in this process; answers a promise settled once its end is
   * stored, or undefined when it does not run here.
   */
  abort(deploymentId: string, reason: string): Promise<void> | undefined {
    const job = this.running.get(deploymentId);
    if (!job) return undefined;
    job.controller.abort(new Error(reason));
    return job.finished;
  }

  /** Aborts every running deployment and waits until each has stored its end. */
  async abortAll(reason: string): Promise<void> {
    const jobs = [...this.running.values()];
    for (const job of jobs) job.controller.abort(new Error(reason));
    await Promise.all(jobs.map((job) => job.finished));
  }

  /** Hands every running deployment back to the queue (idle again) and waits until each is stored. */
  async handBackAll(): Promise<void> {
    this.stopping.abort();
    const jobs = [...this.running.values()];
    for (const job of jobs) {
      job.controller.abort(new HandBack("Handed back to the queue: the control plane is stopping"));
    }
    await Promise.all(jobs.map((job) => job.finished));
  }

  /**
   * Runs the deployment if it is still waiting; never throws (failures are stored and logged).
   * Answers "handedBack" when a stop handed it back to the queue, "retry" when the database
   * was away before the deployment could be claimed, and "busy" when another deployment of its
   * service was running (on any copy): the job must stay queued, not be dropped.
   */
  async execute(
    ctx: ServiceContext,
    deploymentId: string,
    slot?: DeploymentSlot,
  ): Promise<"ran" | "handedBack" | "retry" | "busy"> {
    let finish!: () => void;
    const job: RunningJob = {
      controller: new AbortController(),
      finished: new Promise((resolve) => {
        finish = resolve;
      }),
    };
    this.running.set(deploymentId, job);
    const claim = { done: false };
    let releaseBuildSlot: (() => void) | undefined;
    try {
      // A deployment that builds waits, still idle, for a build slot of its server; its global
      // slot is free for other servers' deployments meanwhile.
      const buildServer = await buildServerOf(ctx.db, deploymentId);
      if (buildServer) {
        try {
          releaseBuildSlot = await this.buildSlots.acquire(
            buildServer,
            // Dropped from the queue meanwhile: no slot is needed (the claim below finds it gone).
            async () =>
              (await buildServerOf(ctx.db, deploymentId)) ? buildsConcurrencyOf(ctx.db, buildServer) : null,
            this.stopping.signal,
            () => slot?.giveBack(),
          );
        } catch (error) {
          if (this.stopping.signal.aborted) return "handedBack";
          throw error;
        }
        await slot?.take();
        if (this.stopping.signal.aborted) return "handedBack";
      }
      return await this.run(ctx, deploymentId, job.controller, slot, claim);
    } catch (error) {
      if (!claim.done && error instanceof ApiError && error.code === "SERVICE_UNAVAILABLE") {
        ctx.logger.warn(
          { err: error, deploymentId },
          "deployment not claimed: the database is away; retrying",
        );
        return "retry";
      }
      ctx.logger.error({ err: error, deploymentId }, "deployment job failed to run");
      const reason = "Internal error: the deployment could not be run (see the control plane's log)";
      await failDeployments(ctx.db, { deploymentId }, ["running"], reason, ctx.now()).catch(() => {});
      this.logs.end(deploymentId, "error", reason);
      return "ran";
    } finally {
      releaseBuildSlot?.();
      if (claim.done) await this.leases.release(deploymentId);
      this.running.delete(deploymentId);
      finish();
    }
  }

  /**
   * Runs a write until the database takes it: a refusal because the database is away is tried
   * again every STORE_RETRY_MS, until a stop (the row stays running: the next start recovers it).
   */
  private async store<T>(ctx: ServiceContext, deploymentId: string, write: () => Promise<T>): Promise<T> {
    let warned = false;
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!databaseAway(error) || this.stopping.signal.aborted) throw error;
        if (!warned) {
          warned = true;
          ctx.logger.warn(
            { err: error, deploymentId },
            "deployment not stored: the database is away; retrying",
          );
        }
        await new Promise((resolve) => setTimeout(resolve, STORE_RETRY_MS));
      }
    }
  }

  private async run(
    ctx: ServiceContext,
    deploymentId: string,
    controller: AbortController,
    slot: DeploymentSlot | undefined,
    claim: { done: boolean },
  ): Promise<"ran" | "handedBack" | "busy"> {
    const { db, logger } = ctx;
    const deployment = await claimDeployment(db, deploymentId, ctx.now());
    if (deployment === "busy") return "busy";
    claim.done = true;
    if (!deployment) return "ran"; // dropped from the queue, or already run
    // From here on the row is running: a write the database refuses is tried again until it is
    // stored (a deployment must not stay running because the database was away for a while).
    const store = <T>(write: () => Promise<T>) => this.store(ctx, deploymentId, write);
    await store(() => this.leases.hold(db, deploymentId, ctx.now()));
    const target = await store(() => loadDeploymentTarget(ctx, deployment));
    if (!target) return "ran"; // deleted meanwhile: its deployments went with it
    const previousStatus = target.status;
    await store(() => target.setStatus(db, "running"));

    // A deployment run again (handed back) keeps its earlier lines.
    const log = this.logs.open(
      db,
      deploymentId,
      (error) => logger.warn({ err: error, deploymentId }, "deployment log not stored"),
      deployment.logs,
    );
    log.append(`Deployment ${deploymentId} started: ${deployment.title}`);
    let result: DeploymentResult;
    let cancelled = false;
    try {
      // A stop may come between the claim and here: a runner only listens for later aborts.
      controller.signal.throwIfAborted();
      const runner = this.runner ?? target.run;
      const outcome = await runner(ctx, {
        deploymentId,
        target: { kind: target.kind, id: target.serviceId },
        kind: deployment.kind,
        archive:
          deployment.archivePath && deployment.archiveFormat
            ? { path: deployment.archivePath, format: deployment.archiveFormat }
            : undefined,
        log: (line) => log.append(line),
        signal: controller.signal,
        slot,
      });
      result = {
        status: "done",
        imageName: outcome.imageName,
        commitHash: outcome.commitHash ?? null,
        commitMessage: outcome.commitMessage ?? null,
      };
      log.append("Deployment done");
    } catch (error) {
      cancelled = controller.signal.aborted;
      const message = cancelled
        ? (controller.signal.reason as Error).message
        : error instanceof Error
          ? error.message
          : String(error);
      result = { status: "error", errorMessage: deploymentErrorMessage(message) };
      if (cancelled && controller.signal.reason instanceof HandBack) {
        log.append(message);
        await log.close();
        await store(() =>
          db.transaction().execute(async (trx) => {
            await moveDeployments(
              trx,
              { deploymentId },
              ["running"],
              "idle",
              { logs: log.text() },
              ctx.now(),
            );
            await target.setStatus(trx, previousStatus);
          }),
        );
        return "handedBack";
      }
      log.append(cancelled ? message : `Deployment failed: ${message}`);
    }
    await log.close();
    // The deployment's outcome, the service's status and the event are one write: a reader never
    // sees a finished deployment beside a service still running, and a crash loses none of them.
    await store(() =>
      db.transaction().execute(async (trx) => {
        await moveDeployments(trx, { deploymentId }, ["running"], result, { logs: log.text() }, ctx.now());
        if (cancelled) await target.setStatus(trx, previousStatus);
        else await settleTarget(trx, target, deployment, result, ctx.now());
      }),
    );
    this.logs.end(deploymentId, result.status as DeploymentStatus, result.errorMessage ?? null);
    return "ran";
  }
}

function databaseAway(error: unknown): boolean {
  return error instanceof ApiError && error.code === "SERVICE_UNAVAILABLE";
}
