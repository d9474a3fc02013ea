/**
 * After a restart of the control plane: the deployments it left `running` are settled from
 * what the agent and Docker observe (observe.ts), never marked "interrupted" by guess. A
 * deployment whose service runs it is done; one whose update failed or rolled back is an error
 * with Swarm's cause; one still updating is followed until it settles; one that never reached
 * its service (and that no agent still works on) is handed back to the queue and runs again.
 * While the agent cannot be reached the deployment stays running (nothing is known): it is
 * settled from the first observation once the agent answers (followAgentJob, the same loop a
 * running deployment uses). The queue runs no other deployment of an application while its
 * recovery is under way (waitFor).
 */

import type { ServiceContext } from "../context.ts";
import { type DeploymentLeases, LEASE_MS } from "./leases.ts";
import { followAgentJob, JobNotFound } from "./observe.ts";
import {
  type DeploymentResult,
  moveDeployments,
  orphanedDeployments,
  runningDeployments,
} from "./repository.ts";
import { type DeploymentTarget, loadDeploymentTarget, settleTarget } from "./targets.ts";

export interface QueuedJob {
  deploymentId: string;
  /**
   * The service whose jobs run one at a time: an application id, or a database service id
   * (the field keeps its name: jobs already in JetStream carry it).
   */
  applicationId: string;
}

/** How often a followed deployment's row is read, to end the following once it was stopped. */
const STATUS_CHECK_MS = 2000;

type Running = Awaited<ReturnType<typeof runningDeployments>>[number];

/**
 * How a feature settles the runs of its own that a stopped control plane left running, instead
 * of following them on their service or running them again (backup runs, the control plane's own
 * backups, scheduled runs, volume backups): registered from the composition root (features.ts).
 */
export interface InterruptedRunHandler {
  matches(row: Running): boolean;
  /**
   * Settles the run; `runAgain` hands it back to the queue. It may wait long (an agent job the
   * dead copy started, followed to its end) while this control plane holds its lease; `stop`
   * fires when this control plane closes: the run is then left running (its lease released, the
   * next copy or start takes it over).
   */
  settle(
    ctx: ServiceContext,
    row: Running,
    runAgain: (row: Running) => Promise<void>,
    stop: AbortSignal,
  ): Promise<void>;
}

const interruptedRunHandlers: InterruptedRunHandler[] = [];

export function registerInterruptedRunHandler(handler: InterruptedRunHandler): void {
  interruptedRunHandlers.push(handler);
}

/** A running deployment recovery follows on its service, with its target. */
type Followed = Running & {
  target: DeploymentTarget;
  follow: Exclude<DeploymentTarget["recovery"], "runAgain">["follow"];
};

/** A running deployment recovery settles: followed on its service, or by its feature's handler. */
type Recovered = Followed | (Running & { settle: () => Promise<void> });

export class DeploymentRecovery {
  private readonly pending = new Map<string, Promise<void>>();
  private readonly controller = new AbortController();

  constructor(
    private readonly ctx: ServiceContext,
    /** This control plane's leases: only a deployment whose lease it takes is recovered here. */
    private readonly leases: DeploymentLeases,
    /** Puts a handed-back deployment in the queue again. */
    private readonly requeue: (job: QueuedJob) => Promise<void>,
    /** Called when an application's recovery ended. */
    private readonly onRecovered: (applicationId: string) => void = () => {},
  ) {}

  /**
   * Loads the running deployments (of every kind) and starts settling each as its target's kind
   * says (DeploymentTarget.recovery); answers the ids of the services being followed.
   */
  async start(): Promise<string[]> {
    return this.takeOver(await runningDeployments(this.ctx.db));
  }

  /**
   * Takes over what a control plane that died left running (its lease ran out: no renewal for
   * LEASE_MS) while this one runs: called every few seconds by the queue, so another copy
   * finishes a dead copy's deployment within about the lease time, not at its own next start.
   * Deployments this control plane runs or follows itself are left alone.
   */
  async sweep(): Promise<string[]> {
    const now = this.ctx.now();
    const rows = await orphanedDeployments(this.ctx.db, now, new Date(now.getTime() - LEASE_MS));
    return this.takeOver(
      rows.filter((row) => !this.leases.holds(row.deploymentId) && !this.pending.has(row.targetId)),
    );
  }

