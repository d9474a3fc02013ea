/**
 * AgentTransport: how the control plane and agents exchange protocol messages, independent of
 * the carrier (NATS in nats-transport.ts, in-process in memory-transport.ts). Also the one
 * serving routine both transports use on the agent side, so a malformed, misaddressed, expired
 * or unknown command is answered the same way whatever carries it.
 */
import { decodeCommandRequest, encodeCommandReply, errorReply } from "./codec.ts";
import type {
  AgentEvent,
  CommandReply,
  CommandRequest,
  CommandRequestInput,
  Heartbeat,
  LogChunk,
} from "./messages.ts";

export interface Subscription {
  unsubscribe(): void;
}

/** Runs one command on the agent side. */
export type CommandHandler = (request: CommandRequest) => Promise<CommandReply>;

export interface AgentTransport {
  // ---- control-plane side ----
  /**
   * Sends `request` to the agent of `serverId` and resolves with its reply (an error reply is a
   * reply, not a rejection). Rejects with AgentUnavailableError when no agent of that server is
   * connected and AgentTimeoutError when none answers within `timeoutMs`.
   */
  request(serverId: string, request: CommandRequestInput, timeoutMs: number): Promise<CommandReply>;
  /** Heartbeats of one server, or of every server when `serverId` is omitted. */
  subscribeHeartbeats(handler: (heartbeat: Heartbeat) => void, serverId?: string): Subscription;
  /** Events of one server, or of every server when `serverId` is omitted. */
  subscribeEvents(handler: (event: AgentEvent) => void, serverId?: string): Subscription;
  /** Chunks of one log stream of one server. */
  subscribeLogs(serverId: string, streamId: string, handler: (chunk: LogChunk) => void): Subscription;

  // ---- agent side ----
  /** Answers the commands sent to `serverId` with `handler`. */
  serveCommands(serverId: string, handler: CommandHandler): Subscription;
  /** Publishes a heartbeat on the subject of `heartbeat.serverId`. */
  publishHeartbeat(heartbeat: Heartbeat): void;
  /** Publishes an event on the subject of `event.serverId`. */
  publishEvent(event: AgentEvent): void;
  /** Publishes one chunk of a log stream of `serverId`. */
  publishLogChunk(serverId: string, chunk: LogChunk): void;

  /** Resolves once the subscriptions made so far are in effect (a round trip to NATS). */
  flush(): Promise<void>;
  /** Ends every subscription this transport made. */
  close(): Promise<void>;
}

/** Optional hooks shared by the transports. */
export interface TransportOptions {
  /** Called with messages that could not be decoded or were dropped; default: ignore. */
  onError?: (error: Error) => void;
}

/** The DEADLINE_EXCEEDED reply for an expired request, or undefined when it may still run. */
export function refuseIfExpired(request: CommandRequest, nowUnixMs = Date.now()): CommandReply | undefined {
  if (request.deadlineUnixMs > 0 && nowUnixMs > request.deadlineUnixMs) {
    const lateMs = nowUnixMs - request.deadlineUnixMs;
    return errorReply(
      request.requestId,
      "DEADLINE_EXCEEDED",
      `the deadline of ${request.command} passed ${lateMs} ms before the agent got it`,
    );
  }
  return undefined;
}

/**
 * Decodes a command for the agent of `serverId`, checks it and runs `handler`; always resolves
 * with the encoded reply (never rejects).
 */
export async function answerCommand(
  serverId: string,
  requestBytes: Uint8Array,
  handler: CommandHandler,
): Promise<Uint8Array> {
  return encodeCommandReply(await replyTo(serverId, requestBytes, handler));
}

async function replyTo(serverId: string, requestBytes: Uint8Array, handler: CommandHandler) {
  let request: CommandRequest;
  try {
    request = decodeCommandRequest(requestBytes);
  } catch (error) {
    return errorReply("", "INVALID_ARGUMENT", (error as Error).message);
  }
  if (request.serverId !== serverId) {
    return errorReply(
      request.requestId,
      "INVALID_ARGUMENT",
      `the command is for server ${JSON.stringify(request.serverId)}, this agent serves ${serverId}`,
    );
  }
  const expired = refuseIfExpired(request);
  if (expired) return expired;
  if (request.command === "unknown") {
    return errorReply(request.requestId, "UNIMPLEMENTED", "this agent does not know the command");
  }
  try {
    const reply = await handler(request);
    return { ...reply, requestId: request.requestId };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return errorReply(request.requestId, "INTERNAL", `${request.command} failed: ${message}`);
  }
}
