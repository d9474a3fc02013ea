/**
 * Reconciliation: compares what every deployed application and database service should run
 * with what its server's Docker runs (observeServices), level-triggered: periodically
 * (RECONCILE_INTERVAL_MS) and when an agent comes back after being away. A service that is
 * missing, scaled to 0 or has fewer running tasks than it should (twice in a row, so a task
 * restart is not flagged) turns its status to error with the reason in
 * applicationStatusMessage; once the service runs as it should again, the status is done again.
 * The platform does not redeploy by itself (docs/decisions.md): Swarm already restarts failed
 * tasks; what it cannot fix is shown, and the user deploys (or starts) again. Services with a
 * deployment waiting or running, and stopped ones (status idle), are left alone. Servers are
 * observed side by side (OBSERVE_CONCURRENCY at once), so an unreachable agent delays only its own.
 */
import { setMaxListeners } from "node:events";
import type { ObservedService, ResourceOwner } from "@platform/agent-protocol";
import { applicationOwner, databaseOwner } from "@platform/ownership";
import { sql } from "kysely";
import type { ServiceContext } from "../context.ts";
import { unlessAborted } from "./observe.ts";
import { serverOf } from "./runtime.ts";

export const DEFAULT_RECONCILE_INTERVAL_MS = 30_000;
const OBSERVE_TIMEOUT_MS = 10_000;
/** Servers observed at once in a pass. */
const OBSERVE_CONCURRENCY = 16;

/**
 * Where a kind of service keeps its status, and its id column (deployments name their service
 * by the same column).
 */
const SERVICE_TABLES = {
  application: { table: "applications", id: "application_id" },
  database: { table: "database_services", id: "database_id" },
} as const;

interface Candidate {
  serviceKind: keyof typeof SERVICE_TABLES;
  serviceId: string;
  appName: string;
  serverId: string | null;
  /** Its project's organization: the owner its service must carry (with serviceKind and serviceId). */
  organizationId: string;
  applicationStatus: string;
  applicationStatusMessage: string | null;
  /** When its last deployment ended, as read: a write is skipped once another one ended. */
  lastCompletedAt: string | null;
}

