/**
 * The deployment queue: one job per deployment, at most one running per application, at most
 * `concurrency` running in all. The deployment row is the job's state (idle = waiting); the
 * queue only decides when a job runs.
 *
 * With NATS_URL the jobs are JetStream messages on a work-queue stream, one subject and one
 * durable consumer per application with max_ack_pending 1: JetStream keeps them across
 * restarts, hands them out in order and never two of one application at once. A message is
 * acked when its job ended (or was dropped: its row is no longer idle). JetStream removes a
 * consumer unpulled for a day (a deleted or idle application); the next enqueue makes it again.
 * Without NATS_URL an in-process queue is rebuilt from the waiting rows at start.
 *
 * A deployment that was running when its control plane stopped (a crash) is settled at the
 * next start from what its agent and Docker observe (recovery.ts): done, error with the real
 * cause, or handed back to the queue when it never reached its service; the application's next
 * jobs wait for that. After a crash JetStream hands the job's message out again once its ack
 * wait (3 s; the running copy says `working` every second) ran out: it waits (a nak with a
 * delay) while the row is running, runs once it was handed back, and is skipped once it ended.
 * The queue alone does not keep two jobs of a service apart then (a late heartbeat, a copy that
 * died): the claim does (claimDeployment refuses a job of a service with a running deployment,
 * whichever copy runs it), and the refused job waits in the queue (a nak with a delay, still in
 * front of the service's next jobs; in memory, put back in front of them). A graceful stop
 * (close) lets running jobs finish for a grace time, then hands the rest back to the queue.
 */

import { hostname } from "node:os";
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { type NatsConnection, nanos } from "@nats-io/transport-node";
import { connectControlPlaneNats } from "../agents/agent-hub.ts";
import type { Config } from "../config.ts";
import type { ServiceContext } from "../context.ts";
import { DeploymentLeases, LEASE_MS } from "./leases.ts";
import { DeploymentRecovery, type QueuedJob } from "./recovery.ts";
import {
  applicationsWithWaitingDeployments,
  hasWaitingDeployments,
  orphanedWaitingDeployments,
  waitingDeployments,
} from "./repository.ts";
import { type DeploymentRunner, DeploymentSlot, DeploymentWorker } from "./worker.ts";

export type { QueuedJob };

export const DEFAULT_DEPLOYMENT_CONCURRENCY = 2;
/** How long a stopping control plane lets running deployments finish before handing them back. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 5000;

export interface DeploymentQueueOptions {
  /** Deployments running at once across all applications (default: config, else 2). */
  concurrency?: number;
  /** Runs every deployment in place of its target's own run (tests; default: the target's run). */
  runner?: DeploymentRunner;
  /** JetStream stream name (default PLATFORM_DEPLOYMENTS); tests give each file its own. */
  stream?: string;
  /** Subject prefix of the jobs (default platform.deployments). */
  subjectPrefix?: string;
  /** JetStream ack wait of a job: how soon a dead control plane's job is handed out again (default 3 s). */
  ackWaitMs?: number;
  /** How long an application's consumer may go unpulled before JetStream removes it (default 24 h). */
  consumerInactiveMs?: number;
  /** How long close() lets running deployments finish before handing them back (default 5 s). */
  shutdownGraceMs?: number;
  /**
   * This control plane's id for leases on running deployments (default PLATFORM_INSTANCE_ID,
   * else host name and port): the same id after a restart takes its deployments back at once.
   */
  instanceId?: string;
}

export interface DeploymentQueue {
  readonly worker: DeploymentWorker;
  /** Recovers what a previous run left (running ones settled from observation), then runs jobs. */
  start(ctx: ServiceContext): Promise<void>;
  enqueue(job: QueuedJob): Promise<void>;
  /**
   * Stops taking jobs, lets the running ones finish for the grace time, hands the rest back to
   * the queue (idle again, run at the next start) and waits for them.
   */
  close(): Promise<void>;
}

