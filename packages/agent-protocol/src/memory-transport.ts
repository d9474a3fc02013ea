/**
 * AgentTransport inside one process, for a control plane running without NATS_URL with its
 * own agent in-process. Messages still go through the protobuf codecs and the same serving
 * routine as over NATS, so both transports behave alike (the contract tests check it).
 */
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
import { commandSubject, eventsSubject, heartbeatSubject, logsSubject } from "./subjects.ts";
import {
  type AgentTransport,
  answerCommand,
  type CommandHandler,
  type Subscription,
  type TransportOptions,
} from "./transport.ts";

type Listener = { subject: string | ((subject: string) => boolean); deliver: (bytes: Uint8Array) => void };

export class InMemoryAgentTransport implements AgentTransport {
  private readonly commandHandlers = new Map<string, CommandHandler>();
  private readonly listeners = new Set<Listener>();

  constructor(private readonly options: TransportOptions = {}) {}

  async request(serverId: string, request: CommandRequestInput, timeoutMs: number): Promise<CommandReply> {
    const subject = commandSubject(serverId);
    const handler = this.commandHandlers.get(subject);
    if (!handler) throw new AgentUnavailableError(serverId, request.command);
    const requestBytes = encodeCommandRequest(request);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new AgentTimeoutError(serverId, request.command, request.requestId, timeoutMs)),
        timeoutMs,
      );
    });
    try {
      const replyBytes = await Promise.race([answerCommand(serverId, requestBytes, handler), timeout]);
      const reply = decodeCommandReply(replyBytes);
      if (reply.requestId !== request.requestId && reply.requestId !== "") {
        throw new AgentProtocolError(`reply for request ${reply.requestId} arrived for ${request.requestId}`);
      }
      return { ...reply, requestId: request.requestId };
    } finally {
      clearTimeout(timer);
    }
  }

  subscribeHeartbeats(handler: (heartbeat: Heartbeat) => void, serverId?: string): Subscription {
    const subject = serverId === undefined ? /^agent\.[^.]+\.heartbeat$/ : heartbeatSubject(serverId);
    return this.listen(subject, decodeHeartbeat, handler);
  }

  subscribeEvents(handler: (event: AgentEvent) => void, serverId?: string): Subscription {
    const subject = serverId === undefined ? /^agent\.[^.]+\.events$/ : eventsSubject(serverId);
    return this.listen(subject, decodeEvent, handler);
  }

  subscribeLogs(serverId: string, streamId: string, handler: (chunk: LogChunk) => void): Subscription {
    return this.listen(logsSubject(serverId, streamId), decodeLogChunk, handler);
  }

  serveCommands(serverId: string, handler: CommandHandler): Subscription {
    const subject = commandSubject(serverId);
    this.commandHandlers.set(subject, handler);
    return {
      unsubscribe: () => {
        if (this.commandHandlers.get(subject) === handler) this.commandHandlers.delete(subject);
      },
    };
  }

  publishHeartbeat(heartbeat: Heartbeat): void {
    this.publish(heartbeatSubject(heartbeat.serverId), encodeHeartbeat(heartbeat));
  }

  publishEvent(event: AgentEvent): void {
    this.publish(eventsSubject(event.serverId), encodeEvent(event));
  }

  publishLogChunk(serverId: string, chunk: LogChunk): void {
    this.publish(logsSubject(serverId, chunk.streamId), encodeLogChunk(chunk));
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {
    this.commandHandlers.clear();
    this.listeners.clear();
  }

  /** Delivers asynchronously, like a message broker would. */
  private publish(subject: string, bytes: Uint8Array): void {
    for (const listener of this.listeners) {
      const matches =
        typeof listener.subject === "string" ? listener.subject === subject : listener.subject(subject);
      if (matches) setImmediate(() => listener.deliver(bytes));
    }
  }

  private listen<T>(
    subject: string | RegExp,
    decode: (bytes: Uint8Array) => T,
    handler: (message: T) => void,
  ) {
    const listener: Listener = {
      subject: typeof subject === "string" ? subject : (candidate) => subject.test(candidate),
      deliver: (bytes) => {
        try {
          handler(decode(bytes));
        } catch (error) {
          this.options.onError?.(error as Error);
        }
      },
    };
    this.listeners.add(listener);
    return { unsubscribe: () => void this.listeners.delete(listener) };
  }
}
