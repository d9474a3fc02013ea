/**
 * The agent's wire format does not change by accident: every sample message (codec-samples.ts,
 * which together set every field of proto/agent.proto) encodes to the bytes recorded in
 * wire-format.fixtures.txt, first written by the hand-kept codec before the protocol's types were
 * generated. A renumbered field, a changed field type or an encoder that drops a field fails
 * here. A deliberate change (a new field set by a sample) is recorded with `vitest -u` and shows
 * in review as a changed line of the fixture.
 */
import { describe, expect, it } from "vitest";
import {
  encodeCommandReply,
  encodeCommandRequest,
  encodeEvent,
  encodeHeartbeat,
  encodeLogChunk,
  encodeStreamLogsRequest,
} from "./codec.ts";
import { event, heartbeat, logChunk, replies, requests, streamLogs } from "./codec-samples.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("wire format", () => {
  it("encodes every sample to the recorded bytes", async () => {
    const lines = [
      ...requests.map((request) => `request ${request.command}: ${hex(encodeCommandRequest(request))}`),
      ...replies.map((reply) => `reply ${reply.result}: ${hex(encodeCommandReply(reply))}`),
      `heartbeat: ${hex(encodeHeartbeat(heartbeat))}`,
      `event: ${hex(encodeEvent(event))}`,
      `logChunk: ${hex(encodeLogChunk(logChunk))}`,
      `streamLogsRequest: ${hex(encodeStreamLogsRequest(streamLogs))}`,
    ];
    await expect(`${lines.join("\n")}\n`).toMatchFileSnapshot("./wire-format.fixtures.txt");
  });
});