export function createDeploymentQueue(config: Config, options: DeploymentQueueOptions = {}): DeploymentQueue {
  const concurrency = options.concurrency ?? config.deploymentConcurrency ?? DEFAULT_DEPLOYMENT_CONCURRENCY;
  const worker = new DeploymentWorker(
    concurrency,
    options.runner,
    new DeploymentLeases(options.instanceId ?? config.instanceId ?? `${hostname()}:${config.port}`),
  );
  const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  return config.natsUrl
    ? new JetStreamDeploymentQueue(config, worker, options)
    : new EmbeddedDeploymentQueue(worker, graceMs);
}

/** Waits up to `graceMs` for the running jobs, then hands the rest back to the queue. */
async function stopWorker(
  worker: DeploymentWorker,
  active: Promise<unknown>[],
  graceMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
  });
  await Promise.race([Promise.all(active), grace]);
  clearTimeout(timer);
  await worker.handBackAll();
  await Promise.all(active);
  worker.leases.close();
}

/**
 * Runs a pass every LEASE_MS / 3 while the queue runs, one at a time: the takeover of what a dead
 * control plane left (DeploymentRecovery.sweep), so another copy finishes it within about the
 * lease time. A failed pass (database away) is logged and tried at the next tick.
 */
class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> = Promise.resolve();

  start(pass: () => Promise<void>, ctx: ServiceContext): void {
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.pass = pass()
        .catch((error) => ctx.logger.warn({ err: error }, "deployment takeover pass failed; retrying"))
        .finally(() => {
          busy = false;
        });
    }, LEASE_MS / 3);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.pass;
  }
}

/** How long a job that could not be claimed (database away) waits before it is tried again. */
const RETRY_DELAY_MS = 2_000;
/** How long a job whose service runs another deployment (on any copy) waits before it is tried again. */
export const BUSY_RETRY_MS = 1_000;

/** Without NATS: jobs in memory, rebuilt from the waiting rows at start. */
class EmbeddedDeploymentQueue implements DeploymentQueue {
  private ctx: ServiceContext | undefined;
  private readonly waiting: QueuedJob[] = [];
  private readonly busyApplications = new Set<string>();
  private readonly active = new Set<Promise<unknown>>();
  private closing = false;
  private recovery: DeploymentRecovery | undefined;
  private readonly sweeper = new Sweeper();

  constructor(
    readonly worker: DeploymentWorker,
    private readonly graceMs = DEFAULT_SHUTDOWN_GRACE_MS,
  ) {}

  async start(ctx: ServiceContext): Promise<void> {
    this.ctx = ctx;
    this.recovery = new DeploymentRecovery(
      ctx,
      this.worker.leases,
      (job) => this.enqueue(job),
      () => this.pump(),
    );
    await this.recovery.start();
    this.waiting.push(...(await waitingDeployments(ctx.db)));
    this.pump();
    this.sweeper.start(async () => {
      await this.recovery?.sweep();
      // Waiting ones a dead control plane had in its memory: queued here (the claim runs each once).
      const queued = new Set(this.waiting.map((job) => job.deploymentId));
      const since = new Date(ctx.now().getTime() - LEASE_MS);
      for (const job of await orphanedWaitingDeployments(ctx.db, since)) {
        if (!queued.has(job.deploymentId) && !this.busyApplications.has(job.applicationId))
          this.waiting.push(job);
      }
      this.pump();
    }, ctx);
  }

  async enqueue(job: QueuedJob): Promise<void> {
    if (this.closing) throw new Error("the deployment queue is closed");
    this.waiting.push(job);
    this.pump();
  }

