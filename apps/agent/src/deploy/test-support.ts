/**
 * Helpers of the deploy tests: log collection. Hand-made archives: ../testing/archives.ts; ports
 * and HTTP polling: ../testing/net.ts.
 */
import type { LogChunk } from "@platform/agent-protocol";

/** Collects the log chunks the agent publishes, per stream. */
export class LogCollector {
  readonly chunks: LogChunk[] = [];
  readonly publish = (chunk: LogChunk) => {
    this.chunks.push(chunk);
  };
  text(streamId: string): string {
    return this.forStream(streamId)
      .map((chunk) => new TextDecoder().decode(chunk.data))
      .join("");
  }
  forStream(streamId: string): LogChunk[] {
    return this.chunks.filter((chunk) => chunk.streamId === streamId);
  }
}
