/**
 * Reconciliation: compares what every deployed application should run with what its server's
 * Docker runs (observeServices), level-triggered: periodically (RECONCILE_INTERVAL_MS) and when
 * an agent comes back after being away. A service that is missing, scaled to 0 or has fewer
 * running tasks than it should (twice in a row, so a task restart is not flagged) turns the
 * application's status to error with the reason in applicationStatusMessage; once the service
 * runs as it should again, the status is done again. The platform does not redeploy by itself
 * (docs/decisions.md): Swarm already restarts failed tasks; what it cannot fix is shown, and
 * the user deploys (or starts) again. Applications with a deployment waiting or running, and
 * stopped ones (status idle), are left alone.
 */
import type { ObservedService } from "@platform/agent-protocol";
import { sql } from "kysely";
import type { ServiceContext } from "../context.ts";
import { unlessAborted } from "./observe.ts";
import { serverOf } from "./runtime.ts";

export const DEFAULT_RECONCILE_INTERVAL_MS = 30_000;
const OBSERVE_TIMEOUT_MS = 10_000;

interface Candidate {
  applicationId: string;
  appName: string;
  serverId: string | null;
  applicationStatus: string;
  applicationStatusMessage: string | null;
  /** When its last deployment ended, as read: a write is skipped once another one ended. */
  lastCompletedAt: string | null;
}

/** Why the observed service is not what the application should run; undefined when it is. */
export function driftOf(service: ObservedService | undefined, serverId: string): string | undefined {
  if (!service?.found) {
    return `The service is missing on server ${serverId} (removed outside the platform): deploy again`;
  }
  if (service.updateState === "updating" || service.updateState === "rollback_started") return undefined;
  if (service.desiredReplicas === 0) {
    return "The service is scaled to 0 outside the platform: start or deploy the application again";
  }
  if (service.runningTasks < service.desiredReplicas) {
    const cause = service.taskError ? `: ${service.taskError}` : "";
    return `The service runs ${service.runningTasks} of ${service.desiredReplicas} task(s)${cause}`;
  }
  return undefined;
}

export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  /** Aborted by close: a pass waiting for an unreachable agent ends at once. */
  private readonly closing = new AbortController();
  /** Drift seen at the last pass, per application: flagged when seen twice in a row. */
  private readonly suspected = new Map<string, string>();

  constructor(private readonly services: ServiceContext) {}

  start(): void {
    const intervalMs = this.services.config.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
    if (intervalMs <= 0) return;
    const tick = () => {
      this.timer = setTimeout(async () => {
        await this.reconcile().catch(() => {});
        if (!this.closed) tick();
      }, intervalMs);
      this.timer.unref();
    };
    tick();
  }

  /** One pass over every server (or one); passes never overlap. */
  reconcile(serverId?: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    const previous = this.running ?? Promise.resolve();
    const next = previous.then(() => this.pass(serverId));
    this.running = next.catch((error) =>
      this.services.logger.warn({ err: error }, "reconciliation pass failed"),
    );
    return next;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    clearTimeout(this.timer);
    await this.running;
  }

  private async pass(onlyServerId: string | undefined): Promise<void> {
    const { db } = this.services;
    let query = db
      .selectFrom("applications")
      .select(["applicationId", "appName", "serverId", "applicationStatus", "applicationStatusMessage"])
      .select((eb) =>
        eb
          .selectFrom("deployments")
          .select(sql<string | null>`max(completed_at)`.as("lastCompletedAt"))
          .whereRef("deployments.applicationId", "=", "applications.applicationId")
          .as("lastCompletedAt"),
      )
      .where("applicationStatus", "in", ["done", "error"])
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom("deployments")
            .select(sql`1`.as("one"))
            .whereRef("deployments.applicationId", "=", "applications.applicationId")
            .where("deployments.status", "=", "done"),
        ),
      )
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("deployments")
              .select(sql`1`.as("one"))
              .whereRef("deployments.applicationId", "=", "applications.applicationId")
              .where("deployments.status", "in", ["idle", "running"]),
          ),
        ),
      );
    if (onlyServerId !== undefined) {
      query =
        onlyServerId === "local"
          ? query.where("serverId", "is", null)
          : query.where("serverId", "=", onlyServerId);
    }
    const candidates = (await query.execute()) as Candidate[];
    const byServer = new Map<string, Candidate[]>();
    for (const app of candidates) {
      const serverId = serverOf(app);
      byServer.set(serverId, [...(byServer.get(serverId) ?? []), app]);
    }
    for (const [serverId, apps] of byServer) {
      const answer = await unlessAborted(
        this.services.agents.client.observeServices(
          serverId,
          { serviceNames: apps.map((app) => app.appName), jobIds: [] },
          OBSERVE_TIMEOUT_MS,
        ),
        this.closing.signal,
      );
      if (!answer) return; // closing
      // An unreachable agent says nothing about its services.
      if (!answer.ok) continue;
      const observed: ObservedService[] = answer.value.services;
      for (const app of apps) {
        const drift = driftOf(
          observed.find((service) => service.name === app.appName),
          serverId,
        );
        await this.apply(app, drift);
      }
    }
  }

  /**
   * Sets the application's status, only if nothing changed since `app` was read (compare and
   * set): the same status and message, no deployment waiting or running, and no deployment
   * ended since. A deployment that ran meanwhile decides the status, not this stale pass.
   * Answers whether it was written.
   */
  private async write(app: Candidate, status: "done" | "error", message: string | null): Promise<boolean> {
    const result = await this.services.db
      .updateTable("applications")
      .set({ applicationStatus: status, applicationStatusMessage: message })
      .where("applicationId", "=", app.applicationId)
      .where("applicationStatus", "=", app.applicationStatus as "done" | "error")
      .where(sql<boolean>`application_status_message is not distinct from ${app.applicationStatusMessage}`)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("deployments")
              .select(sql`1`.as("one"))
              .whereRef("deployments.applicationId", "=", "applications.applicationId")
              .where((eb) =>
                eb.or([
                  eb("deployments.status", "in", ["idle", "running"]),
                  app.lastCompletedAt === null
                    ? eb("deployments.completedAt", "is not", null)
                    : eb("deployments.completedAt", ">", app.lastCompletedAt),
                ]),
              ),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  private async apply(app: Candidate, drift: string | undefined): Promise<void> {
    const { logger } = this.services;
    if (drift === undefined) {
      this.suspected.delete(app.applicationId);
      if (app.applicationStatus === "error" && app.applicationStatusMessage !== null) {
        if (await this.write(app, "done", null)) {
          logger.info(
            { applicationId: app.applicationId },
            "reconciliation: the service runs as it should again",
          );
        }
      }
      return;
    }
    const seenBefore = this.suspected.get(app.applicationId) !== undefined;
    this.suspected.set(app.applicationId, drift);
    if (!seenBefore || app.applicationStatusMessage === drift) return;
    // Only a status the service's state decides is changed (not a deployment's own error).
    if (app.applicationStatus === "error" && app.applicationStatusMessage === null) return;
    if (await this.write(app, "error", drift)) {
      logger.warn(
        { applicationId: app.applicationId, drift },
        "reconciliation: the service differs from the application",
      );
    }
  }
}
