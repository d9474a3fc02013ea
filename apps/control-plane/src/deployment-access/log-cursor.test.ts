/**
 * The deployment log's event ids (issue 40 item 4): the same line gets the same id in every
 * copy's view of the log, a cursor resumes after it in another view, and a line a view never got
 * is skipped over by time.
 */
import { describe, expect, it } from "vitest";
import { LOG_TRUNCATED_NOTE } from "../deployments/logs.ts";
import { LogCursor, parseLogEventId } from "./log-cursor.ts";

const T1 = "2026-12-01T10:00:00.000Z";
const T2 = "2026-12-01T10:00:00.001Z";
const T3 = "2026-12-01T10:00:01.000Z";

describe("LogCursor", () => {
  it("numbers lines of one time, and reads a growing view without repeating a line", () => {
    const view = [`${T1} a`, `${T1} b`, `${T2} c`];
    const cursor = new LogCursor();
    expect(cursor.next(view)).toEqual([
      { id: `${T1} 1`, line: `${T1} a` },
      { id: `${T1} 2`, line: `${T1} b` },
      { id: `${T2} 1`, line: `${T2} c` },
    ]);
    expect(cursor.next(view)).toEqual([]);
    view.push(`${T2} d`, `${T3} e`);
    expect(cursor.next(view)).toEqual([
      { id: `${T2} 2`, line: `${T2} d` },
      { id: `${T3} 1`, line: `${T3} e` },
    ]);
  });

  it("resumes after an id in another view of the log (the row another copy reads)", () => {
    const row = [LOG_TRUNCATED_NOTE, `${T1} a`, `${T1} b`, `${T2} c`, `${T3} d`];
    const cursor = new LogCursor(parseLogEventId(`${T1} 2`));
    expect(cursor.next(row).map((entry) => entry.line)).toEqual([`${T2} c`, `${T3} d`]);
    // A fresh array of the same log read later: only what was added.
    expect(cursor.next([...row, `${T3} e`])).toEqual([{ id: `${T3} 2`, line: `${T3} e` }]);
  });

  it("skips to later times when the view never got the cursor's line (its copy died before writing it)", () => {
    const row = [`${T1} a`, `${T3} b`];
    const cursor = new LogCursor(parseLogEventId(`${T2} 1`));
    expect(cursor.next(row).map((entry) => entry.line)).toEqual([`${T3} b`]);
  });

  it("refuses ids that are not of this stream", () => {
    expect(parseLogEventId("12")).toBeNull();
    expect(parseLogEventId(`${T1} 0`)).toBeNull();
    expect(parseLogEventId(`${T1}`)).toBeNull();
    expect(parseLogEventId(`${T1} 3`)).toEqual({ stamp: T1, n: 3 });
  });
});