  /**
   * Starts every waiting job whose application is free; each waits for a global slot (the
   * worker's Slots, in arrival order) before it runs.
   */
  private pump(): void {
    const ctx = this.ctx;
    if (!ctx || this.closing) return;
    for (;;) {
      const index = this.waiting.findIndex(
        (job) =>
          !this.busyApplications.has(job.applicationId) && !this.recovery?.isRecovering(job.applicationId),
      );
      if (index < 0) return;
      const [job] = this.waiting.splice(index, 1) as [QueuedJob];
      this.busyApplications.add(job.applicationId);
      const slot = new DeploymentSlot(this.worker.slots);
      const run = slot
        .take()
        .then(async () => {
          // A stop before the slot came: the row is still idle and is found at the next start.
          if (this.closing) return;
          const outcome = await this.worker.execute(ctx, job.deploymentId, slot);
          // Not claimed while the database was away: queued again, tried after a pause.
          if (outcome === "retry")
            setTimeout(() => this.enqueue(job).catch(() => {}), RETRY_DELAY_MS).unref();
          // Another copy runs a deployment of this service: tried again first, after a pause
          // during which this copy starts none of the service's other jobs.
          if (outcome === "busy") {
            slot.giveBack();
            await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
            if (!this.closing) this.waiting.unshift(job);
          }
        })
        .finally(() => {
          slot.giveBack();
          this.busyApplications.delete(job.applicationId);
          this.active.delete(run);
          this.pump();
        });
      this.active.add(run);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.sweeper.stop();
    await this.recovery?.close();
    await stopWorker(this.worker, [...this.active], this.graceMs);
  }
}

/**
 * Short, so that a dead copy's job is handed out again soon: the running copy says `working`
 * every third of it, and a late heartbeat only means a redelivery the claim refuses.
 */
const DEFAULT_ACK_WAIT_MS = 3_000;
const PULL_EXPIRES_MS = 1_000;
const DEFAULT_CONSUMER_INACTIVE_MS = 24 * 60 * 60_000;

/** With NATS: a JetStream work-queue stream, one durable consumer per application. */
class JetStreamDeploymentQueue implements DeploymentQueue {
  private ctx: ServiceContext | undefined;
  private connection: NatsConnection | undefined;
  private manager: JetStreamManager | undefined;
  private client: JetStreamClient | undefined;
  private readonly stream: string;
  private readonly subjectPrefix: string;
  private readonly ackWaitMs: number;
  private readonly consumerInactiveMs: number;
  private readonly graceMs: number;
  private recovery: DeploymentRecovery | undefined;
  private readonly sweeper = new Sweeper();
  /** Per application: its pull loop, and a counter bumped by every enqueue (see drain). */
  private readonly loops = new Map<string, { pokes: number; done: Promise<void> }>();
  private closing = false;
  /** The in-memory queue used when the NATS account has no JetStream. */
  private fallback: EmbeddedDeploymentQueue | undefined;

  constructor(
    private readonly config: Config,
    readonly worker: DeploymentWorker,
    options: DeploymentQueueOptions,
  ) {
    this.stream = options.stream ?? "PLATFORM_DEPLOYMENTS";
    this.subjectPrefix = options.subjectPrefix ?? "platform.deployments";
    this.ackWaitMs = options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    this.consumerInactiveMs = options.consumerInactiveMs ?? DEFAULT_CONSUMER_INACTIVE_MS;
    this.graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  }

