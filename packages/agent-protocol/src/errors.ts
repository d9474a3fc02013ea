/**
 * Errors a caller of the agent protocol can meet: no agent connected, no reply in time, an
 * error reply from the agent, or a reply that does not belong to the request.
 */
import type { ErrorCode } from "./messages.ts";

/** No agent of that server is connected (NATS "no responders", or none registered in memory). */
export class AgentUnavailableError extends Error {
  constructor(
    readonly serverId: string,
    readonly command: string,
  ) {
    super(`no agent of server ${serverId} is connected (command ${command} was not delivered)`);
    this.name = "AgentUnavailableError";
  }
}

/** The agent did not reply within the request's timeout. */
export class AgentTimeoutError extends Error {
  constructor(
    readonly serverId: string,
    readonly command: string,
    readonly requestId: string,
    readonly timeoutMs: number,
  ) {
    super(
      `agent of server ${serverId} did not reply to ${command} (request ${requestId}) within ${timeoutMs} ms`,
    );
    this.name = "AgentTimeoutError";
  }
}

/** The agent answered with an Error reply. */
export class AgentCommandError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly agentMessage: string,
    readonly serverId: string,
    readonly command: string,
  ) {
    super(`agent of server ${serverId} refused ${command}: ${code}: ${agentMessage}`);
    this.name = "AgentCommandError";
  }
}

/** A reply that cannot be matched to its request or decoded. */
export class AgentProtocolError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AgentProtocolError";
  }
}
