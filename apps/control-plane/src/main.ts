/** Starts the control plane: configuration, database, HTTP server, graceful shutdown. */
import { serve } from "@hono/node-server";
import { createApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { createLogger, createServices } from "./services.ts";

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
  const running = await createServices(config, { logger });
  const app = createApp(running.services);
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    const host = config.host === "0.0.0.0" ? "localhost" : config.host;
    logger.info(
      { port: info.port, database: running.services.databaseKind, edition: config.edition },
      `Platform control plane listening on http://${host}:${info.port}`,
    );
  });
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
