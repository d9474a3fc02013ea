/**
 * Deployment logs: each line is "<ISO timestamp> <line>", kept in the deployment row (the last
 * LOG_CAP_CHARACTERS of it) and handed at once to whoever follows the deployment live (the
 * SSE endpoint). Only the process running a deployment has its live lines; the row is
 * written every LOG_FLUSH_MS and once more when the deployment ends.
 */
import { escapeLogText } from "@platform/agent-protocol";
import type { Db } from "../db/database.ts";
import type { DeploymentStatus } from "../db/schema.ts";

export const LOG_CAP_CHARACTERS = 512 * 1024;
export const LOG_FLUSH_MS = 300;
export const LOG_TRUNCATED_NOTE = "[earlier lines dropped: a deployment keeps the last 512 KiB of its log]";

export type LogEvent =
  | { type: "line"; line: string }
  | { type: "end"; status: DeploymentStatus; errorMessage: string | null };

type Listener = (event: LogEvent) => void;

/** The log of one running deployment: capped lines in memory, written to the row in batches. */
export class DeploymentLog {
  private readonly lines: string[] = [];
  private characters = 0;
  private truncated = false;
  private dirty = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    readonly deploymentId: string,
    private readonly onLine: (line: string) => void,
    private readonly onWriteError: (error: unknown) => void,
    private readonly now: () => Date = () => new Date(),
    /** The log the row already has (a deployment run again after it was handed back). */
    earlier = "",
  ) {
    for (const line of earlier.split("\n")) {
      if (line === "" || line === LOG_TRUNCATED_NOTE) continue;
      this.lines.push(line);
      this.characters += line.length + 1;
    }
    this.truncated = earlier.startsWith(`${LOG_TRUNCATED_NOTE}\n`);
    this.timer = setInterval(() => void this.flush(), LOG_FLUSH_MS);
    this.timer.unref();
  }

  /**
   * Appends one line per line of `text`, each with the current time and its remaining control
   * characters escaped. Outside text (a commit message, an engine's error) is escaped by the
   * caller before it is put into `text`, so its line breaks cannot start lines of their own.
   */
  append(text: string): void {
    const stamp = this.now().toISOString();
    for (const part of text.replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n")) {
      const line = `${stamp} ${escapeLogText(part)}`;
      this.lines.push(line);
      this.characters += line.length + 1;
      this.onLine(line);
    }
    while (this.characters > LOG_CAP_CHARACTERS && this.lines.length > 1) {
      this.characters -= (this.lines.shift() as string).length + 1;
      this.truncated = true;
    }
    this.dirty = true;
  }

  /** Every line kept so far (with the truncation note first when lines were dropped). */
  snapshot(): string[] {
    return this.truncated ? [LOG_TRUNCATED_NOTE, ...this.lines] : [...this.lines];
  }

  text(): string {
    const lines = this.snapshot();
    return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
  }

  /** Writes the log to the row if it changed; writes never overlap. */
  flush(): Promise<void> {
    if (!this.dirty) return this.writing;
    this.dirty = false;
    const text = this.text();
    this.writing = this.writing.then(() =>
      this.db
        .updateTable("deployments")
        .set({ logs: text })
        .where("deploymentId", "=", this.deploymentId)
        .execute()
        .then(
          () => {},
          (error) => this.onWriteError(error),
        ),
    );
    return this.writing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** Live followers of deployments, and the logs of the deployments running in this process. */
export class DeploymentLogHub {
  private readonly running = new Map<string, DeploymentLog>();
  private readonly listeners = new Map<string, Set<Listener>>();

  /** Starts the live log of a deployment this process runs, after the `earlier` lines of its row. */
  open(db: Db, deploymentId: string, onWriteError: (error: unknown) => void, earlier = ""): DeploymentLog {
    const log = new DeploymentLog(
      db,
      deploymentId,
      (line) => this.emit(deploymentId, { type: "line", line }),
      onWriteError,
      undefined,
      earlier,
    );
    this.running.set(deploymentId, log);
    return log;
  }

  /** Tells followers of a deployment that never ran (dropped from the queue) that it ended. */
  dropped(deploymentId: string, line: string, errorMessage: string): void {
    this.emit(deploymentId, { type: "line", line });
    this.emit(deploymentId, { type: "end", status: "error", errorMessage });
  }

  /** Ends the live log once its final status is stored. */
  end(deploymentId: string, status: DeploymentStatus, errorMessage: string | null): void {
    this.running.delete(deploymentId);
    this.emit(deploymentId, { type: "end", status, errorMessage });
  }

  /**
   * Follows a deployment. When it runs in this process, `lines` holds its log so far and the
   * listener receives every later line, with nothing lost or repeated in between (both happen in
   * the same tick). Otherwise `lines` is null and the listener receives the lines from the start
   * if the deployment starts here later.
   */
  follow(deploymentId: string, listener: Listener): { lines: string[] | null; stop(): void } {
    let set = this.listeners.get(deploymentId);
    if (!set) {
      set = new Set();
      this.listeners.set(deploymentId, set);
    }
    set.add(listener);
    const stop = () => {
      const current = this.listeners.get(deploymentId);
      current?.delete(listener);
      if (current?.size === 0) this.listeners.delete(deploymentId);
    };
    return { lines: this.running.get(deploymentId)?.snapshot() ?? null, stop };
  }

  private emit(deploymentId: string, event: LogEvent): void {
    for (const listener of this.listeners.get(deploymentId) ?? []) listener(event);
  }
}
