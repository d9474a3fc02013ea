/**
 * Where a follower of a deployment's log is (issue 40 item 4: a log stream survives the loss of
 * its control plane). Each line's event id is `<its ISO timestamp> <n>`, n counting the lines of
 * that timestamp so far (1 for the first), so the id names a line in any copy's view of the log:
 * the running copy's lines in memory, or the row another copy reads. A client reconnecting with
 * Last-Event-ID to any copy gets the lines after it; a line the row never got (its copy died
 * before writing it) is not found, and then the lines of later timestamps follow.
 */
import { LOG_TRUNCATED_NOTE } from "../deployments/logs.ts";

export interface LogEntry {
  id: string;
  line: string;
}

interface Position {
  stamp: string;
  n: number;
}

const ID = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ([1-9]\d{0,8})$/;

/** A Last-Event-ID of this stream, or null when it is not one. */
export function parseLogEventId(id: string): Position | null {
  const match = ID.exec(id.trim());
  return match ? { stamp: match[1]!, n: Number(match[2]) } : null;
}

const stampOf = (line: string) => {
  const space = line.indexOf(" ");
  return space === -1 ? line : line.slice(0, space);
};

export class LogCursor {
  private last: Position | null;
  /**
   * The view last read, its length and its last line's position, when the cursor was at that
   * line: the running copy's view only grows, and its new lines are read without a scan.
   */
  private view: { lines: readonly string[]; length: number } | undefined;

  constructor(resumeAfter: Position | null = null) {
    this.last = resumeAfter;
  }

  /** The lines of `lines` (a whole view of the log, oldest first) after the cursor; moves it past them. */
  next(lines: readonly string[]): LogEntry[] {
    const view = this.view;
    const entries =
      view && view.lines === lines && this.last && lines.length >= view.length
        ? this.number(lines, view.length, this.last)
        : this.scan(lines);
    if (entries.length > 0) this.last = parseLogEventId(entries[entries.length - 1]!.id)!;
    // The fast path holds only when the cursor is at the view's last line.
    const atEnd = entries.length > 0 || (view?.lines === lines && view.length === lines.length);
    this.view = atEnd ? { lines, length: lines.length } : undefined;
    return entries;
  }

  /** lines[from…], numbered on from the position `previous` of the line before them. */
  private number(lines: readonly string[], from: number, previous: Position): LogEntry[] {
    const entries: LogEntry[] = [];
    let { stamp, n } = previous;
    for (let i = from; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === LOG_TRUNCATED_NOTE) continue;
      const lineStamp = stampOf(line);
      n = lineStamp === stamp ? n + 1 : 1;
      stamp = lineStamp;
      entries.push({ id: `${stamp} ${n}`, line });
    }
    return entries;
  }

  private scan(lines: readonly string[]): LogEntry[] {
    const all = this.number(lines, 0, { stamp: "", n: 0 });
    const last = this.last;
    if (!last) return all;
    const at = all.findIndex((entry) => entry.id === `${last.stamp} ${last.n}`);
    if (at >= 0) return all.slice(at + 1);
    // The cursor's line is not in this view: the lines of later timestamps.
    return all.filter((entry) => stampOf(entry.line) > last.stamp);
  }
}
