/**
 * Following a deployment by what the agent and Docker observe rather than by one reply. The
 * service spec carries the deployment id (DEPLOYMENT_ID_LABEL), and Swarm keeps the update's
 * outcome (UpdateStatus, PreviousSpec after a rollback): that is the durable record of whether
 * deployment X completed, failed or rolled back, whatever happened to the agent process, NATS
 * or the control plane meanwhile. judgeDeployment reads it; followAgentJob runs an agent
 * command while observing it, re-sends it when the agent lost it (restart), and settles it
 * from the observed state when the reply is lost or nothing moves for the watchdog's time.
 */
import {
  AgentCommandError,
  AgentTimeoutError,
  AgentUnavailableError,
  type ObservedService,
  type ObservedServices,
  type ResourceOwner,
} from "@platform/agent-protocol";
import { describeServer } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";

/** Default DEPLOYMENT_WATCHDOG_MS: no sign of life for this long settles a deployment. */
export const DEFAULT_DEPLOYMENT_WATCHDOG_MS = 180_000;
/** How often a running deployment's service is observed. */
export const OBSERVE_INTERVAL_MS = 1000;
// Short: an unanswered observation is only tried again (it settles nothing), and a request
// lost in a NATS outage should not hold the next one back.
const OBSERVE_TIMEOUT_MS = 2000;
/** How many times a command the agent lost is sent again before the deployment fails. */
const MAX_RESENDS = 3;

export type Verdict =
  | { kind: "done"; runningTasks: number }
  | { kind: "failed"; reason: string }
  /** Swarm or the agent is still working on it. */
  | { kind: "pending"; state: string }
  /** Neither the service nor the agent knows this deployment (not applied, or lost). */
  | { kind: "absent"; state: string };

/** Describes the service state for logs and messages. */
export function describeService(service: ObservedService | undefined): string {
  if (service?.ownerMismatch) return "a service of that name belongs to someone else";
  if (!service?.found) return "the service does not exist";
  const update = service.updateState ? `, update ${service.updateState.replace("_", " ")}` : "";
  return `${service.runningTasks}/${service.desiredReplicas} task(s) running${update}`;
}

/** What the observed service (and the agent's jobs) say about deployment `deploymentId`. */
export function judgeDeployment(
  deploymentId: string,
  service: ObservedService | undefined,
  jobActive: boolean,
): Verdict {
  const state = describeService(service);
  const cause = (fallback: string) => service?.taskError || service?.updateMessage || fallback;
  if (service?.ownerMismatch) {
    return {
      kind: "failed",
      reason: "A service of that name exists and does not belong to this application",
    };
  }
  if (service?.found && service.deploymentId === deploymentId) {
    const update = service.updateState;
    if (update === "paused" || update === "rollback_paused") {
      return { kind: "failed", reason: `The update of the service is paused: ${cause(update)}` };
    }
    if (update === "updating" || update === "rollback_started") return { kind: "pending", state };
    if (service.runningTasks >= service.desiredReplicas && service.outdatedTasks === 0)
      return { kind: "done", runningTasks: service.runningTasks };
    if (!jobActive && service.taskError) {
      return { kind: "failed", reason: `The new version did not start: ${service.taskError}` };
    }
    return { kind: "pending", state };
  }
  // After a rollback Swarm keeps no PreviousSpec: the failed tasks name the deployment.
  const rolledBackFrom =
    service?.previousDeploymentId === deploymentId || service?.taskErrorDeploymentId === deploymentId;
  if (service?.found && rolledBackFrom) {
    if (service.updateState === "rollback_started") return { kind: "pending", state };
    if (service.updateState === "rollback_completed" || service.updateState === "rollback_paused") {
      const restored =
        service.updateState === "rollback_completed"
          ? "the previous one was restored"
          : "the rollback did not complete";
      return {
        kind: "failed",
        reason: `The new version did not start, ${restored}: ${cause("the update failed")}`,
      };
    }
  }
  if (jobActive) return { kind: "pending", state };
  return { kind: "absent", state };
}

