/**
 * The daemon's NATS connection: authenticated with the agent's .creds file (user JWT + nkey
 * seed), retrying the first connect and reconnecting forever, with connection changes logged.
 * While NATS is away the agent simply waits; Docker workloads are not touched.
 */
import { readFile } from "node:fs/promises";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { AGENT_VERSION } from "@platform/agent-protocol";
import type { Logger } from "pino";
import { redactUrl } from "./logger.ts";

export interface AgentNatsOptions {
  natsUrl: string;
  serverId: string;
  credsFile?: string;
  /** Wait between reconnect attempts (default 1000 ms). */
  reconnectTimeWaitMs?: number;
  logger?: Logger;
}

export async function connectAgentNats(options: AgentNatsOptions): Promise<NatsConnection> {
  const { logger } = options;
  const authenticator = options.credsFile ? credsAuthenticator(await readFile(options.credsFile)) : undefined;
  logger?.info(
    { natsUrl: redactUrl(options.natsUrl), credsFile: options.credsFile ?? null },
    "connecting to NATS (retrying until it answers)",
  );
  const connection = await connect({
    servers: options.natsUrl,
    name: `platform-agent/${AGENT_VERSION} ${options.serverId}`,
    authenticator,
    maxReconnectAttempts: -1,
    waitOnFirstConnect: true,
    reconnectTimeWait: options.reconnectTimeWaitMs ?? 1000,
    pingInterval: 20_000,
  });
  logger?.info({ server: connection.getServer() }, "connected to NATS");
  void (async () => {
    for await (const status of connection.status()) {
      switch (status.type) {
        case "disconnect":
          logger?.warn({ server: status.server }, "NATS connection lost; reconnecting");
          break;
        case "reconnect":
          logger?.info({ server: status.server }, "NATS connection restored");
          break;
        case "error":
          logger?.warn({ err: status.error }, "NATS error");
          break;
      }
    }
  })();
  return connection;
}
