/**
 * The steps that runs of database backups (runs.ts), of the control plane's own backup
 * (web-server-runs.ts) and of volume backups (volume-backups/) share: the run's masked log and
 * failure, its agent job, the file a backup run uploads (recorded around the upload), the
 * backup's own files in its destination (unfinished uploads aborted, retention), and the end of
 * a run a stopped control plane left running.
 */

import {
  AgentCommandError,
  AgentUnavailableError,
  type AwaitJobResult,
  type ObjectStorage,
} from "@platform/agent-protocol";
import {
  abortStaleUploads,
  deleteObject,
  describeStorageError,
  listObjects,
  type StoredObject,
} from "@platform/object-storage";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import { recordSkippedRun } from "../deployments/cron-table.ts";
import { maskSecrets } from "../deployments/deploy-service.ts";
import { forwardAgentLog } from "../deployments/log-forwarder.ts";
import { followAgentJob, unlessAborted } from "../deployments/observe.ts";
import type { DeploymentRun } from "../deployments/pipeline.ts";
import {
  type DeploymentResult,
  insertDeployment,
  moveDeployments,
  type NewDeployment,
} from "../deployments/repository.ts";
import { enqueueOrFail } from "../deployments/start.ts";
import { type DeploymentTarget, settleTarget } from "../deployments/targets.ts";
import { isHandBack } from "../deployments/worker.ts";
import { findDestination, storageOf } from "./destinations.ts";

/** How long a cancelled run waits for the agent to say whether its job runs on. */
const CANCEL_ANSWER_MS = 2000;

/** Records a run, a deployment of its target, and queues it behind the target's other jobs. */
export async function queueRun(
  ctx: ServiceContext,
  run: NewDeployment,
  skipped?: string,
): Promise<{ deploymentId: string }> {
  // Ticks due while no control plane ran: the run's row, ended, says so (never run).
  if (skipped !== undefined) return recordSkippedRun(ctx, run, skipped);
  const deployment = await insertDeployment(ctx.db, run);
  await enqueueOrFail(ctx, deployment.deploymentId, run.target.id);
  return { deploymentId: deployment.deploymentId };
}

/** Why a run failed: its cancellation's reason, the agent's message, or the error's. */
export function reasonOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return (signal.reason as Error | undefined)?.message ?? "Cancelled";
  const agentMessage = (error as { agentMessage?: string })?.agentMessage;
  if (agentMessage) return agentMessage;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The run's log, masking `secrets` (pushed as the run learns them), and its failure: the reason,
 * masked, logged and answered as the error the run throws.
 */
export function runLog(run: DeploymentRun) {
  const secrets: string[] = [];
  const log = (line: string) => run.log(maskSecrets(line, secrets));
  const failure = (error: unknown): Error => {
    const reason = maskSecrets(reasonOf(error, run.signal), secrets);
    log(`Error: ${reason}`);
    return new Error(reason);
  };
  return { secrets, log, failure };
}

/**
 * Runs the agent job `<deploymentId>-<step>` of the run, its log forwarded, followed by
 * observation: a job the agent no longer knows (it restarted mid-job) fails the run rather than
 * running twice, since its upload was never completed; unless `resend` (a job that does the
 * same whenever it runs), which is sent again. A cancelled run cancels the job; with
 * `mayRunOn`, a job the agent says runs past its point of no return (a restore writing the
 * volume) is followed to its end, and its outcome is the run's (a control plane handing its runs
 * back as it stops does not wait: the job is sent again at its next start).
 */
export async function followRunJob<T>(
  context: {
    ctx: ServiceContext;
    run: DeploymentRun;
    serverId: string;
    log: (line: string) => void;
  },
  step: string,
  send: (jobId: string) => Promise<T>,
  options: { resend?: boolean; mayRunOn?: boolean } = {},
): Promise<T> {
  const { ctx, run, serverId, log } = context;
  const jobId = `${run.deploymentId}-${step}`;
  const following = new AbortController();
  const cancel = async () => {
    const answer = ctx.agents.client.cancelJob(serverId, jobId, CANCEL_ANSWER_MS).catch(() => undefined);
    // Only a run that allows it waits for the answer; the others stop following at once.
    if (options.mayRunOn && !isHandBack(run.signal.reason) && (await answer)?.runsOn) {
      log(`The ${step} job is past the point where it can be stopped: it runs on, and the run ends with it`);
      return;
    }
    following.abort(run.signal.reason);
  };
  if (run.signal.aborted) following.abort(run.signal.reason);
  else run.signal.addEventListener("abort", cancel, { once: true });
  try {
    return await forwardAgentLog(ctx, serverId, jobId, log, () =>
      followAgentJob(ctx, {
        serverId,
        jobId,
        send: (attempt) =>
          attempt === 0 || options.resend
            ? send(jobId)
            : Promise.reject(
                new Error(
                  `The agent of server ${serverId} lost the ${step} job (it restarted?): nothing was completed`,
                ),
              ),
        log,
        signal: following.signal,
        onWaiting: () => run.slot?.giveBack(),
        onResumed: async () => run.slot?.take(),
      }),
    );
  } finally {
    run.signal.removeEventListener("abort", cancel);
  }
}

