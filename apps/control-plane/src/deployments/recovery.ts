/**
 * After a restart of the control plane: the deployments it left `running` are settled from
 * what the agent and Docker observe (observe.ts), never marked "interrupted" by guess. A
 * deployment whose service runs it is done; one whose update failed or rolled back is an error
 * with Swarm's cause; one still updating is followed until it settles; one that never reached
 * its service (and that no agent still works on) is handed back to the queue and runs again.
 * When the agent cannot be reached for the watchdog's time, the deployment is an error saying
 * its outcome is unknown. The queue runs no other deployment of an application while its
 * recovery is under way (waitFor).
 */
import { AgentCommandError } from "@platform/agent-protocol";
import type { ServiceContext } from "../context.ts";
import { recordEvent } from "./events.ts";
import {
  describeService,
  judgeDeployment,
  OBSERVE_INTERVAL_MS,
  observeDeployment,
  watchdogMs,
} from "./observe.ts";
import {
  type DeploymentResult,
  requeueDeployment,
  runningDeployments,
  settleRunningDeployment,
} from "./repository.ts";
import { serverOf } from "./runtime.ts";

export interface QueuedJob {
  deploymentId: string;
  applicationId: string;
}

type Running = Awaited<ReturnType<typeof runningDeployments>>[number];

export class DeploymentRecovery {
  private readonly pending = new Map<string, Promise<void>>();
  private readonly controller = new AbortController();

  constructor(
    private readonly services: ServiceContext,
    /** Puts a handed-back deployment in the queue again. */
    private readonly requeue: (job: QueuedJob) => Promise<void>,
    /** Called when an application's recovery ended. */
    private readonly onRecovered: (applicationId: string) => void = () => {},
  ) {}

  /** Loads the running deployments and starts following each; answers their application ids. */
  async start(): Promise<string[]> {
    const rows = await runningDeployments(this.services.db);
    if (rows.length > 0) {
      this.services.logger.info(
        { deploymentIds: rows.map((row) => row.deploymentId) },
        "recovering deployments a stopped control plane left running",
      );
    }
    for (const row of rows) {
      const before = this.pending.get(row.applicationId) ?? Promise.resolve();
      const next = before
        .then(() => this.recover(row))
        .catch((error) =>
          this.services.logger.error(
            { err: error, deploymentId: row.deploymentId },
            "deployment recovery failed",
          ),
        );
      this.pending.set(row.applicationId, next);
      void next.then(() => {
        if (this.pending.get(row.applicationId) === next) {
          this.pending.delete(row.applicationId);
          this.onRecovered(row.applicationId);
        }
      });
    }
    return [...this.pending.keys()];
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

  private async recover(row: Running): Promise<void> {
    const { services } = this;
    const serverId = serverOf(row);
    const signal = this.controller.signal;
    const limitMs = watchdogMs(services);
    const started = Date.now();
    let lastLife = Date.now();
    let lastState = "";
    let absentRounds = 0;
    while (!signal.aborted) {
      let observed: Awaited<ReturnType<typeof observeDeployment>> | undefined;
      try {
        observed = await observeDeployment(services, serverId, row.appName, row.deploymentId);
      } catch (error) {
        if (error instanceof AgentCommandError && error.code === "UNIMPLEMENTED") {
          return this.settle(row, {
            status: "error",
            errorMessage: `The control plane restarted during this deployment and the agent of server ${serverId} is too old to tell its outcome; deploy again`,
          });
        }
        if (Date.now() - started > limitMs) {
          return this.settle(row, {
            status: "error",
            errorMessage: `The control plane restarted during this deployment and the agent of server ${serverId} did not answer for ${Math.round(limitMs / 1000)} s: its outcome is unknown; deploy again`,
          });
        }
      }
      if (observed) {
        const verdict = judgeDeployment(row.deploymentId, observed.service, observed.jobActive);
        if (verdict.kind === "done") {
          return this.settle(row, { status: "done", imageName: observed.service?.image || null });
        }
        if (verdict.kind === "failed")
          return this.settle(row, { status: "error", errorMessage: verdict.reason });
        if (verdict.kind === "pending") {
          absentRounds = 0;
          if (verdict.state !== lastState || observed.jobActive) {
            lastState = verdict.state;
            lastLife = Date.now();
          }
          if (Date.now() - lastLife > limitMs) {
            return this.settle(row, {
              status: "error",
              errorMessage: `No progress for ${Math.round(limitMs / 1000)} s: ${describeService(observed.service)}`,
            });
          }
        } else if (++absentRounds >= 2) {
          // Not on the service and no agent works on it: it never got that far. Run it again.
          const handedBack = await requeueDeployment(
            services.db,
            row.deploymentId,
            "The control plane restarted before this deployment reached its service: it runs again",
            services.now(),
          );
          if (handedBack)
            await this.requeue({ deploymentId: row.deploymentId, applicationId: row.applicationId });
          return;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, OBSERVE_INTERVAL_MS));
    }
  }

  private async settle(row: Running, result: DeploymentResult): Promise<void> {
    const { services } = this;
    const line =
      result.status === "done"
        ? "The service runs this deployment (observed after a restart of the control plane): Deployment done"
        : `Deployment failed: ${result.errorMessage}`;
    const settled = await settleRunningDeployment(
      services.db,
      row.deploymentId,
      result,
      line,
      services.now(),
    );
    if (!settled) return;
    services.logger.info({ deploymentId: row.deploymentId, status: result.status }, "deployment recovered");
    await settleApplication(services, row.applicationId, row.title, result);
  }
}

/** The application's status and the appDeploy | appBuildError event of a settled deployment. */
export async function settleApplication(
  services: ServiceContext,
  applicationId: string,
  title: string,
  result: DeploymentResult,
): Promise<void> {
  const application = await services.db
    .updateTable("applications")
    .set({ applicationStatus: result.status, applicationStatusMessage: null })
    .where("applicationId", "=", applicationId)
    .returning(["name", "environmentId"])
    .executeTakeFirst();
  if (!application) return;
  const project = await services.db
    .selectFrom("environments")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .select("projects.organizationId")
    .where("environments.environmentId", "=", application.environmentId)
    .executeTakeFirst();
  if (!project) return;
  await recordEvent(
    services.db,
    {
      organizationId: project.organizationId,
      kind: result.status === "done" ? "appDeploy" : "appBuildError",
      applicationId,
      payload: {
        applicationName: application.name,
        status: result.status === "done" ? "success" : "error",
        message: result.status === "done" ? `${title}: deployed` : `${title}: ${result.errorMessage}`,
      },
    },
    services.now(),
  ).catch((error) => services.logger.warn({ err: error, applicationId }, "deployment event not stored"));
}