/** Observes one service and one job on a server. */
export async function observeDeployment(
  ctx: ServiceContext,
  serverId: string,
  service: { name: string; owner: ResourceOwner } | undefined,
  jobId: string,
): Promise<{ service: ObservedService | undefined; jobActive: boolean }> {
  const observed: ObservedServices = await ctx.agents.client.observeServices(
    serverId,
    {
      serviceNames: service ? [service.name] : [],
      jobIds: [jobId],
      owners: service ? { [service.name]: service.owner } : {},
    },
    OBSERVE_TIMEOUT_MS,
  );
  return { service: observed.services[0], jobActive: observed.activeJobs.includes(jobId) };
}

export function watchdogMs(ctx: ServiceContext): number {
  return ctx.config.deploymentWatchdogMs ?? DEFAULT_DEPLOYMENT_WATCHDOG_MS;
}

/** How long a deployment waits for an agent that is not connected when it starts (max 30 s). */
export function agentWaitMs(ctx: ServiceContext): number {
  return Math.min(30_000, watchdogMs(ctx));
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error) => ({ ok: false as const, error }),
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** `promise`, or undefined as soon as `signal` aborts (the promise is left to end by itself). */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<Settled<T> | undefined> {
  if (signal.aborted) {
    // Nobody waits for it: its failure must not become an unhandled rejection.
    promise.catch(() => {});
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    settle(promise).then((result) => {
      signal.removeEventListener("abort", onAbort);
      resolve(result);
    });
  });
}

/** A lost reply: the agent or NATS went away while the command ran (the work may go on). */
function replyLost(error: unknown): boolean {
  if (error instanceof AgentUnavailableError || error instanceof AgentTimeoutError) return true;
  // A second copy of a job the agent still runs (a re-send that crossed a late delivery).
  return (
    error instanceof AgentCommandError &&
    error.code === "INVALID_ARGUMENT" &&
    /already running/.test(error.agentMessage)
  );
}

/** Thrown when a job that is only observed (no send) is found nowhere: it never reached its agent. */
export class JobNotFound extends Error {}

export interface FollowOptions<T> {
  serverId: string;
  jobId: string;
  /** The service the job changes (deploys) and the owner it must carry; none for builds. */
  service?: { name: string; owner: ResourceOwner };
  /**
   * Sends the command; `attempt` is 0 for the first send. Without it the job is only observed
   * (recovery after a restart of the control plane), and a job found nowhere throws JobNotFound.
   */
  send?(attempt: number): Promise<T>;
  /** The result when the observed state shows the job done but its reply was lost. */
  fromObserved?(service: ObservedService): T;
  log(line: string): void;
  signal: AbortSignal;
  /** Called when the agent cannot be observed: the job only waits (it gives its slot back). */
  onWaiting?(): void;
  /** Called (and awaited) when the agent answers again after onWaiting (it takes a slot back). */
  onResumed?(): Promise<void>;
}

const cancelled = (signal: AbortSignal) => signal.reason ?? new Error("Deployment cancelled");

/**
 * Runs an agent job to its end: its reply when one comes, else what observation shows. Only an
 * observation (or the agent's own reply) settles it: while the agent cannot be reached the job
 * waits, without its slot, for as long as it takes (a cancel ends the wait), and is settled
 * from the first observation once the agent answers again. The watchdog fails a job only when
 * the agent answers and shows no progress for its time. Throws the agent's error, an Error
 * with the observed failure, or JobNotFound (observe-only jobs).
 */
