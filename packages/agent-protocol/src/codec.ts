/**
 * Binary codecs for the messages of proto/agent.proto. The .proto file is loaded once, with
 * protobufjs, when this module is first imported; each message gets an encode/decode pair that
 * maps between protobuf bytes and the plain objects typed in messages.ts (generated from the
 * same file). Decoding gives every scalar, list and map (defaults included) and leaves absent
 * messages out; encoding takes any subset of the fields (Init).
 */
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import type {
  AgentEvent,
  CommandReply,
  CommandRequest,
  CommandRequestInput,
  ErrorCode,
  Heartbeat,
  Init,
  LogChunk,
  MessageTypes,
  ServiceLogs,
  StreamLogsRequest,
} from "./messages.ts";

/** Absolute path of proto/agent.proto (for gRPC loaders too). */
export const AGENT_PROTO_PATH = fileURLToPath(new URL("../../../proto/agent.proto", import.meta.url));
export const PROTO_PACKAGE = "platform.agent.v1";

/** The loaded proto schema (protobufjs reflection root). */
export const agentProtoRoot: protobuf.Root = protobuf.loadSync(AGENT_PROTO_PATH);

/** Thrown when bytes are not a valid encoding of the expected message. */
export class ProtocolDecodeError extends Error {
  constructor(typeName: string, cause: unknown) {
    super(`cannot decode ${typeName}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "ProtocolDecodeError";
  }
}

const toObjectOptions: protobuf.IConversionOptions = {
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: false,
};

export function messageType(name: string): protobuf.Type {
  return agentProtoRoot.lookupType(`${PROTO_PACKAGE}.${name}`);
}

function encodeWith(type: protobuf.Type, value: object): Uint8Array {
  // fromObject first, in its own statement: `type.encode(type.fromObject(...))` would read
  // type.encode (still protobufjs's set-up stub) before fromObject generates the type's functions,
  // and the stub would then generate them all a second time on a type's first encode.
  const message = type.fromObject(value as Record<string, unknown>);
  return type.encode(message).finish();
}

function decodeWith(type: protobuf.Type, bytes: Uint8Array): Record<string, unknown> {
  let message: protobuf.Message;
  try {
    message = type.decode(bytes);
  } catch (error) {
    throw new ProtocolDecodeError(type.name, error);
  }
  return withoutNulls(type.toObject(message, toObjectOptions));
}

/** protobufjs gives absent sub-messages as null; the TypeScript shapes leave them out. */
function withoutNulls(object: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(object)) {
    if (value === null) delete object[key];
    else if (Array.isArray(value)) {
      for (const item of value) if (isPlainObject(item)) withoutNulls(item);
    } else if (isPlainObject(value)) withoutNulls(value);
  }
  return object;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" && value !== null && !(value instanceof Uint8Array) && !Array.isArray(value)
  );
}

/** The member of `oneofName` that is set in a decoded object, if any. */
function setMember(
  type: protobuf.Type,
  oneofName: string,
  object: Record<string, unknown>,
): string | undefined {
  const members = type.oneofs[oneofName]?.oneof ?? [];
  return members.find((member) => object[member] !== undefined && object[member] !== null);
}

/** A plain codec for a message without a oneof. */
function plainCodec<T extends object>(typeName: string) {
  const type = messageType(typeName);
  return {
    encode: (value: Init<T>): Uint8Array => encodeWith(type, value),
    decode: (bytes: Uint8Array): T => decodeWith(type, bytes) as unknown as T,
  };
}

const commandRequestType = messageType("CommandRequest");
const commandReplyType = messageType("CommandReply");

export function encodeCommandRequest(request: CommandRequestInput): Uint8Array {
  const { requestId, serverId, deadlineUnixMs } = request;
  const body: Record<string, unknown> = { requestId, serverId, deadlineUnixMs };
  if (request.command !== "unknown") {
    body[request.command] = (request as unknown as Record<string, unknown>)[request.command];
  }
  return encodeWith(commandRequestType, body);
}

/** Decodes a request; a command this version does not know decodes as `command: "unknown"`. */
export function decodeCommandRequest(bytes: Uint8Array): CommandRequest {
  const object = decodeWith(commandRequestType, bytes);
  const command = setMember(commandRequestType, "command", object) ?? "unknown";
  const request: Record<string, unknown> = {
    requestId: object.requestId,
    serverId: object.serverId,
    deadlineUnixMs: object.deadlineUnixMs,
    command,
  };
  if (command !== "unknown") request[command] = object[command];
  return request as unknown as CommandRequest;
}

export function encodeCommandReply(reply: CommandReply): Uint8Array {
  const body: Record<string, unknown> = { requestId: reply.requestId };
  body[reply.result] = (reply as unknown as Record<string, unknown>)[reply.result];
  return encodeWith(commandReplyType, body);
}

/** Decodes a reply; a result this version does not know decodes as an UNIMPLEMENTED error. */
export function decodeCommandReply(bytes: Uint8Array): CommandReply {
  const object = decodeWith(commandReplyType, bytes);
  const requestId = String(object.requestId);
  const result = setMember(commandReplyType, "result", object);
  if (result === undefined) {
    return {
      requestId,
      result: "error",
      error: { code: "UNIMPLEMENTED", message: "the reply carries a result this version does not know" },
    };
  }
  return { requestId, result, [result]: object[result] } as unknown as CommandReply;
}

/** Builds an error reply. */
export function errorReply(requestId: string, code: ErrorCode, message: string): CommandReply {
  return { requestId, result: "error", error: { code, message } };
}

/**
 * `request` as an agent receives it: encoded and decoded, so every field it leaves out is there
 * with its default. For tests that hand a request straight to a handler.
 */
export function asReceived(request: CommandRequestInput): CommandRequest;
/** Message `name` as its receiver decodes `value` (every field left out at its default). */
export function asReceived<N extends keyof MessageTypes>(
  name: N,
  value: Init<MessageTypes[N]>,
): MessageTypes[N];
export function asReceived(nameOrRequest: string | CommandRequestInput, value?: object): unknown {
  if (typeof nameOrRequest !== "string") return decodeCommandRequest(encodeCommandRequest(nameOrRequest));
  const type = messageType(nameOrRequest);
  return decodeWith(type, encodeWith(type, value ?? {}));
}

const heartbeatCodec = plainCodec<Heartbeat>("Heartbeat");
const eventCodec = plainCodec<AgentEvent>("Event");
const logChunkCodec = plainCodec<LogChunk>("LogChunk");
const serviceLogsCodec = plainCodec<ServiceLogs>("ServiceLogs");
const streamLogsRequestCodec = plainCodec<StreamLogsRequest>("StreamLogsRequest");

export const encodeHeartbeat = heartbeatCodec.encode;
export const decodeHeartbeat = heartbeatCodec.decode;
export const encodeEvent = eventCodec.encode;
export const decodeEvent = eventCodec.decode;
export const encodeLogChunk = logChunkCodec.encode;
export const decodeLogChunk = logChunkCodec.decode;
/** The lines of a followed workload's LogChunk (FollowServiceLogsCommand). */
export const encodeServiceLogs = serviceLogsCodec.encode;
export const decodeServiceLogs = serviceLogsCodec.decode;
export const encodeStreamLogsRequest = streamLogsRequestCodec.encode;
export const decodeStreamLogsRequest = streamLogsRequestCodec.decode;