/** Why the observed service is not what the application should run; undefined when it is. */
export function driftOf(service: ObservedService | undefined, serverId: string): string | undefined {
  if (service?.ownerMismatch) {
    return `The service on server ${serverId} was replaced by one that does not belong to this application: deploy again under another appName`;
  }
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

/** The owner a candidate's service must carry. */
function ownerOf(service: Candidate): ResourceOwner {
  return service.serviceKind === "application"
    ? applicationOwner(service.organizationId, service.serviceId)
    : databaseOwner(service.organizationId, service.serviceId);
}

export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  /** Aborted by close: a pass waiting for an unreachable agent ends at once. */
  private readonly closing = new AbortController();
  /** Drift seen at the last pass, per service: flagged when seen twice in a row. */
  private readonly suspected = new Map<string, string>();

  constructor(private readonly ctx: ServiceContext) {
    // Each observation waiting at once listens to it (Node warns of a leak above 10).
    setMaxListeners(OBSERVE_CONCURRENCY + 1, this.closing.signal);
  }

  start(): void {
    const intervalMs = this.ctx.config.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
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
    this.running = next.catch((error) => this.ctx.logger.warn({ err: error }, "reconciliation pass failed"));
    return next;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    clearTimeout(this.timer);
    await this.running;
  }

  private async pass(onlyServerId: string | undefined): Promise<void> {
    const candidates: Candidate[] = [];
    for (const serviceKind of Object.keys(SERVICE_TABLES) as Candidate["serviceKind"][]) {
      candidates.push(...(await this.candidates(serviceKind, onlyServerId)));
    }
    const byServer = new Map<string, Candidate[]>();
    for (const app of candidates) {
      const serverId = serverOf(app);
      const apps = byServer.get(serverId);
      if (apps) apps.push(app);
      else byServer.set(serverId, [app]);
    }
    // Servers are asked side by side: an agent that does not answer costs its own timeout, not
    // one for every server after it.
    const queue = [...byServer];
    const observeNext = async (): Promise<void> => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [serverId, apps] = next;
        const answer = await unlessAborted(
          this.ctx.agents.client.observeServices(
            serverId,
            {
              serviceNames: apps.map((app) => app.appName),
              jobIds: [],
              owners: Object.fromEntries(apps.map((app) => [app.appName, ownerOf(app)])),
            },
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
    };
    await Promise.all(Array.from({ length: Math.min(OBSERVE_CONCURRENCY, queue.length) }, observeNext));
  }

  /**
   * The services of a kind whose last deployment succeeded, that none waits or runs for, and
   * whose status is done or error (stopped ones, idle, are left alone).
   */
  private async candidates(
    serviceKind: Candidate["serviceKind"],
    onlyServerId: string | undefined,
  ): Promise<Candidate[]> {
    const { table, id } = SERVICE_TABLES[serviceKind];
    const deploymentsOf = sql`deployments d where d.${sql.ref(id)} = s.${sql.ref(id)}`;
    const server =
      onlyServerId === undefined
        ? sql``
        : onlyServerId === "local"
          ? sql`and s.server_id is null`
          : sql`and s.server_id = ${onlyServerId}`;
    const { rows } = await sql<Omit<Candidate, "serviceKind">>`
      select s.${sql.ref(id)} as "serviceId", s.app_name as "appName",
        s.server_id as "serverId", p.organization_id as "organizationId",
        s.application_status as "applicationStatus",
        s.application_status_message as "applicationStatusMessage",
        (select max(d.completed_at) from ${deploymentsOf}) as "lastCompletedAt"
      from ${sql.table(table)} s
      join environments e on e.environment_id = s.environment_id
      join projects p on p.project_id = e.project_id
      where s.application_status in ('done', 'error')
        and exists (select 1 from ${deploymentsOf} and d.status = 'done')
        and not exists (select 1 from ${deploymentsOf} and d.status in ('idle', 'running'))
        ${server}`.execute(this.ctx.db);
    return rows.map((row) => ({ ...row, serviceKind }));
  }

  /**
   * Sets the service's status, only if nothing changed since `service` was read (compare and
   * set): the same status and message, no deployment waiting or running, and no deployment
   * ended since. A deployment that ran meanwhile decides the status, not this stale pass.
   * Answers whether it was written.
   */
  private async write(
    service: Candidate,
    status: "done" | "error",
    message: string | null,
  ): Promise<boolean> {
    const { table, id } = SERVICE_TABLES[service.serviceKind];
    const endedSince =
      service.lastCompletedAt === null
        ? sql`d.completed_at is not null`
        : sql`d.completed_at > ${service.lastCompletedAt}`;
    const result = await sql`
      update ${sql.table(table)} s
      set application_status = ${status}, application_status_message = ${message}
      where s.${sql.ref(id)} = ${service.serviceId}
        and s.application_status = ${service.applicationStatus}
        and s.application_status_message is not distinct from ${service.applicationStatusMessage}
        and not exists (
          select 1 from deployments d where d.${sql.ref(id)} = s.${sql.ref(id)}
            and (d.status in ('idle', 'running') or ${endedSince})
        )`.execute(this.ctx.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  private async apply(service: Candidate, drift: string | undefined): Promise<void> {
    const { logger } = this.ctx;
    const ids = { [`${service.serviceKind}Id`]: service.serviceId };
    if (drift === undefined) {
      this.suspected.delete(service.serviceId);
      if (service.applicationStatus === "error" && service.applicationStatusMessage !== null) {
        if (await this.write(service, "done", null)) {
          logger.info(ids, "reconciliation: the service runs as it should again");
        }
      }
      return;
    }
    const seenBefore = this.suspected.get(service.serviceId) !== undefined;
    this.suspected.set(service.serviceId, drift);
    if (!seenBefore || service.applicationStatusMessage === drift) return;
    // Only a status the service's state decides is changed (not a deployment's own error).
    if (service.applicationStatus === "error" && service.applicationStatusMessage === null) return;
    if (await this.write(service, "error", drift)) {
      logger.warn({ ...ids, drift }, "reconciliation: the service differs from what was deployed");
    }
  }
}
