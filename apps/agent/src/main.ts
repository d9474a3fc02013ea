/**
 * The agent daemon: `tsx apps/agent/src/main.ts`. Enrolls on first start when
 * AGENT_CONTROL_PLANE_URL and AGENT_ENROLLMENT_TOKEN are given and no enrollment is stored,
 * loads its configuration (config.ts), connects to NATS with its credentials and serves
 * commands and heartbeats until SIGTERM/SIGINT. Logs JSON lines, never secrets.
 */
import { AGENT_VERSION, NatsAgentTransport } from "@platform/agent-protocol";
import { parseAllowList } from "@platform/outbound-guard";
import { startAgent } from "./agent.ts";
import { configFilePath, loadAgentConfig, stateDirectory } from "./config.ts";
import { enrollAgent } from "./enroll.ts";
import { createLogger, redactUrl } from "./logger.ts";
import { connectAgentNats } from "./nats.ts";

async function main(): Promise<void> {
  const logger = createLogger();
  const env = process.env;
  logger.info({ version: AGENT_VERSION, configFile: configFilePath(env) }, "platform agent starting");

  if (env.AGENT_CONTROL_PLANE_URL && env.AGENT_ENROLLMENT_TOKEN) {
    const enrollment = await enrollAgent({
      controlPlaneUrl: env.AGENT_CONTROL_PLANE_URL,
      enrollmentToken: env.AGENT_ENROLLMENT_TOKEN,
      stateDir: stateDirectory(env),
    });
    logger.info(
      {
        serverId: enrollment.serverId,
        controlPlaneUrl: redactUrl(env.AGENT_CONTROL_PLANE_URL),
        configFile: enrollment.configFile,
      },
      enrollment.enrolled ? "enrolled with the control plane" : "already enrolled; enrollment token not used",
    );
  }

  const config = await loadAgentConfig(env);
  // The same allow list as the control plane's: loopback/private targets of monitoring callbacks.
  const allow = parseAllowList(env.PLATFORM_OUTBOUND_ALLOW ?? "");
  if ("problem" in allow) throw new Error(`PLATFORM_OUTBOUND_ALLOW: ${allow.problem}`);
  const connection = await connectAgentNats({ ...config, logger });
  const transport = new NatsAgentTransport(connection, {
    onError: (error) => logger.warn({ err: error }, "NATS message dropped"),
  });
  const agent = await startAgent({ ...config, transport, logger, outboundAllow: allow.list });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    await agent.stop();
    await transport.close();
    await connection.drain().catch(() => {});
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((error) => {
  createLogger().fatal({ error: (error as Error).message }, "platform agent could not start");
  process.exit(1);
});
