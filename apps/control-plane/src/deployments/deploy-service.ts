/**
 * What every deployment of every service kind shares (an application's,
 * applications/pipeline.ts; a database service's, databases/deploy.ts): the frame of its run (runDeploymentSteps: the agent's job
 * cancelled on abort, secrets masked in every log line, one reason for every failure, logged)
 * and its last step (deployServiceSpec: create or update a Swarm service from its spec through
 * the agent, labelled with the deployment, with the agent's log forwarded into the deployment's
 * log and the job followed to its end (observe.ts) when the agent's reply is lost or the agent is
 * unreachable for a while).
 */
import {
  AgentCommandError,
  AgentTimeoutError,
  AgentUnavailableError,
  DEPLOYMENT_ID_LABEL,
  type DeployServiceCommand,
  type Init,
  type ResourceOwner,
} from "@platform/agent-protocol";
import { InvalidNameError } from "@platform/names";
import { describeServer } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { EnvSyntaxError } from "../env-vars.ts";
import { forwardAgentLog } from "./log-forwarder.ts";
import { agentWaitMs, followAgentJob } from "./observe.ts";
import type { DeploymentOutcome, DeploymentRun } from "./pipeline.ts";
import type { ServiceSpecToSend } from "./service-spec.ts";

/** A failure whose message is already fit for the user and the log. */
export class DeploymentFailure extends Error {}

export const fail = (reason: string): never => {
  throw new DeploymentFailure(reason);
};

/** What a service kind's steps use of the run's frame (runDeploymentSteps). */
export interface DeploymentSteps {
  /** Appends a line to the deployment's log, every known secret masked. */
  log(line: string): void;
  /** Values never to appear in the log or the failure reason. */
  secrets: string[];
  /** The server the deployment runs on: its agent's job is cancelled on abort. */
  setServer(serverId: string): void;
  /** What the run does now, named in failures ("build", "deploy"). */
  setStage(stage: string): void;
  /** Throws "Deployment cancelled" once the run was aborted. */
  checkAborted(): void;
}

/**
 * Runs a deployment's steps in the frame every kind shares; throws an Error whose message is
 * the failure reason (already logged, secrets masked).
 */
export async function runDeploymentSteps(
  ctx: ServiceContext,
  run: DeploymentRun,
  steps: (frame: DeploymentSteps) => Promise<DeploymentOutcome>,
): Promise<DeploymentOutcome> {
  const client = ctx.agents.client;
  let serverId = LOCAL_SERVER_ID;
  let stage = "prepare the deployment";
  const secrets: string[] = [];
  const log = (line: string) => run.log(maskSecrets(line, secrets));
  const cancelOnAbort = () => {
    log("Cancelling…");
    client.cancelJob(serverId, run.deploymentId).catch((error: unknown) => {
      ctx.logger.warn({ err: error, deploymentId: run.deploymentId }, "cancelJob failed");
    });
  };
  run.signal.addEventListener("abort", cancelOnAbort, { once: true });
  const frame: DeploymentSteps = {
    log,
    secrets,
    setServer: (id) => {
      serverId = id;
    },
    setStage: (name) => {
      stage = name;
    },
    checkAborted: () => {
      if (run.signal.aborted) fail("Deployment cancelled");
    },
  };
  const startedAt = Date.now();
  let waitLogged = false;
  try {
    for (;;) {
      try {
        return await steps(frame);
      } catch (error) {
        // A deployment resumed right after a control plane restart can start before the agent is
        // back: its steps are run again (each is idempotent, as a takeover runs them again) for as
        // long as a job waits for its agent.
        const waitFor = agentWaitMs(ctx) - (Date.now() - startedAt);
        if (!(error instanceof AgentUnavailableError) || run.signal.aborted || waitFor <= 0) throw error;
        if (!waitLogged)
          log(`The agent of ${await describeServer(ctx, serverId)} is not connected: waiting for it`);
        waitLogged = true;
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000, waitFor)));
      }
    }
  } catch (error) {
    const server = await describeServer(ctx, serverId);
    const reason = maskSecrets(reasonOf(error, stage, server, run.signal), secrets);
    if (!(error instanceof DeploymentFailure) && !(error instanceof AgentCommandError)) {
      ctx.logger.warn({ deploymentId: run.deploymentId, reason }, "deployment failed");
    }
    log(`Error: ${reason}`);
    throw new Error(reason);
  } finally {
    run.signal.removeEventListener("abort", cancelOnAbort);
  }
}

const capitalized = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}`;

/** The reason of a failed step, fit for the deployment log. */
function reasonOf(error: unknown, stage: string, server: string, signal: AbortSignal): string {
  if (signal.aborted) return "Deployment cancelled";
  if (error instanceof DeploymentFailure) return error.message;
  if (error instanceof AgentCommandError) {
    if (error.code === "CANCELLED") return "Deployment cancelled";
    if (error.code === "UNIMPLEMENTED") return `The agent of ${server} cannot ${stage}: update the agent`;
    return `${capitalized(stage)} failed: ${error.agentMessage}`;
  }
  if (error instanceof AgentUnavailableError) return `The agent of ${server} is not connected`;
  if (error instanceof AgentTimeoutError) {
    return `${capitalized(stage)} did not finish within ${Math.round(error.timeoutMs / 60_000)} minutes`;
  }
  if (error instanceof InvalidNameError) return error.message;
  if (error instanceof EnvSyntaxError) return `Invalid variables: ${error.message}`;
  // Our own checks (applications/source.ts, service-spec.ts) throw plain Errors with user-facing
  // messages.
  return error instanceof Error ? error.message : String(error);
}

export const DEPLOY_TIMEOUT_MS = 10 * 60_000;

/**
 * Deploys `command.spec` on `serverId` as the run's job and logs how many tasks run; throws the
 * agent's failure. The spec is labelled with the deployment id: how its outcome is observed
 * later (observe.ts).
 */
export async function deployServiceSpec(
  ctx: ServiceContext,
  run: DeploymentRun,
  serverId: string,
  command: Omit<Init<DeployServiceCommand>, "jobId" | "logStreamId" | "owner"> & {
    spec: ServiceSpecToSend;
    owner?: ResourceOwner;
  },
  log: (line: string) => void,
): Promise<void> {
  const spec = command.spec;
  spec.labels = { ...spec.labels, [DEPLOYMENT_ID_LABEL]: run.deploymentId };
  const logStreamId = `${run.deploymentId}-deploy`;
  const deployed = await forwardAgentLog(ctx, serverId, logStreamId, log, () =>
    followAgentJob(ctx, {
      serverId,
      jobId: run.deploymentId,
      service: command.owner ? { name: spec.name, owner: command.owner } : undefined,
      send: (attempt) =>
        ctx.agents.client.deployService(
          serverId,
          {
            jobId: run.deploymentId,
            logStreamId: attempt === 0 ? logStreamId : `${logStreamId}-${attempt}`,
            ...command,
          },
          DEPLOY_TIMEOUT_MS,
        ),
      fromObserved: (service) => ({ serviceId: "", created: false, runningTasks: service.runningTasks }),
      log,
      signal: run.signal,
      onWaiting: () => run.slot?.giveBack(),
      onResumed: async () => run.slot?.take(),
    }),
  );
  log(`Service ${deployed.created ? "created" : "updated"}: ${deployed.runningTasks} task(s) running`);
}

/** Replaces every known secret value (of 4+ characters) in `text`. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let masked = text;
  for (const secret of secrets) {
    if (secret.length >= 4) masked = masked.replaceAll(secret, "********");
  }
  return masked;
}
