/**
 * AgentTransport over NATS: commands are request/reply on `agent.<serverId>.cmd`; heartbeats,
 * events and log chunks are plain publishes on their subjects (see subjects.ts). Payloads are
 * the protobuf encodings of the proto messages. The transport borrows a connection made with
 * @nats-io/transport-node and leaves reconnecting to it.
 */
import {
  errors,
  type Msg,
  type NatsConnection,
  type Subscription as NatsSubscription,
} from "@nats-io/transport-node";
import {
  decodeCommandReply,
  decodeEvent,
  decodeHeartbeat,
  decodeLogChunk,
  encodeCommandRequest,
  encodeEvent,
  encodeHeartbeat,
  encodeLogChunk,
} from "./codec.ts";
import { AgentProtocolError, AgentTimeoutError, AgentUnavailableError } from "./errors.ts";
import type { AgentEvent, CommandReply, CommandRequestInput, Heartbeat, LogChunk } from "./messages.ts";
import {
  ALL_EVENTS_SUBJECT,
  ALL_HEARTBEATS_SUBJECT,
  commandSubject,
  eventsSubject,
  heartbeatSubject,
  logsSubject,
  serverIdOfSubject,
} from "./subjects.ts";
import {
  type AgentTransport,
  answerCommand,
  type CommandHandler,
  type Subscription,
  type TransportOptions,
} from "./transport.ts";

/** The NATS client pieces both sides need, so they do not depend on the client package themselves. */
export { connect, credsAuthenticator, jwtAuthenticator, type NatsConnection } from "@nats-io/transport-node";

export interface NatsTransportOptions extends TransportOptions {
  /** Drain and close the connection on close() (default: leave it open to its owner). */
  closeConnection?: boolean;
}

function isNoResponders(error: unknown): boolean {
  if (error instanceof errors.NoRespondersError) return true;
  return error instanceof errors.RequestError && error.isNoResponders();
}

function isTimeout(error: unknown): boolean {
  return (
    error instanceof errors.TimeoutError ||
    (error instanceof errors.RequestError && error.cause instanceof errors.TimeoutError)
  );
}

export class NatsAgentTransport implements AgentTransport {
  private readonly subscriptions = new Set<NatsSubscription>();

  constructor(
    readonly connection: NatsConnection,
    private readonly options: NatsTransportOptions = {},
  ) {}

  async request(serverId: string, request: CommandRequestInput, timeoutMs: number): Promise<CommandReply> {
    const subject = commandSubject(serverId);
    let message: Msg;
    try {
      message = await this.connection.request(subject, encodeCommandRequest(request), { timeout: timeoutMs });
    } catch (error) {
      if (isNoResponders(error)) throw new AgentUnavailableError(serverId, request.command);
      if (isTimeout(error))
        throw new AgentTimeoutError(serverId, request.command, request.requestId, timeoutMs);
      throw error;
    }
    const reply = decodeCommandReply(message.data);
    if (reply.requestId !== request.requestId && reply.requestId !== "") {
      throw new AgentProtocolError(
        `reply for request ${reply.requestId} arrived for request ${request.requestId} (server ${serverId})`,
      );
    }
    return { ...reply, requestId: request.requestId };
  }

  subscribeHeartbeats(handler: (heartbeat: Heartbeat) => void, serverId?: string): Subscription {
    const subject = serverId === undefined ? ALL_HEARTBEATS_SUBJECT : heartbeatSubject(serverId);
    return this.listen(subject, decodeHeartbeat, (heartbeat) => heartbeat.serverId, handler);
  }

  subscribeEvents(handler: (event: AgentEvent) => void, serverId?: string): Subscription {
    const subject = serverId === undefined ? ALL_EVENTS_SUBJECT : eventsSubject(serverId);
    return this.listen(subject, decodeEvent, (event) => event.serverId, handler);
  }

  subscribeLogs(serverId: string, streamId: string, handler: (chunk: LogChunk) => void): Subscription {
    return this.listen(logsSubject(serverId, streamId), decodeLogChunk, () => serverId, handler);
  }

  serveCommands(serverId: string, handler: CommandHandler): Subscription {
    return this.track(
      this.connection.subscribe(commandSubject(serverId), {
        callback: (error, message) => {
          if (error) return this.options.onError?.(error);
          answerCommand(serverId, message.data, handler)
            .then((reply) => {
              if (!message.respond(reply))
                throw new Error(`command on ${message.subject} without reply subject`);
            })
            .catch((caught: Error) => this.options.onError?.(caught));
        },
      }),
    );
  }

  publishHeartbeat(heartbeat: Heartbeat): void {
    this.connection.publish(heartbeatSubject(heartbeat.serverId), encodeHeartbeat(heartbeat));
  }

  publishEvent(event: AgentEvent): void {
    this.connection.publish(eventsSubject(event.serverId), encodeEvent(event));
  }

  publishLogChunk(serverId: string, chunk: LogChunk): void {
    this.connection.publish(logsSubject(serverId, chunk.streamId), encodeLogChunk(chunk));
  }

  async flush(): Promise<void> {
    await this.connection.flush();
  }

  async close(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions.clear();
    if (this.options.closeConnection && !this.connection.isClosed()) await this.connection.drain();
  }

  /**
   * Subscribes to `subject`, decodes each message and hands it on, dropping messages whose
   * claimed server id differs from the one in the subject (NATS permissions bind the subject
   * to the agent, so the subject is the trustworthy part).
   */
  private listen<T>(
    subject: string,
    decode: (bytes: Uint8Array) => T,
    claimedServerId: (message: T) => string,
    handler: (message: T) => void,
  ): Subscription {
    return this.track(
      this.connection.subscribe(subject, {
        callback: (error, message) => {
          if (error) return this.options.onError?.(error);
          try {
            const decoded = decode(message.data);
            if (claimedServerId(decoded) !== serverIdOfSubject(message.subject)) {
              throw new AgentProtocolError(`dropped a message on ${message.subject} claiming another server`);
            }
            handler(decoded);
          } catch (caught) {
            this.options.onError?.(caught as Error);
          }
        },
      }),
    );
  }

  private track(subscription: NatsSubscription): Subscription {
    this.subscriptions.add(subscription);
    return {
      unsubscribe: () => {
        this.subscriptions.delete(subscription);
        subscription.unsubscribe();
      },
    };
  }
}
