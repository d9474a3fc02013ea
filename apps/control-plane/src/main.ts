/**
 * Starts the control plane: configuration, database, HTTP server, graceful shutdown. Postgres or
 * NATS not answering yet at start is waited for; once running, their outages never end the
 * process (see db/database.ts and health.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { serve } from "@hono/node-server";
import type { Logger } from "pino";
import { createApp } from "./app.ts";
import { issueSetupToken } from "./auth/setup-token.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { buildServiceContext, createLogger, type RunningContext } from "./context-builder.ts";
import { isDependencyOutage } from "./health.ts";
import { HTTP_SERVER_OPTIONS, limitSlowBodies } from "./limits.ts";

const START_RETRY_MS = 2000;

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
  // SIGTERM/SIGINT: stop accepting requests, let running deployments finish for a short grace
  // time and hand the rest back to the queue (deployments/queue.ts), close the connections,
  // exit 0. Open keep-alive and log-stream connections do not hold the exit.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const forced = setTimeout(() => {
      logger.error("shutdown did not finish within 20 s: exiting");
      process.exit(1);
    }, 20_000);
    forced.unref();
    server.close();
    if ("closeIdleConnections" in server) server.closeIdleConnections();
    try {
      await running.close();
    } catch (error) {
      logger.error({ err: error }, "shutdown: closing the services failed");
    }
    if ("closeAllConnections" in server) server.closeAllConnections();
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
