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
  const shutdown = (signal: string) => {
    logger.info({ signal }, "shutting down");
    server.close(() => {
      running.close().finally(() => process.exit(0));
    });
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

main().catch((error) => {
  console.error("Platform failed to start:", error instanceof Error ? error.message : error);
  process.exit(1);
});
