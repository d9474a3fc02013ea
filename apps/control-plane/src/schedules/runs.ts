/**
 * Runs of scheduled jobs as rows of the deployment queue: deployments of target kind `schedule`
 * (its id the schedule's, so a schedule's runs go one at a time and apart from its service's
 * deployments), kind `schedule`. The worker claims, leases, logs and settles them like every
 * deployment (deployments/worker.ts); what is theirs is here: the runner, which asks the agent
 * of the service's server to run the command in a container carrying the schedule's
 * organization's ownership labels (or, a server schedule, on the server itself), its output
 * forwarded into the deployment's log. A run whose control plane died is never run again (a
 * command is not known to be idempotent): another copy records its outcome from the agent
 * (takeOverScheduleRun), or fails it when the agent no longer knows it.
 */
import type { ResourceOwner } from "@platform/agent-protocol";
import { applicationOwner, composeOwner } from "@platform/ownership";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { awaitTakenOverJob } from "../backups/run-steps.ts";
import type { ServiceContext } from "../context.ts";
import type { Schedule } from "../db/schema.ts";
import { recordSkippedRun } from "../deployments/cron-table.ts";
import { forwardAgentLog } from "../deployments/log-forwarder.ts";
import { followAgentJob } from "../deployments/observe.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import {
  type DeploymentResult,
  insertDeployment,
  moveDeployments,
  type NewDeployment,
} from "../deployments/repository.ts";
import { enqueueOrFail } from "../deployments/start.ts";
import type { DeploymentTarget } from "../deployments/targets.ts";
import { notFound } from "../errors.ts";

/** A run may take this long on the agent. */
const RUN_TIMEOUT_MS = 6 * 60 * 60_000;

/** The server a schedule's run goes to: its service's, or its own (server schedules). */
async function serverOfSchedule(ctx: ServiceContext, schedule: Schedule): Promise<string | null> {
  if (schedule.scheduleType === "dokploy-server") return null;
  if (schedule.scheduleType === "server") return schedule.serverId;
  if (schedule.applicationId) {
    const row = await ctx.db
      .selectFrom("applications")
      .select("serverId")
      .where("applicationId", "=", schedule.applicationId)
      .executeTakeFirst();
    return row?.serverId ?? null;
  }
  const row = await ctx.db
    .selectFrom("compose")
    .select("serverId")
    .where("composeId", "=", schedule.composeId ?? "")
    .executeTakeFirst();
  return row?.serverId ?? null;
}

/** Queues a run of `schedule` (status idle = queued); answers at once. */
export async function startScheduleRun(
  ctx: ServiceContext,
  schedule: Schedule,
  title = "Manual run",
): Promise<{ deploymentId: string; logPath: string }> {
  const deployment = await insertDeployment(ctx.db, await scheduleRunValues(ctx, schedule, title));
  await enqueueOrFail(ctx, deployment.deploymentId, schedule.scheduleId);
  return {
    deploymentId: deployment.deploymentId,
    logPath: `/api/deployment.logs?deploymentId=${encodeURIComponent(deployment.deploymentId)}`,
  };
}

async function scheduleRunValues(
  ctx: ServiceContext,
  schedule: Schedule,
  title: string,
): Promise<NewDeployment> {
  return {
    target: { kind: "schedule", id: schedule.scheduleId },
    kind: "schedule",
    title: `${title}: ${schedule.name}`.slice(0, 200),
    description: null,
    serverId: await serverOfSchedule(ctx, schedule),
  };
}

/** Records runs of `schedule` due while no control plane ran: one run row, ended, saying so. */
export async function recordSkippedScheduleRun(
  ctx: ServiceContext,
  schedule: Schedule,
  reason: string,
): Promise<{ deploymentId: string }> {
  return recordSkippedRun(ctx, await scheduleRunValues(ctx, schedule, "Skipped run"), reason);
}

/** How long a manual run is waited for before its current status is answered. */
const MANUAL_WAIT_MS = 30_000;
const WAIT_POLL_MS = 250;

