/**
 * The proxy's access log (settings.readStatsLogs): Traefik writes one JSON object per request
 * to <main directory>/traefik/access.log (accessLog format "json"; field names StartUTC,
 * RequestMethod, RequestPath, RequestHost, DownstreamStatus, Duration in nanoseconds,
 * ClientHost, and `request_User-Agent` when that header is kept). The file is read line by line,
 * each request filtered (search, status, date range), and one sorted page answered with the
 * count of every match. Lines that are not JSON objects (a line cut by rotation) are skipped.
 */
import { createReadStream } from "node:fs";
import { lstat, truncate } from "node:fs/promises";
import { createInterface } from "node:readline";
import type {
  AccessLogEntry,
  AccessLogPage,
  AccessLogSortField,
  ReadAccessLogCommand,
} from "@platform/agent-protocol";
import { CommandError } from "../command-error.ts";

const STATUS_CLASSES: Record<string, [number, number]> = {
  info: [100, 199],
  success: [200, 299],
  redirect: [300, 399],
  client: [400, 499],
  server: [500, 599],
};

export const MAX_ACCESS_LOG_PAGE_SIZE = 1000;

const text = (value: unknown) => (typeof value === "string" ? value : "");
const number = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** One request of Traefik's JSON access log; null for a line that is not a JSON object. */
export function parseAccessLogLine(line: string): AccessLogEntry | null {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof record !== "object" || record === null || Array.isArray(record)) return null;
  const r = record as Record<string, unknown>;
  return {
    timestamp: text(r.StartUTC) || text(r.time),
    method: text(r.RequestMethod),
    path: text(r.RequestPath),
    status: number(r.DownstreamStatus),
    duration: number(r.Duration),
    ip: text(r.ClientHost),
    userAgent: text(r["request_User-Agent"]),
    host: text(r.RequestHost),
  };
}

/** A status filter ("404", "4xx", "client") as a range; INVALID_ARGUMENT otherwise. */
function statusRange(filter: string): [number, number] {
  const named = STATUS_CLASSES[filter];
  if (named) return named;
  if (/^[1-5]\d\d$/.test(filter)) return [Number(filter), Number(filter)];
  if (/^[1-5]xx$/i.test(filter)) {
    const base = Number(filter[0]) * 100;
    return [base, base + 99];
  }
  throw new CommandError("INVALID_ARGUMENT", `unknown status filter ${JSON.stringify(filter)}`);
}

/** The test each entry must pass. */
export function accessLogFilter(command: ReadAccessLogCommand): (entry: AccessLogEntry) => boolean {
  const search = (command.search ?? "").toLowerCase();
  const ranges = (command.status ?? []).map(statusRange);
  const start = command.startUnixMs || -Infinity;
  const end = command.endUnixMs || Infinity;
  const dated = start !== -Infinity || end !== Infinity;
  return (entry) => {
    if (ranges.length > 0 && !ranges.some(([low, high]) => entry.status >= low && entry.status <= high)) {
      return false;
    }
    if (dated) {
      const at = Date.parse(entry.timestamp);
      if (Number.isNaN(at) || at < start || at > end) return false;
    }
    if (!search) return true;
    return [entry.path, entry.host, entry.method, entry.ip, entry.userAgent].some((field) =>
      field.toLowerCase().includes(search),
    );
  };
}

const SORT_FIELDS: ReadonlySet<string> = new Set<AccessLogSortField>([
  "timestamp",
  "method",
  "path",
  "status",
  "duration",
  "ip",
  "userAgent",
  "host",
]);

/** The field to sort by ("" = timestamp); another name is refused, not taken for a property. */
function sortFieldOf(command: ReadAccessLogCommand): AccessLogSortField {
  const field = command.sortField || "timestamp";
  if (!SORT_FIELDS.has(field)) {
    throw new CommandError("INVALID_ARGUMENT", `sortField must be one of ${[...SORT_FIELDS].join(", ")}`);
  }
  return field as AccessLogSortField;
}

function compareBy(command: ReadAccessLogCommand): (a: AccessLogEntry, b: AccessLogEntry) => number {
  const field = sortFieldOf(command);
  const direction = command.sortDescending ? -1 : 1;
  return (a, b) => {
    const left = field === "timestamp" ? Date.parse(a.timestamp) || 0 : a[field];
    const right = field === "timestamp" ? Date.parse(b.timestamp) || 0 : b[field];
    return (left < right ? -1 : left > right ? 1 : 0) * direction;
  };
}

/** Filters, sorts and pages the entries of `lines`. */
export async function queryAccessLog(
  lines: AsyncIterable<string> | Iterable<string>,
  command: ReadAccessLogCommand,
): Promise<Omit<AccessLogPage, "exists">> {
  if (!Number.isInteger(command.page) || command.page < 1) {
    throw new CommandError("INVALID_ARGUMENT", "page must be a whole number from 1");
  }
  if (
    !Number.isInteger(command.pageSize) ||
    command.pageSize < 1 ||
    command.pageSize > MAX_ACCESS_LOG_PAGE_SIZE
  ) {
    throw new CommandError("INVALID_ARGUMENT", `pageSize must be 1 to ${MAX_ACCESS_LOG_PAGE_SIZE}`);
  }
  const matches = accessLogFilter(command);
  const compare = compareBy(command);
  const entries: AccessLogEntry[] = [];
  for await (const line of lines) {
    if (!line.trim()) continue;
    const entry = parseAccessLogLine(line);
    if (entry && matches(entry)) entries.push(entry);
  }
  entries.sort(compare);
  const from = (command.page - 1) * command.pageSize;
  return { entries: entries.slice(from, from + command.pageSize), totalCount: entries.length };
}

/** Reads the access log file at `file` (a regular file; a symlink is refused). */
export async function readAccessLog(file: string, command: ReadAccessLogCommand): Promise<AccessLogPage> {
  const stat = await lstat(file).catch(() => null);
  if (!stat) {
    await queryAccessLog([], command);
    return { entries: [], totalCount: 0, exists: false };
  }
  if (!stat.isFile()) throw new CommandError("INVALID_ARGUMENT", "the access log is not a regular file");
  const lines = createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
  return { ...(await queryAccessLog(lines, command)), exists: true };
}

/**
 * Empties the access log in place (settings.updateLogCleanup): truncated, not replaced, so
 * Traefik goes on appending to the file it holds open. Missing: exists false, nothing done.
 */
export async function cleanAccessLog(file: string): Promise<{ exists: boolean; bytesRemoved: number }> {
  let size: number;
  try {
    const info = await lstat(file);
    if (!info.isFile()) throw new CommandError("FAILED_PRECONDITION", `${file} is not a regular file`);
    size = info.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { exists: false, bytesRemoved: 0 };
    throw error;
  }
  await truncate(file, 0);
  return { exists: true, bytesRemoved: size };
}
