/**
 * Codec tests: every message survives an encode/decode round trip with all of its fields set,
 * the samples together set every field of proto/agent.proto (so the round trips and the recorded
 * bytes of wire-format.test.ts cover the whole contract), and unknown or malformed input decodes
 * to the documented fallbacks.
 */
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import {
  agentProtoRoot,
  decodeCommandReply,
  decodeCommandRequest,
  decodeEvent,
  decodeHeartbeat,
  decodeLogChunk,
  decodeStreamLogsRequest,
  encodeCommandReply,
  encodeCommandRequest,
  encodeEvent,
  encodeHeartbeat,
  encodeLogChunk,
  encodeStreamLogsRequest,
  messageType,
  ProtocolDecodeError,
} from "./codec.ts";
import { event, header, heartbeat, logChunk, replies, requests, streamLogs } from "./codec-samples.ts";
import type { CommandReply } from "./messages.ts";

/** Adds "Type.field" for every field set (non-default) in `value`, recursing into messages. */
function collectSetFields(type: protobuf.Type, value: Record<string, unknown>, into: Set<string>): void {
  for (const field of type.fieldsArray) {
    const fieldValue = value[field.name];
    if (fieldValue === undefined || fieldValue === null) continue;
    into.add(`${type.name}.${field.name}`);
    field.resolve();
    if (field.resolvedType instanceof protobuf.Type) {
      const items = field.map
        ? Object.values(fieldValue as object)
        : field.repeated
          ? (fieldValue as unknown[])
          : [fieldValue];
      for (const item of items) collectSetFields(field.resolvedType, item as Record<string, unknown>, into);
    }
  }
}

function allFields(): Set<string> {
  const names = new Set<string>();
  const visit = (namespace: protobuf.NamespaceBase) => {
    for (const nested of namespace.nestedArray) {
      if (nested instanceof protobuf.Type)
        for (const field of nested.fieldsArray) names.add(`${nested.name}.${field.name}`);
      if (nested instanceof protobuf.Namespace) visit(nested);
    }
  };
  visit(agentProtoRoot);
  return names;
}

describe("codec", () => {
  it("round-trips every command request", () => {
    for (const request of requests)
      expect(decodeCommandRequest(encodeCommandRequest(request))).toEqual(request);
  });

  it("round-trips every reply", () => {
    for (const reply of replies) expect(decodeCommandReply(encodeCommandReply(reply))).toEqual(reply);
  });

  it("round-trips heartbeats, events, log chunks and log stream requests", () => {
    expect(decodeHeartbeat(encodeHeartbeat(heartbeat))).toEqual(heartbeat);
    expect(decodeEvent(encodeEvent(event))).toEqual(event);
    const chunk = decodeLogChunk(encodeLogChunk(logChunk));
    expect({ ...chunk, data: new Uint8Array(chunk.data) }).toEqual(logChunk);
    expect(decodeStreamLogsRequest(encodeStreamLogsRequest(streamLogs))).toEqual(streamLogs);
  });

  it("the samples set every field of agent.proto", () => {
    const seen = new Set<string>();
    for (const request of requests) collectSetFields(messageType("CommandRequest"), request as never, seen);
    for (const reply of replies) collectSetFields(messageType("CommandReply"), reply as never, seen);
    collectSetFields(messageType("Heartbeat"), heartbeat as never, seen);
    collectSetFields(messageType("Event"), event as never, seen);
    collectSetFields(messageType("LogChunk"), logChunk as never, seen);
    collectSetFields(messageType("StreamLogsRequest"), streamLogs as never, seen);
    const missing = [...allFields()].filter((name) => !seen.has(name));
    expect(missing).toEqual([]);
  });

  it("leaves an absent tool version out (the API shows it as null)", () => {
    const reply: CommandReply = {
      requestId: "r",
      result: "validateServer",
      validateServer: {
        docker: { enabled: false },
        rclone: { enabled: false },
        nixpacks: { enabled: false },
        buildpacks: { enabled: false },
        railpack: { enabled: false },
        isPlatformNetworkInstalled: false,
        isSwarmInstalled: false,
        isMainDirectoryInstalled: false,
      },
    };
    const decoded = decodeCommandReply(encodeCommandReply(reply));
    expect(decoded).toEqual(reply);
    expect(decoded.result === "validateServer" && "version" in decoded.validateServer.docker!).toBe(false);
  });

  it("decodes a request without a known command as command 'unknown'", () => {
    const bytes = encodeCommandRequest({ ...header, command: "unknown" });
    expect(decodeCommandRequest(bytes)).toEqual({ ...header, command: "unknown" });
  });

  it("decodes a reply without a known result as an UNIMPLEMENTED error", () => {
    const bytes = messageType("CommandReply").encode({ requestId: "r-9" }).finish();
    expect(decodeCommandReply(bytes)).toEqual({
      requestId: "r-9",
      result: "error",
      error: { code: "UNIMPLEMENTED", message: expect.any(String) },
    });
  });

  it("refuses bytes that are not a message", () => {
    expect(() => decodeCommandRequest(new Uint8Array([0xff, 0xff, 0xff, 0xff]))).toThrow(ProtocolDecodeError);
  });
});