  private async takeOver(running: Running[]): Promise<string[]> {
    const { ctx } = this;
    const rows: Recovered[] = [];
    for (const row of running) {
      // Another live control plane runs or follows it: not ours to recover.
      if (!(await this.leases.take(ctx.db, row.deploymentId, ctx.now()))) continue;
      const handler = interruptedRunHandlers.find((candidate) => candidate.matches(row));
      if (handler) {
        // Settled like a followed deployment, in the background (a handler waiting for its agent
        // job must not hold the sweep back) and holding the target's other jobs back meanwhile.
        rows.push({
          ...row,
          settle: () => handler.settle(ctx, row, (again) => this.runAgain(again), this.controller.signal),
        });
        continue;
      }
      const target = await loadDeploymentTarget(ctx, row).catch(async (error) => {
        await this.leases.release(row.deploymentId);
        throw error;
      });
      if (target && target.recovery !== "runAgain") {
        rows.push({ ...row, target, follow: target.recovery.follow });
        continue;
      }
      try {
        if (target) await this.runAgain(row);
      } finally {
        await this.leases.release(row.deploymentId);
      }
    }
    if (rows.length > 0) {
      ctx.logger.info(
        { deploymentIds: rows.map((row) => row.deploymentId) },
        "recovering deployments a stopped control plane left running",
      );
    }
    for (const row of rows) {
      const before = this.pending.get(row.targetId) ?? Promise.resolve();
      const next = before
        .then(() => ("settle" in row ? row.settle() : this.recover(row)))
        .finally(() => this.leases.release(row.deploymentId))
        .catch((error) =>
          ctx.logger.error({ err: error, deploymentId: row.deploymentId }, "deployment recovery failed"),
        );
      this.pending.set(row.targetId, next);
      void next.then(() => {
        if (this.pending.get(row.targetId) === next) {
          this.pending.delete(row.targetId);
          this.onRecovered(row.targetId);
        }
      });
    }
    return [...this.pending.keys()];
  }

  /**
   * A deployment whose steps are idempotent (a database service's) runs again from the start:
   * the new run settles it from what Docker then does.
   */
  private async runAgain(row: Running): Promise<void> {
    const handedBack = await moveDeployments(
      this.ctx.db,
      { deploymentId: row.deploymentId },
      ["running"],
      "idle",
      { line: "The control plane restarted during this deployment: it runs again" },
      this.ctx.now(),
    );
    if (handedBack.length > 0)
      await this.requeue({ deploymentId: row.deploymentId, applicationId: row.targetId });
  }

  isRecovering(applicationId: string): boolean {
    return this.pending.has(applicationId);
  }

  /** Resolves once the application's recovery (if any) ended. */
  async waitFor(applicationId: string): Promise<void> {
    await this.pending.get(applicationId);
  }

  /** Stops following (the rows stay running: the next start recovers them). */
  async close(): Promise<void> {
    this.controller.abort();
    await Promise.all([...this.pending.values()]);
  }

  private async recover(row: Followed): Promise<void> {
    const { ctx } = this;
    // A stop of the deployment (deployment.killProcess marks it error) ends the following.
    const controller = new AbortController();
    const stop = () => controller.abort();
    this.controller.signal.addEventListener("abort", stop, { once: true });
    const check = setInterval(() => {
      ctx.db
        .selectFrom("deployments")
        .select("status")
        .where("deploymentId", "=", row.deploymentId)
        .executeTakeFirst()
        .then(
          (current) => current?.status !== "running" && stop(),
          () => {},
        );
    }, STATUS_CHECK_MS);
    try {
      await this.follow(row, controller.signal);
    } finally {
      clearInterval(check);
      this.controller.signal.removeEventListener("abort", stop);
    }
  }

  private async follow(row: Followed, signal: AbortSignal): Promise<void> {
    const { ctx } = this;
    let result: DeploymentResult;
    try {
      result = await followAgentJob(ctx, {
        serverId: row.follow.serverId,
        jobId: row.deploymentId,
        service: { name: row.follow.name, owner: row.follow.owner },
        fromObserved: (service): DeploymentResult => ({ status: "done", imageName: service.image || null }),
        log: () => {},
        signal,
      });
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof JobNotFound) {
        // Not on the service and no agent works on it: it never got that far. Run it again.
        const handedBack = await moveDeployments(
          ctx.db,
          { deploymentId: row.deploymentId },
          ["running"],
          "idle",
          { line: "The control plane restarted before this deployment reached its service: it runs again" },
          ctx.now(),
        );
        if (handedBack.length > 0)
          await this.requeue({ deploymentId: row.deploymentId, applicationId: row.targetId });
        return;
      }
      result = { status: "error", errorMessage: (error as Error).message };
    }
    await this.settle(row, result);
  }

  private async settle(row: Followed, result: DeploymentResult): Promise<void> {
    const { ctx } = this;
    const line =
      result.status === "done"
        ? "The service runs this deployment (observed after a restart of the control plane): Deployment done"
        : `Deployment failed: ${result.errorMessage}`;
    // Read again: the service may have been deleted (with its deployments) while it was followed.
    const target = await loadDeploymentTarget(ctx, row);
    // As the worker does: the outcome, the application's status and the event in one write.
    const settled = await ctx.db.transaction().execute(async (trx) => {
      const moved = await moveDeployments(
        trx,
        { deploymentId: row.deploymentId },
        ["running"],
        result,
        { line },
        ctx.now(),
      );
      if (moved.length > 0 && target) await settleTarget(trx, target, row, result, ctx.now());
      return moved.length > 0;
    });
    if (settled) {
      ctx.logger.info({ deploymentId: row.deploymentId, status: result.status }, "deployment recovered");
    }
  }
}