/** The run's status once it ended, or after 30 s (404 when its row went). */
export async function waitForScheduleRun(ctx: ServiceContext, deploymentId: string) {
  const until = Date.now() + MANUAL_WAIT_MS;
  for (;;) {
    const row = await ctx.db
      .selectFrom("deployments")
      .select(["status", "errorMessage"])
      .where("deploymentId", "=", deploymentId)
      .executeTakeFirst();
    if (!row) throw notFound("Deployment");
    if (row.status === "done" || row.status === "error" || Date.now() >= until) return row;
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}

/** The worker's view of a schedule (deployments/targets.ts): no status of its own, no event. */
export async function loadScheduleTarget(
  ctx: ServiceContext,
  scheduleId: string,
): Promise<DeploymentTarget | undefined> {
  const schedule = await ctx.db
    .selectFrom("schedules")
    .selectAll()
    .where("scheduleId", "=", scheduleId)
    .executeTakeFirst();
  if (!schedule) return undefined;
  return {
    kind: "schedule",
    serviceId: schedule.scheduleId,
    name: schedule.name,
    organizationId: schedule.organizationId,
    status: "idle",
    run: runScheduleRun,
    // Never reached: recovery settles a schedule's run first (takeOverScheduleRun).
    recovery: "runAgain",
    setStatus: async () => {},
    settle: async () => {},
  };
}

/** The container a service schedule runs in, as the agent selects it (by labels, owner's only). */
async function containerOf(
  ctx: ServiceContext,
  schedule: Schedule,
): Promise<{
  owner: ResourceOwner;
  swarmServiceName: string;
  composeProject: string;
  composeService: string;
}> {
  if (schedule.scheduleType === "application") {
    const app = await ctx.db
      .selectFrom("applications")
      .select("appName")
      .where("applicationId", "=", schedule.applicationId ?? "")
      .executeTakeFirst();
    if (!app) throw new Error("The application of the schedule no longer exists");
    return {
      owner: applicationOwner(schedule.organizationId, schedule.applicationId ?? ""),
      swarmServiceName: app.appName,
      composeProject: "",
      composeService: "",
    };
  }
  const stack = await ctx.db
    .selectFrom("compose")
    .select(["appName", "composeType"])
    .where("composeId", "=", schedule.composeId ?? "")
    .executeTakeFirst();
  if (!stack) throw new Error("The compose stack of the schedule no longer exists");
  const service = schedule.serviceName ?? "";
  const owner = composeOwner(schedule.organizationId, schedule.composeId ?? "");
  return stack.composeType === "stack"
    ? { owner, swarmServiceName: `${stack.appName}_${service}`, composeProject: "", composeService: "" }
    : { owner, swarmServiceName: "", composeProject: stack.appName, composeService: service };
}

/** Runs one schedule run; throws with the reason (already logged). */
export async function runScheduleRun(ctx: ServiceContext, run: DeploymentRun): Promise<DeploymentOutcome> {
  try {
    const schedule = await ctx.db
      .selectFrom("schedules")
      .selectAll()
      .where("scheduleId", "=", run.target.id)
      .executeTakeFirst();
    if (!schedule) throw new Error("The schedule no longer exists");
    const serverId = (await serverOfSchedule(ctx, schedule)) ?? LOCAL_SERVER_ID;
    const jobId = `${run.deploymentId}-schedule`;
    const timezone = schedule.timezone ?? "";
    let send: (jobId: string) => Promise<{ exitCode: number; containerId: string }>;
    if (schedule.scheduleType === "server" || schedule.scheduleType === "dokploy-server") {
      const script = schedule.script || schedule.command;
      run.log(`Running the ${schedule.shellType} script of schedule ${schedule.name} on server ${serverId}`);
      send = (id) =>
        ctx.agents.client.runHostScript(
          serverId,
          { jobId: id, logStreamId: id, shell: schedule.shellType, script, timezone },
          RUN_TIMEOUT_MS,
        );
    } else {
      const container = await containerOf(ctx, schedule);
      run.log(
        `Running the ${schedule.shellType} command of schedule ${schedule.name} in ${container.swarmServiceName || `${container.composeProject}/${container.composeService}`}`,
      );
      send = (id) =>
        ctx.agents.client.runSchedule(
          serverId,
          {
            jobId: id,
            logStreamId: id,
            ...container,
            shell: schedule.shellType,
            command: schedule.command,
            timezone,
          },
          RUN_TIMEOUT_MS,
        );
    }
    const cancel = () => {
      ctx.agents.client.cancelJob(serverId, jobId).catch(() => {});
    };
    run.signal.addEventListener("abort", cancel, { once: true });
    try {
      const result = await forwardAgentLog(ctx, serverId, jobId, run.log, () =>
        followAgentJob(ctx, {
          serverId,
          jobId,
          send: (attempt) =>
            attempt === 0
              ? send(jobId)
              : Promise.reject(
                  new Error(`The agent of server ${serverId} lost the job (it restarted?): not run again`),
                ),
          log: run.log,
          signal: run.signal,
          onWaiting: () => run.slot?.giveBack(),
          onResumed: async () => run.slot?.take(),
        }),
      );
      run.log(`Command executed successfully (exit code ${result.exitCode})`);
      return { imageName: "" };
    } finally {
      run.signal.removeEventListener("abort", cancel);
    }
  } catch (error) {
    const reason = reasonOf(error, run.signal);
    run.log(`Command failed: ${reason}`);
    throw new Error(reason);
  }
}

function reasonOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return (signal.reason as Error | undefined)?.message ?? "Cancelled";
  const agentMessage = (error as { agentMessage?: string })?.agentMessage;
  if (agentMessage) return agentMessage;
  return error instanceof Error ? error.message : String(error);
}

