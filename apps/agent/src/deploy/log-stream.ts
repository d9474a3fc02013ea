/**
 * One command's log stream: UTF-8 lines published as LogChunks (seq 0, 1, ...; the last one
 * `final`), with every secret value of the command masked before it leaves the agent.
 */
import type { LogChunk } from "@platform/agent-protocol";

export const MASK = "********";

export class SecretMasker {
  private readonly values: string[];

  constructor(secrets: Iterable<string | undefined>) {
    const values = new Set<string>();
    for (const secret of secrets) {
      if (!secret) continue;
      values.add(secret);
      // A multi-line secret (an SSH key) is also masked line by line: output is handled per line.
      for (const line of secret.split(/\r?\n/)) if (line.trim().length >= 4) values.add(line.trim());
    }
    // Longest first, so a secret containing another is masked whole.
    this.values = [...values].sort((a, b) => b.length - a.length);
  }

  mask(text: string): string {
    let masked = text;
    for (const value of this.values) masked = masked.split(value).join(MASK);
    return masked;
  }
}

export class LogStream {
  private seq = 0;
  private closed = false;
  private readonly encoder = new TextEncoder();

  constructor(
    readonly streamId: string,
    private readonly publish: (chunk: LogChunk) => void,
    private readonly masker: SecretMasker,
  ) {}

  /** The text with every secret of the command masked (for error messages). */
  mask(text: string): string {
    return this.masker.mask(text);
  }

  /** Publishes one line (a newline is added). */
  line(text: string): void {
    this.send(`${text}\n`, false);
  }

  /** Publishes the last chunk; later lines are dropped. */
  close(text?: string): void {
    if (this.closed) return;
    this.send(text === undefined ? "" : `${text}\n`, true);
  }

  /** A sink for process output: splits it into lines, so masking sees whole lines. */
  lineWriter(prefix = ""): { write(data: Buffer | string): void; flush(): void } {
    let pending = "";
    return {
      write: (data) => {
        pending += typeof data === "string" ? data : data.toString("utf8");
        const lines = pending.split(/\r?\n|\r/);
        pending = lines.pop() ?? "";
        for (const line of lines) this.line(prefix + line);
      },
      flush: () => {
        if (pending) this.line(prefix + pending);
        pending = "";
      },
    };
  }

  private send(text: string, final: boolean): void {
    if (this.closed || !this.streamId) return;
    if (final) this.closed = true;
    try {
      this.publish({
        streamId: this.streamId,
        seq: this.seq++,
        data: this.encoder.encode(this.masker.mask(text)),
        final,
      });
    } catch {
      // A lost log chunk must not fail the build; the receiver sees the gap in seq.
    }
  }
}