export async function followAgentJob<T>(ctx: ServiceContext, options: FollowOptions<T>): Promise<T> {
  const { serverId, jobId, service, signal, log } = options;
  const limitMs = watchdogMs(ctx);
  let lastLife = Date.now();
  let lastState = "";
  let attempt = 0;
  let absentSince: number | undefined;
  let observable = true;
  let seenAgent = false;
  let waitLogged = false;
  let waiting = false;
  const startedAt = Date.now();
  const send = options.send;
  let reply: Promise<Settled<T>> | undefined = send ? settle(send(attempt)) : undefined;
  let lostError: unknown;
  const wait = () => {
    if (waiting) return;
    waiting = true;
    options.onWaiting?.();
  };
  for (;;) {
    const first = await Promise.race([
      reply ?? new Promise<never>(() => {}),
      sleep(OBSERVE_INTERVAL_MS, signal),
    ]);
    if (signal.aborted) throw cancelled(signal);
    if (first) {
      if (first.ok) return first.value;
      // Nobody served the server's subjects when it was sent: the agent never had it. Wait a
      // little for it (a restarting agent), then fail.
      if (send && first.error instanceof AgentUnavailableError && !seenAgent) {
        if (Date.now() - startedAt > agentWaitMs(ctx)) throw first.error;
        if (!waitLogged) {
          waitLogged = true;
          log(`The agent of ${await describeServer(ctx, serverId)} is not connected: waiting for it`);
        }
        wait();
        await sleep(OBSERVE_INTERVAL_MS, signal);
        if (signal.aborted) throw cancelled(signal);
        reply = settle(send(attempt));
        continue;
      }
      if (!replyLost(first.error) || !observable) throw first.error;
      lostError = first.error;
      reply = undefined;
    }
    const observation = await unlessAborted(observeDeployment(ctx, serverId, service, jobId), signal);
    if (!observation) throw cancelled(signal);
    if (!observation.ok) {
      const error = observation.error;
      if (error instanceof AgentCommandError && error.code === "UNIMPLEMENTED") {
        // An agent older than observation: only its reply can tell.
        observable = false;
        if (!reply) {
          throw (
            lostError ??
            new Error(
              `The agent of ${await describeServer(ctx, serverId)} is too old to tell this job's outcome`,
            )
          );
        }
        continue;
      }
      // Unreachable: nothing is known. Wait without a slot; the watchdog does not run.
      if (!waitLogged) {
        waitLogged = true;
        log(
          `The agent of ${await describeServer(ctx, serverId)} does not answer: waiting for it to tell the outcome`,
        );
      }
      wait();
      continue;
    }
    const observed = observation.value;
    if (waiting) {
      waiting = false;
      waitLogged = false;
      await options.onResumed?.();
      if (signal.aborted) throw cancelled(signal);
      // The wait does not count against the watchdog.
      lastLife = Date.now();
    }
    seenAgent = true;
    const verdict = service
      ? judgeDeployment(jobId, observed.service, observed.jobActive)
      : ({ kind: observed.jobActive ? "pending" : "absent", state: "" } as Verdict);
    if (verdict.kind === "done" && options.fromObserved && observed.service) {
      if (reply) log("The service runs the new version (observed)");
      else log("The agent's reply was lost; the service runs the new version (observed)");
      return options.fromObserved(observed.service);
    }
    if (verdict.kind === "failed") throw new Error(verdict.reason);
    if (verdict.kind === "pending" || verdict.kind === "done") {
      absentSince = undefined;
      if (verdict.kind === "pending" && verdict.state !== lastState) {
        lastState = verdict.state;
        lastLife = Date.now();
      }
      if (observed.jobActive) lastLife = Date.now();
      if (Date.now() - lastLife > limitMs) {
        throw new Error(
          `No progress for ${Math.round(limitMs / 1000)} s: ${describeService(observed.service)}${observed.service?.taskError ? ` (${observed.service.taskError})` : ""}`,
        );
      }
      continue;
    }
    // Absent: the agent does not run the job and the service does not show it. Give a reply in
    // flight one more round, then send the job again (a restarted agent lost it).
    absentSince ??= Date.now();
    if (reply && Date.now() - absentSince < 2 * OBSERVE_INTERVAL_MS) continue;
    if (!send) {
      if (Date.now() - absentSince < OBSERVE_INTERVAL_MS) continue;
      throw new JobNotFound(`No agent works on ${jobId} and its service does not show it`);
    }
    if (attempt >= MAX_RESENDS) {
      throw new Error(
        `The agent of ${await describeServer(ctx, serverId)} lost the job ${attempt + 1} times; deploy again`,
      );
    }
    attempt++;
    absentSince = undefined;
    lastLife = Date.now();
    log(
      `The agent of ${await describeServer(ctx, serverId)} has no trace of this job (restarted?): sending it again`,
    );
    reply = settle(send(attempt));
  }
}
