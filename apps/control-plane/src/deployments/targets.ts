/**
 * The service a deployment belongs to, as the worker and recovery see it, named by its kind and
 * id (DeploymentTargetRef). The worker claims, logs, stores and settles every deployment the same
 * way, and recovery settles every deployment a stopped control plane left running the same way;
 * what differs per kind of service (where its status lives, how it is deployed, how a deployment
 * left running is settled, what its appDeploy events name) each feature registers from the
 * composition root (features.ts): registerTargetKind for its targets, registerRunKind for runs
 * that are not plain deployments.
 */
import type { ResourceOwner } from "@platform/agent-protocol";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import type { ApplicationStatus, Deployment, DeploymentTargetKind } from "../db/schema.ts";
import { recordEvent } from "./events.ts";
import type { DeploymentOutcome, DeploymentRun } from "./pipeline.ts";
import type { DeploymentResult, DeploymentTargetRef } from "./repository.ts";

export type DeploymentRunner = (ctx: ServiceContext, run: DeploymentRun) => Promise<DeploymentOutcome>;

export interface DeploymentTarget {
  kind: DeploymentTargetKind;
  /** The service's id (the queue's key, DeploymentTargetRef.id). */
  serviceId: string;
  name: string;
  organizationId: string;
  /** Its status before the deployment: put back when the deployment is cancelled. */
  status: ApplicationStatus;
  /** Stores the service's status (idle | running | done | error), in `db` (the worker's transaction). */
  setStatus(db: Db, status: ApplicationStatus): Promise<void>;
  /** Runs the deployment (an application's: its build pipeline, applications/pipeline.ts). */
  run: DeploymentRunner;
  /** A database service's or stack's event names it in its payload (its applicationId is null). */
  eventService?: Record<string, string>;
  /**
   * How a deployment a stopped control plane left running is settled (recovery.ts): followed
   * on its Swarm service until the service shows its outcome (a job no agent works on and no
   * service runs is run again), or run again from the start (its steps are idempotent).
   */
  recovery: { follow: { serverId: string; name: string; owner: ResourceOwner } } | "runAgain";
  /**
   * Records a finished deployment's mark in `db` instead of the service's status and appDeploy
   * event (backup runs: a databaseBackup event, backups/runs.ts).
   */
  settle?(
    db: Db,
    deployment: { deploymentId: string; title: string },
    result: DeploymentResult,
    now: Date,
  ): Promise<void>;
}

export type DeploymentTargetLoader = (
  ctx: ServiceContext,
  id: string,
) => Promise<DeploymentTarget | undefined>;

/**
 * A kind of run of a target that is not its plain deployment (a backup run of a database, a
 * volume backup of any service, a rollback): the target as the worker runs it.
 */
export interface DeploymentRunKind {
  /** The target kind it applies to; every kind when absent. */
  targetKind?: DeploymentTargetKind;
  matches(kind: DeploymentKind): boolean;
  adapt(target: DeploymentTarget, kind: DeploymentKind): DeploymentTarget;
}

type DeploymentKind = Deployment["kind"];

// Filled by each feature from the composition root (features.ts): deployments/ imports none.
const targetLoaders = new Map<DeploymentTargetKind, DeploymentTargetLoader>();
const runKinds: DeploymentRunKind[] = [];

/** Registers the loader of a target kind's targets (one per kind). */
export function registerTargetKind(kind: DeploymentTargetKind, loader: DeploymentTargetLoader): void {
  if (targetLoaders.has(kind)) throw new Error(`the deployment target kind ${kind} is registered twice`);
  targetLoaders.set(kind, loader);
}

/** Registers a kind of run; the first one that matches a deployment's target and kind applies. */
export function registerRunKind(runKind: DeploymentRunKind): void {
  runKinds.push(runKind);
}

/** The service of a deployment; undefined when it was deleted meanwhile. */
export async function loadDeploymentTarget(
  ctx: ServiceContext,
  deployment: { targetKind: DeploymentTargetKind; targetId: string; kind?: DeploymentKind },
): Promise<DeploymentTarget | undefined> {
  const loader = targetLoaders.get(deployment.targetKind);
  if (!loader)
    throw new Error(`no loader is registered for deployment targets of kind ${deployment.targetKind}`);
  const target = await loader(ctx, deployment.targetId);
  const kind = deployment.kind;
  if (!target || kind === undefined) return target;
  const runKind = runKinds.find(
    (candidate) =>
      (candidate.targetKind === undefined || candidate.targetKind === deployment.targetKind) &&
      candidate.matches(kind),
  );
  return runKind ? runKind.adapt(target, kind) : target;
}

/** The reference of a deployment's target, as runs carry it. */
export const targetRefOf = (deployment: {
  targetKind: DeploymentTargetKind;
  targetId: string;
}): DeploymentTargetRef => ({ kind: deployment.targetKind, id: deployment.targetId });

/**
 * A finished deployment's mark on its service: the service's status and an appDeploy |
 * appBuildError event. Written in the transaction (`db`) that stores the deployment's outcome,
 * so neither is seen, or lost, without the other.
 */
export async function settleTarget(
  db: Db,
  target: DeploymentTarget,
  deployment: { deploymentId: string; title: string },
  result: DeploymentResult,
  now: Date,
): Promise<void> {
  if (target.settle) return target.settle(db, deployment, result, now);
  const title = deployment.title;
  await target.setStatus(db, result.status);
  await recordEvent(
    db,
    {
      organizationId: target.organizationId,
      kind: result.status === "done" ? "appDeploy" : "appBuildError",
      applicationId: target.eventService ? null : target.serviceId,
      payload: {
        ...target.eventService,
        applicationName: target.name,
        status: result.status === "done" ? "success" : "error",
        message: result.status === "done" ? `${title}: deployed` : `${title}: ${result.errorMessage}`,
      },
    },
    now,
  );
}