  async start(ctx: ServiceContext): Promise<void> {
    this.ctx = ctx;
    this.connection = await connectControlPlaneNats(this.config, "platform-control-plane-deployments");
    try {
      try {
        this.manager = await jetstreamManager(this.connection);
      } catch (error) {
        if (!/jetstream is not enabled|no responders/i.test((error as Error).message)) throw error;
        ctx.logger.error(
          { err: error },
          "NATS has no JetStream for this account: deployments are queued in memory (waiting ones are recovered from the database at start); enable JetStream for a durable queue",
        );
        await this.connection.close();
        this.fallback = new EmbeddedDeploymentQueue(this.worker, this.graceMs);
        return this.fallback.start(ctx);
      }
      this.client = jetstream(this.connection);
      await this.ensureStream(this.manager);
      this.recovery = new DeploymentRecovery(ctx, this.worker.leases, (job) => this.enqueue(job));
      const recovering = await this.recovery.start();
      const waiting = await applicationsWithWaitingDeployments(ctx.db);
      for (const applicationId of new Set([...waiting, ...recovering])) {
        await this.ensureConsumer(applicationId);
        this.poke(applicationId);
      }
      this.sweeper.start(async () => {
        await this.recovery?.sweep();
        // Jobs whose pull loop ran on a control plane that died: pulled here from now on.
        for (const applicationId of await applicationsWithWaitingDeployments(ctx.db)) {
          if (this.loops.has(applicationId) || this.closing) continue;
          await this.ensureConsumer(applicationId);
          this.poke(applicationId);
        }
      }, ctx);
    } catch (error) {
      await this.connection.close();
      throw new Error(`The deployment queue could not start on NATS JetStream: ${(error as Error).message}`);
    }
  }

  private async ensureStream(manager: JetStreamManager): Promise<void> {
    try {
      await manager.streams.info(this.stream);
    } catch {
      await manager.streams.add({
        name: this.stream,
        subjects: [`${this.subjectPrefix}.>`],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
      });
    }
  }

  private subjectOf(applicationId: string): string {
    return `${this.subjectPrefix}.app.${applicationId}`;
  }

  private consumerOf(applicationId: string): string {
    return `app-${applicationId}`;
  }

  /**
   * Creates the application's consumer, or finds it. It is not cached: JetStream removes a
   * consumer nobody pulled for consumerInactiveMs (deleted or idle applications), and the next
   * enqueue must then make it again. A consumer made by an earlier version is used as it is,
   * but for its ack wait (10 s before 20261203), which is set to this one's.
   */
  private async ensureConsumer(applicationId: string): Promise<void> {
    if (!/^[A-Za-z0-9_-]+$/.test(applicationId)) throw new Error(`Bad application id ${applicationId}`);
    try {
      await this.manager!.consumers.add(this.stream, {
        durable_name: this.consumerOf(applicationId),
        filter_subject: this.subjectOf(applicationId),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        max_ack_pending: 1,
        ack_wait: nanos(this.ackWaitMs),
        inactive_threshold: nanos(this.consumerInactiveMs),
      });
    } catch (error) {
      const existing = await this.manager!.consumers.info(this.stream, this.consumerOf(applicationId)).catch(
        () => undefined,
      );
      if (!existing) throw error;
      if (existing.config.ack_wait !== nanos(this.ackWaitMs)) {
        await this.manager!.consumers.update(this.stream, this.consumerOf(applicationId), {
          ack_wait: nanos(this.ackWaitMs),
        });
      }
    }
  }

  async enqueue(job: QueuedJob): Promise<void> {
    if (this.fallback) return this.fallback.enqueue(job);
    if (this.closing || !this.client) throw new Error("the deployment queue is closed");
    await this.ensureConsumer(job.applicationId);
    await this.client.publish(this.subjectOf(job.applicationId), JSON.stringify(job), {
      msgID: job.deploymentId,
    });
    this.poke(job.applicationId);
  }

  /** Makes sure the application's pull loop runs and sees the job just published. */
  private poke(applicationId: string): void {
    const loop = this.loops.get(applicationId);
    if (loop) {
      loop.pokes++;
      return;
    }
    const state = { pokes: 0, done: Promise.resolve() };
    this.loops.set(applicationId, state);
    state.done = this.drain(applicationId, state);
  }

