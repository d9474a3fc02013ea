/**
 * Follows an agent's log stream (agent.<serverId>.logs.<streamId>) while a command runs and
 * hands its UTF-8 text to `log` line by line, in `seq` order, each line with its control
 * characters escaped (build and container output is outside text: a CR or an ANSI sequence in it
 * must not forge or repaint deployment-log lines). The reply of the command and the
 * stream's last chunks travel separately, so after the reply it waits briefly for the chunk
 * marked final before it stops.
 */
import { escapeLogText, type LogChunk } from "@platform/agent-protocol";
import type { ServiceContext } from "../context.ts";

/** How long to wait for the rest of the stream after the command answered. */
const TAIL_WAIT_MS = 2000;

export async function forwardAgentLog<T>(
  ctx: ServiceContext,
  serverId: string,
  streamId: string,
  log: (line: string) => void,
  command: () => Promise<T>,
): Promise<T> {
  const decoder = new TextDecoder();
  const pending = new Map<number, LogChunk>();
  let nextSeq = 0;
  let partial = "";
  let finished = false;
  let onFinal: (() => void) | undefined;

  const emit = (text: string) => {
    partial += text;
    const lines = partial.split(/\r?\n/);
    partial = lines.pop() ?? "";
    for (const line of lines) if (line.trim() !== "") log(escapeLogText(line));
  };
  const flush = () => {
    emit(decoder.decode());
    if (partial.trim() !== "") log(escapeLogText(partial));
    partial = "";
  };
  const receive = (chunk: LogChunk) => {
    if (finished || chunk.seq < nextSeq) return;
    pending.set(chunk.seq, chunk);
    for (let next = pending.get(nextSeq); next; next = pending.get(nextSeq)) {
      pending.delete(nextSeq);
      nextSeq++;
      emit(decoder.decode(next.data, { stream: true }));
      if (next.final) {
        finished = true;
        flush();
        onFinal?.();
        return;
      }
    }
  };

  const subscription = ctx.agents.client.transport.subscribeLogs(serverId, streamId, receive);
  try {
    await ctx.agents.client.transport.flush();
    const result = await command().finally(async () => {
      if (!finished) {
        await new Promise<void>((resolve) => {
          onFinal = resolve;
          setTimeout(resolve, TAIL_WAIT_MS).unref();
        });
      }
    });
    return result;
  } finally {
    subscription.unsubscribe();
    if (!finished) flush();
    finished = true;
  }
}