/** Stores the run's file and its size (a finished backup's upload, or a restore's read). */
export async function recordFile(db: Db, deploymentId: string, key: string, size: number): Promise<void> {
  await db
    .updateTable("backupRuns")
    .set({ backupFile: key, backupSizeBytes: String(size) })
    .where("deploymentId", "=", deploymentId)
    .execute();
}

/** The run names no file. */
async function forgetFile(db: Db, deploymentId: string): Promise<void> {
  await db
    .updateTable("backupRuns")
    .set({ backupFile: null })
    .where("deploymentId", "=", deploymentId)
    .execute();
}

/**
 * Uploads a backup run's file `key` by `upload`, recording it: the key is stored before the
 * upload with no size, so a run the control plane leaves running is failed at its next start,
 * which deletes that key if the upload still completed (deleteUnconfirmedFile); a failed upload
 * (aborted or never completed) names no file; a finished one stores its size.
 */
export async function uploadRecorded<T extends { sizeBytes: number }>(
  db: Db,
  deploymentId: string,
  key: string,
  upload: () => Promise<T>,
): Promise<T> {
  await db
    .updateTable("backupRuns")
    .set({ backupFile: key, backupSizeBytes: null })
    .where("deploymentId", "=", deploymentId)
    .execute();
  let result: T;
  try {
    result = await upload();
  } catch (error) {
    await forgetFile(db, deploymentId);
    throw error;
  }
  await recordFile(db, deploymentId, key, result.sizeBytes);
  return result;
}

/** One backup's own files in its destination: the keys that start with `prefix` and end in `extension`. */
export interface OwnFiles {
  prefix: string;
  extension: string;
}

/** The backup's own files in `storage`, oldest first (their keys sort by time). */
export async function listOwnFiles(storage: ObjectStorage, files: OwnFiles): Promise<StoredObject[]> {
  const objects = await listObjects(storage, files.prefix).catch((error: unknown) => {
    throw new Error(`The destination could not be listed: ${describeStorageError(error)}`);
  });
  return objects
    .filter((object) => object.key.endsWith(files.extension))
    .sort((a, b) => a.key.localeCompare(b.key));
}

/**
 * Aborts the multipart uploads under the backup's own files that a killed run left (their parts
 * stay in the bucket until aborted). Runs of one backup run one at a time, so none of them is
 * live when a run starts.
 */
export async function abortLeftUploads(
  storage: ObjectStorage,
  files: OwnFiles,
  log: (line: string) => void,
): Promise<void> {
  try {
    const aborted = await abortStaleUploads(storage, files.prefix);
    for (const key of aborted) log(`Aborted the unfinished upload of ${key} an earlier run left`);
  } catch (error) {
    // Some S3-compatible stores do not list uploads: the backup itself does not depend on it.
    log(`Unfinished uploads could not be listed: ${describeStorageError(error)}`);
  }
}

/**
 * keepLatestCount: deletes the backup's own oldest files beyond the newest N, never `written`
 * (the file this run stored). It runs once the backup is stored, so it never fails the run: a
 * file it could not delete (or a listing that failed) is a warning in the run's log, and the
 * next run tries again.
 */
export async function applyRetention(
  storage: ObjectStorage,
  files: OwnFiles,
  keepLatestCount: number | null,
  written: string,
  log: (line: string) => void,
): Promise<void> {
  if (!keepLatestCount) return;
  let own: StoredObject[];
  try {
    own = await listOwnFiles(storage, files);
  } catch (error) {
    log(`Warning: retention deleted no file: ${(error as Error).message}`);
    return;
  }
  const excess = own
    .filter((file) => file.key !== written)
    .slice(0, Math.max(0, own.length - keepLatestCount));
  for (const file of excess) {
    try {
      await deleteObject(storage, file.key);
      log(`Retention: deleted ${file.key} (keeping the newest ${keepLatestCount})`);
    } catch (error) {
      log(`Warning: retention could not delete ${file.key}: ${describeStorageError(error)}`);
    }
  }
}

/**
 * The file an interrupted backup run was uploading (stored with no size): the upload may have
 * completed after the control plane stopped, but nothing confirmed it, so the object is deleted
 * (from `organizationId`'s destination of the run) and the run names no file.
 */
