/**
 * Health of the control plane and its dependencies. Liveness (GET /health/live) only says the
 * process answers; readiness (GET /health/ready, and GET /health) checks the database, which
 * every request needs (503 when it is down), and reports NATS, which only agents and the
 * deployment queue need (down makes the status "degraded", still 200: the API keeps serving).
 * A copy that is shutting down (SIGTERM, main.ts) is not ready (503, status "stopping") while it
 * finishes its requests: a proxy's health check moves the traffic to the other copies.
 */
import type { NatsConnection } from "@platform/agent-protocol";
import type { Logger } from "pino";
import type { ServiceContext } from "./context.ts";
import { databaseIsUp } from "./db/database.ts";
import { ApiError } from "./errors.ts";

/** "disabled": the control plane runs without that dependency (no NATS_URL). */
export type DependencyStatus = "up" | "down" | "disabled";

export interface HealthReport {
  status: "ok" | "degraded" | "unavailable" | "stopping";
  checks: {
    database: { status: DependencyStatus; kind: ServiceContext["databaseKind"] };
    nats: { status: DependencyStatus };
  };
}

let stopping = false;

/** From now on this process answers /health/ready with 503 "stopping" (main.ts, on SIGTERM). */
export function markStopping(): void {
  stopping = true;
}

export async function readiness(ctx: ServiceContext): Promise<{ report: HealthReport; ready: boolean }> {
  const database = (await databaseIsUp(ctx.db)) ? "up" : "down";
  const nats = ctx.agents.natsStatus();
  const ready = database === "up" && !stopping;
  return {
    ready,
    report: {
      status: stopping ? "stopping" : !ready ? "unavailable" : nats === "down" ? "degraded" : "ok",
      checks: { database: { status: database, kind: ctx.databaseKind }, nats: { status: nats } },
    },
  };
}

/**
 * Follows a NATS connection's state from its status events (the client reconnects by itself)
 * and logs each change; answers a function telling the current state.
 */
export function trackNatsConnection(connection: NatsConnection, logger: Logger): () => DependencyStatus {
  let status: DependencyStatus = connection.isClosed() ? "down" : "up";
  void (async () => {
    for await (const event of connection.status()) {
      if (event.type === "disconnect" && status === "up") {
        status = "down";
        logger.warn({ server: event.server }, "NATS connection lost; reconnecting");
      } else if (event.type === "reconnect") {
        status = "up";
        logger.info({ server: event.server }, "NATS connection restored");
      } else if (event.type === "close") {
        status = "down";
      }
    }
  })().catch((error) => logger.warn({ err: error }, "NATS status not followed"));
  return () => (connection.isClosed() ? "down" : status);
}

/**
 * Whether a start-up failure is a dependency not answering yet (Postgres or NATS starting after
 * the control plane), which main.ts waits out, rather than a configuration error.
 */
export function isDependencyOutage(error: unknown): boolean {
  if (error instanceof ApiError) return error.code === "SERVICE_UNAVAILABLE";
  return error instanceof Error && /^NATS is not reachable at /.test(error.message);
}
