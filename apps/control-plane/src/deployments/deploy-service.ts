/**
 * The last step of every deployment, an application's (pipeline.ts) or a database service's
 * (databases/deploy.ts): create or update its Swarm service from its spec through the agent,
 * with the agent's log forwarded into the deployment's log and the job followed to its end
 * (observe.ts) when the agent's reply is lost or the agent is unreachable for a while; and the
 * masking of secrets both runs apply to their log lines.
 */
import { DEPLOYMENT_ID_LABEL, type DeployServiceCommand } from "@platform/agent-protocol";
import type { ServiceContext } from "../context.ts";
import { forwardAgentLog } from "./log-forwarder.ts";
import { followAgentJob } from "./observe.ts";
import type { DeploymentRun } from "./pipeline.ts";

export const DEPLOY_TIMEOUT_MS = 10 * 60_000;

/**
 * Deploys `command.spec` on `serverId` as the run's job and logs how many tasks run; throws the
 * agent's failure. The spec is labelled with the deployment id: how its outcome is observed
 * later (observe.ts).
 */
export async function deployServiceSpec(
  services: ServiceContext,
  run: DeploymentRun,
  serverId: string,
  command: Omit<DeployServiceCommand, "jobId" | "logStreamId">,
  log: (line: string) => void,
): Promise<void> {
  const spec = command.spec;
  spec.labels = { ...spec.labels, [DEPLOYMENT_ID_LABEL]: run.deploymentId };
  const logStreamId = `${run.deploymentId}-deploy`;
  const deployed = await forwardAgentLog(services, serverId, logStreamId, log, () =>
    followAgentJob(services, {
      serverId,
      jobId: run.deploymentId,
      service: command.owner ? { name: spec.name, owner: command.owner } : undefined,
      send: (attempt) =>
        services.agents.client.deployService(
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
