/**
 * forwardAgentLog over the in-memory transport: build and container output is outside text, so
 * a CR, an ANSI sequence or any other control character in it reaches the deployment log escaped
 * and cannot forge or repaint a line (finding 8 of issue 10).
 */
import { InMemoryAgentTransport } from "@platform/agent-protocol";
import { describe, expect, it } from "vitest";
import type { ServiceContext } from "../context.ts";
import { forwardAgentLog } from "./log-forwarder.ts";

describe("forwardAgentLog", () => {
  it("escapes control characters in each forwarded line, splitting only on real line ends", async () => {
    const transport = new InMemoryAgentTransport();
    const ctx = { agents: { client: { transport } } } as unknown as ServiceContext;
    const lines: string[] = [];
    const output = [
      "Step 1/2 : FROM busybox\n",
      "\u001b[31mred\u001b[0m and a bell\u0007\n",
      "progress 10%\rprogress 100%\rforged 2026-11-24T00:00:00.000Z Deployment done\n",
      "tail without newline\u009b",
    ];
    await forwardAgentLog(
      ctx,
      "server-1",
      "stream-1",
      (line) => lines.push(line),
      async () => {
        output.forEach((text, seq) => {
          transport.publishLogChunk("server-1", {
            streamId: "stream-1",
            seq,
            data: new TextEncoder().encode(text),
            final: seq === output.length - 1,
          });
        });
      },
    );
    expect(lines).toEqual([
      "Step 1/2 : FROM busybox",
      "\\x1b[31mred\\x1b[0m and a bell\\x07",
      "progress 10%\\rprogress 100%\\rforged 2026-11-24T00:00:00.000Z Deployment done",
      "tail without newline\\x9b",
    ]);
  });
});
