/**
 * Starts the control plane: configuration, database, HTTP server, graceful shutdown. Postgres or
 * NATS not answering yet at start is waited for; once running, their outages never end the
 * process (see db/database.ts and health.ts).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { serve } from "@hono/node-server";
import type { Logger } from "pino";
import { createApp } from "./app.ts";
import { issueSetupToken } from "./auth/setup-token.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { buildServiceContext, createLogger, type RunningContext } from "./context-builder.ts";
import { isDependencyOutage, markStopping } from "./health.ts";
import { HTTP_SERVER_OPTIONS, limitSlowBodies } from "./limits.ts";

const START_RETRY_MS = 2000;
/** How long a shutdown waits for the requests being answered. */
const DRAIN_MS = 10_000;
/** The longest a shutdown takes before the process exits anyway (deploy/stack.yml gives 30 s). */
const SHUTDOWN_MS = 25_000;

/**
 * Whether a response whose headers are sent is a server-sent event stream. Hono's node server
 * passes the headers to writeHead, so only the header block Node wrote (`_header`) names them.
 */
function isEventStream(response: ServerResponse): boolean {
  const head = (response as unknown as { _header?: string | null })._header ?? "";
  return /^content-type:\s*text\/event-stream/im.test(head);
}

async function startServices(config: Config, logger: Logger): Promise<RunningContext> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await buildServiceContext(config, { logger });
    } catch (error) {
      if (!isDependencyOutage(error)) throw error;
      logger.warn(
        { err: error, attempt },
        `a dependency is not reachable at start; retrying in ${START_RETRY_MS / 1000} s`,
      );
      await sleep(START_RETRY_MS);
    }
  }
}

/** While no user exists: the set-up token the first registration from another machine needs. */
async function announceSetupToken(running: RunningContext, config: Config, logger: Logger): Promise<void> {
  const token = await issueSetupToken(running.ctx);
  if (token === null) return;
  if (config.setupToken !== undefined) {
    logger.warn(
      "No account exists yet: the first one registered from another machine needs the set-up token given in PLATFORM_SETUP_TOKEN (deploy/install.sh printed it)",
    );
    return;
  }
  const base = config.platformUrl?.replace(/\/+$/, "") ?? `http://<this machine's address>:${config.port}`;
  logger.warn(
    `Set-up token: ${token} (no account exists yet: the first one registered from another machine needs it; open ${base}/?setup=${token})`,
  );
}

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  // A promise some background task forgot to handle (a query during a database outage, ...)
  // is logged; it must not end a control plane that otherwise recovers by itself.
  process.on("unhandledRejection", (reason) => {
    logger.error({ err: reason }, "unhandled promise rejection (the control plane keeps running)");
  });
  const running = await startServices(config, logger);
  await announceSetupToken(running, config, logger);
  const app = createApp(running.ctx);
  const listen = {
    fetch: app.fetch,
    port: config.port,
    hostname: config.host,
    serverOptions: HTTP_SERVER_OPTIONS,
  };
  const server = serve(listen, (info) => {
    const host = config.host === "0.0.0.0" ? "localhost" : config.host;
    logger.info(
      { port: info.port, database: running.ctx.databaseKind, edition: config.edition },
      `Platform control plane listening on http://${host}:${info.port}`,
    );
  });
  limitSlowBodies(server);
  const http = server as Server;
  // The requests being answered: a shutdown waits for them. Once stopping, every response closes
  // its connection, so that a client (or Traefik) does not send its next request here.
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  http.on("request", (_request: IncomingMessage, response: ServerResponse) => {
    if (stopping && !response.headersSent) response.setHeader("connection", "close");
    inFlight.add(response);
    response.once("close", () => inFlight.delete(response));
  });
  // SIGTERM/SIGINT (a copy replaced by an upgrade, or stopped): readiness answers 503 at once,
  // the listener closes (new connections go to the other copies), idle keep-alive connections
  // are closed, log streams (server-sent events, which follow for ever) are cut at once (their
  // clients resume on another copy with Last-Event-ID), and the other requests being answered
  // finish (up to DRAIN_MS). Then the services stop: running deployments get a short
  // grace time and the rest goes back to the queue (deployments/queue.ts), and the process
  // exits 0. All of it within SHUTDOWN_MS (the stack's stop_grace_period is longer).
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    markStopping();
    logger.info({ signal, requests: inFlight.size }, "shutting down: finishing the requests being answered");
    const forced = setTimeout(() => {
      logger.error(`shutdown did not finish within ${SHUTDOWN_MS / 1000} s: exiting`);
      process.exit(1);
    }, SHUTDOWN_MS);
    forced.unref();
    for (const response of inFlight) {
      if (!response.headersSent) response.setHeader("connection", "close");
      else if (isEventStream(response)) response.socket?.destroy();
    }
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeIdleConnections();
    // A connection whose response ended after the close is idle now: closed too.
    const idle = setInterval(() => http.closeIdleConnections(), 100);
    const drained = await Promise.race([closed.then(() => true), sleep(DRAIN_MS).then(() => false)]);
    clearInterval(idle);
    if (!drained) {
      logger.warn({ requests: inFlight.size }, "shutdown: requests still open after the drain time are cut");
    }
    try {
      await running.close();
    } catch (error) {
      logger.error({ err: error }, "shutdown: closing the services failed");
    }
    http.closeAllConnections();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error) => {
  console.error("Platform failed to start:", error instanceof Error ? error.message : error);
  process.exit(1);
});