/**
 * A run a stopped control plane left running fails: its agent job is cancelled where it still
 * runs, and it is not run again (the next firing runs the command anew). A script on the server
 * is stopped by the cancel; a command in a container is not (Docker cannot kill an exec: the
 * cancel only stops following it), so its message says that it may still run and finish there,
 * whose outcome no one receives (issue 40 item 6c).
 */
export async function failInterruptedScheduleRun(
  ctx: ServiceContext,
  row: { deploymentId: string; serverId: string | null },
): Promise<void> {
  const schedule = await ctx.db
    .selectFrom("deployments")
    .innerJoin("schedules", "schedules.scheduleId", "deployments.scheduleId")
    .select("schedules.scheduleType")
    .where("deployments.deploymentId", "=", row.deploymentId)
    .executeTakeFirst();
  const inContainer = schedule !== undefined && !HOST_SCHEDULE_TYPES.includes(schedule.scheduleType);
  const answer = await ctx.agents.client
    .cancelJob(row.serverId ?? LOCAL_SERVER_ID, `${row.deploymentId}-schedule`, 2000)
    .catch(() => undefined);
  const reason = `Interrupted: the control plane stopped during this run; it is not run again. ${interruptedFate(answer, inContainer)}`;
  const result: DeploymentResult = { status: "error", errorMessage: reason };
  await moveDeployments(
    ctx.db,
    { deploymentId: row.deploymentId },
    ["running"],
    result,
    { line: reason },
    ctx.now(),
  );
}

/**
 * Finishes a run whose control plane died from its agent job (which goes on; the agent keeps
 * its outcome for a while, awaitJob): waited for to its end, and its exit code or failure
 * recorded as the dead copy would have (issue 40 item 6c). The output the command printed after
 * the copy died is not in the run's log (it went to the dead copy's log stream). A job the agent
 * does not know (it restarted, or does not answer) fails the run as before
 * (failInterruptedScheduleRun). `stop` (this control plane closing) leaves it running.
 */
export async function takeOverScheduleRun(
  ctx: ServiceContext,
  row: { deploymentId: string; serverId: string | null },
  stop: AbortSignal,
): Promise<void> {
  const serverId = row.serverId ?? LOCAL_SERVER_ID;
  const job = await awaitTakenOverJob(ctx, serverId, `${row.deploymentId}-schedule`, stop);
  if (job.state === "stopped") return;
  if (job.state === "unknown") return failInterruptedScheduleRun(ctx, row);
  const { outcome } = job;
  const taken = "The control plane running this command stopped; another one took the run over";
  const result: DeploymentResult =
    outcome.error || !outcome.scheduledCommand
      ? {
          status: "error",
          errorMessage: outcome.error?.message ?? "The agent's answer holds no command result",
        }
      : { status: "done", imageName: "" };
  const line =
    result.status === "done"
      ? `Command executed successfully (exit code ${outcome.scheduledCommand?.exitCode ?? 0})`
      : `Command failed: ${result.errorMessage}`;
  await moveDeployments(
    ctx.db,
    { deploymentId: row.deploymentId },
    ["running"],
    result,
    { line: `${taken}\n${ctx.now().toISOString()} ${line}` },
    ctx.now(),
  );
}

const HOST_SCHEDULE_TYPES: readonly string[] = ["server", "dokploy-server"];

/** What became of an interrupted run's command, from the agent's answer to its cancel. */
function interruptedFate(answer: { cancelled: boolean } | undefined, inContainer: boolean): string {
  if (!answer) {
    return "Its agent did not answer: the command may still be running, and its outcome is not recorded.";
  }
  if (!answer.cancelled)
    return "Its agent no longer ran the command: it had ended, with an outcome no one received.";
  return inContainer
    ? "The command was still running in its container, where it cannot be stopped (Docker cannot kill a command it runs in a container): it may finish there, and its outcome is not recorded."
    : "The script was still running on the server: it was stopped.";
}
