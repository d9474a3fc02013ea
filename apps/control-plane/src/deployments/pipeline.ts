/**
 * One run of a deployment as the worker hands it to its target's runner (targets.ts), and what a
 * runner answers. Each feature's runner builds on these (the application pipeline is
 * applications/pipeline.ts); deployments/ runs them all the same way.
 */
import type { DeploymentTargetRef } from "./repository.ts";
import type { DeploymentKind } from "./start.ts";
import type { DeploymentSlot } from "./worker.ts";

export interface DeploymentRun {
  deploymentId: string;
  /** The service deployed: its kind and id (targets.ts). */
  target: DeploymentTargetRef;
  kind: DeploymentKind;
  archive?: { path: string; format: "zip" | "tar.gz" };
  /** Appends one line to the deployment's log (D1 timestamps, stores and streams it). */
  log(line: string): void;
  /** Aborted by cancelDeployment / killBuild / deployment.killProcess. */
  signal: AbortSignal;
  /**
   * The deployment's global slot (DEPLOYMENT_CONCURRENCY): given back while it only waits for an
   * unreachable agent (a stuck deployment does not block the others), taken back before it goes
   * on once the agent answers (the limit holds).
   */
  slot?: DeploymentSlot;
}

export interface DeploymentOutcome {
  imageName: string;
  commitHash?: string;
  commitMessage?: string;
}