  /**
   * Pulls the application's jobs one at a time until its consumer is empty. A pull that comes
   * back empty ends the loop only if no enqueue happened meanwhile: the check and the removal
   * from `loops` happen in the same tick, so a later enqueue starts a new loop.
   */
  private async drain(applicationId: string, state: { pokes: number }): Promise<void> {
    const { logger } = this.ctx!;
    try {
      while (!this.closing) {
        const pokes = state.pokes;
        let message: JsMsg | null;
        try {
          const consumer = await this.client!.consumers.get(this.stream, this.consumerOf(applicationId));
          message = await consumer.next({ expires: PULL_EXPIRES_MS });
        } catch (error) {
          if (this.closing) return;
          logger.warn({ err: error, applicationId }, "deployment queue pull failed; retrying");
          await new Promise((resolve) => setTimeout(resolve, 1000));
          continue;
        }
        if (!message) {
          if (pokes !== state.pokes) continue;
          // A job still waiting with nothing delivered: the job before it is held by a control
          // plane that died, until its ack wait runs out. Keep pulling.
          // A database error counts as waiting: the loop must outlive a database outage.
          if (await hasWaitingDeployments(this.ctx!.db, applicationId).catch(() => true)) continue;
          if (pokes === state.pokes) return;
          continue;
        }
        await this.handle(message);
      }
    } finally {
      // Runs in the same tick as the return above: no enqueue can slip in between.
      this.loops.delete(applicationId);
    }
  }

  /**
   * Runs the job of one message and acks it once the job ended (a nak hands it back when the
   * control plane is stopping before it started). Never throws: an ack lost with the connection
   * only means a redelivery, which finds the row no longer idle and skips it.
   */
  private async handle(message: JsMsg): Promise<void> {
    const settle = (how: "ack" | "nak" | "nakLater" | "nakBusy" | "term" | "working") => {
      try {
        if (how === "nakLater") message.nak(RETRY_DELAY_MS);
        else if (how === "nakBusy") message.nak(BUSY_RETRY_MS);
        else message[how]();
      } catch (error) {
        this.ctx!.logger.warn({ err: error }, `deployment job message: ${how} failed`);
      }
    };
    // Tells JetStream the job is still held, well within its ack wait.
    const heartbeat = setInterval(() => settle("working"), this.ackWaitMs / 3);
    try {
      let job: QueuedJob;
      try {
        job = message.json<QueuedJob>();
      } catch {
        return settle("term");
      }
      // A deployment the last control plane left running is settled (or handed back) first.
      await this.recovery?.waitFor(job.applicationId);
      const slot = new DeploymentSlot(this.worker.slots);
      await slot.take();
      try {
        if (this.closing) return settle("nak");
        const outcome = await this.worker.execute(this.ctx!, job.deploymentId, slot);
        // Handed back by a stop: JetStream hands it out again at the next start.
        if (outcome === "handedBack") return settle("nak");
        // Not claimed while the database was away: delivered again once it may be back.
        if (outcome === "retry") return settle("nakLater");
        // Another deployment of the service runs (a dead copy's, until it is taken over): this
        // one is delivered again after a pause, still before the service's next jobs (the
        // consumer holds one unacked message at a time).
        if (outcome === "busy") return settle("nakBusy");
      } finally {
        slot.giveBack();
      }
      settle("ack");
    } finally {
      clearInterval(heartbeat);
    }
  }

  async close(): Promise<void> {
    if (this.fallback) return this.fallback.close();
    this.closing = true;
    await this.sweeper.stop();
    await this.recovery?.close();
    await stopWorker(
      this.worker,
      [...this.loops.values()].map((loop) => loop.done),
      this.graceMs,
    );
    await closeConnection(this.connection);
  }
}

/** How long a stop waits for a NATS connection to drain (NATS may be away) before it closes it. */
const DRAIN_WAIT_MS = 2000;

/** Drains a NATS connection, or closes it when the drain does not end in DRAIN_WAIT_MS. */
export async function closeConnection(connection: NatsConnection | undefined): Promise<void> {
  if (!connection || connection.isClosed()) return;
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    connection.drain().then(
      () => true,
      () => false,
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), DRAIN_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (!drained) await connection.close().catch(() => {});
}