export async function deleteUnconfirmedFile(
  ctx: ServiceContext,
  deploymentId: string,
  organizationId: string | undefined,
): Promise<void> {
  const row = await ctx.db
    .selectFrom("backupRuns")
    .select(["backupFile", "backupSizeBytes", "backupDestinationId"])
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirst();
  if (!row?.backupFile || row.backupSizeBytes !== null) return;
  const destination =
    organizationId && row.backupDestinationId
      ? await findDestination(ctx.db, organizationId, row.backupDestinationId)
      : undefined;
  if (destination) {
    try {
      await deleteObject(await storageOf(ctx, destination), row.backupFile);
    } catch (error) {
      ctx.logger.warn(
        { err: error, deploymentId, key: row.backupFile },
        "the file of an interrupted backup run could not be deleted",
      );
    }
  }
  await forgetFile(ctx.db, deploymentId);
}

/** Fails a run a stopped control plane left running (never run again) and settles its target. */
export async function failInterrupted(
  ctx: ServiceContext,
  row: { deploymentId: string; title: string },
  target: DeploymentTarget | undefined,
): Promise<void> {
  const reason = "Interrupted: the control plane stopped during this run; nothing was completed";
  await settleTakenOver(ctx, row, target, { status: "error", errorMessage: reason }, [reason]);
}

/**
 * Ends a run another control plane took over: its outcome, the lines it logged, and its target
 * settled (the event and notification) in one write, as the worker does. Nothing changes when
 * the run is no longer running (stopped meanwhile).
 */
export async function settleTakenOver(
  ctx: ServiceContext,
  row: { deploymentId: string; title: string },
  target: DeploymentTarget | undefined,
  result: DeploymentResult,
  lines: string[],
): Promise<boolean> {
  const now = ctx.now();
  const line = lines.join(`\n${now.toISOString()} `);
  return ctx.db.transaction().execute(async (trx) => {
    const moved = await moveDeployments(
      trx,
      { deploymentId: row.deploymentId },
      ["running"],
      result,
      { line },
      now,
    );
    if (moved.length > 0 && target) await settleTarget(trx, target, row, result, now);
    return moved.length > 0;
  });
}

/** How long one awaitJob answer waits for a running job before it is asked again. */
const AWAIT_JOB_MS = 20_000;
/** How long an agent that does not answer is asked again before the run is given up on. */
const AWAIT_UNREACHABLE_MS = 60_000;
/** As long for an agent that is not connected at all (no responder: reconnecting, or gone). */
const AWAIT_UNCONNECTED_MS = 20_000;

/** What the agent says of a job a dead control plane started (awaitJob), followed to its end. */
export type TakenOverJob =
  | { state: "ended"; outcome: AwaitJobResult }
  /** The agent neither runs it nor kept its outcome (it restarted), or it does not answer. */
  | { state: "unknown"; why: string }
  /** This control plane is closing: the run is left running for the next one. */
  | { state: "stopped" };

/**
 * Waits for the agent job `jobId` that a control plane which died started (its reply went
 * nowhere; the agent goes on with it): asked again every AWAIT_JOB_MS while it runs, for as long
 * as it runs (the lease of the run is renewed meanwhile). An agent that does not answer for
 * AWAIT_UNREACHABLE_MS (AWAIT_UNCONNECTED_MS when it is not connected), or is too old to tell,
 * makes it unknown.
 */
export async function awaitTakenOverJob(
  ctx: ServiceContext,
  serverId: string,
  jobId: string,
  stop: AbortSignal,
): Promise<TakenOverJob> {
  let unreachableSince: number | undefined;
  while (!stop.aborted) {
    const asked = await unlessAborted(ctx.agents.client.awaitJob(serverId, jobId, AWAIT_JOB_MS), stop);
    if (!asked) break;
    if (!asked.ok) {
      const error = asked.error;
      if (error instanceof AgentCommandError && error.code === "UNIMPLEMENTED") {
        return { state: "unknown", why: `the agent of server ${serverId} is too old to tell` };
      }
      unreachableSince ??= Date.now();
      const limitMs = error instanceof AgentUnavailableError ? AWAIT_UNCONNECTED_MS : AWAIT_UNREACHABLE_MS;
      if (Date.now() - unreachableSince > limitMs) {
        return { state: "unknown", why: `the agent of server ${serverId} does not answer` };
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    unreachableSince = undefined;
    const answer = asked.value;
    if (answer.state === "ENDED") return { state: "ended", outcome: answer };
    if (answer.state !== "RUNNING") {
      return {
        state: "unknown",
        why: `the agent of server ${serverId} has no trace of the job (restarted?)`,
      };
    }
  }
  return { state: "stopped" };
}
