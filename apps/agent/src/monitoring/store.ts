/**
 * MetricsStore: the agent's local store of metrics samples, one JSON line per sample in one file
 * per series and UTC day (`<dir>/system/2026-11-24.jsonl`, `<dir>/containers/…`). Appends go
 * straight to the file (a killed agent loses nothing written; a line torn by a power cut is
 * skipped on reading), pruning deletes whole day files older than the retention, and reading
 * walks the newest files backwards until it has the samples asked for. No database engine:
 * append-only files are all a time series of one host needs.
 */
import { appendFile, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { ContainerMetricsRecord, SystemMetricsRecord } from "@platform/agent-protocol";

type Series = "system" | "containers";

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;
const dayOf = (timestamp: string) => timestamp.slice(0, 10);

export class MetricsStore {
  constructor(readonly directory: string) {}

  async appendSystem(record: SystemMetricsRecord): Promise<void> {
    await this.append("system", record.timestamp, [record]);
  }

  async appendContainers(records: ContainerMetricsRecord[]): Promise<void> {
    if (records.length > 0) await this.append("containers", records[0]!.timestamp, records);
  }

  /** The newest `limit` system samples (all when undefined), oldest first. */
  readSystem(limit?: number): Promise<SystemMetricsRecord[]> {
    return this.read<SystemMetricsRecord>("system", limit, () => true);
  }

  /** The newest `limit` samples of `appName`'s containers (all when undefined), oldest first. */
  readContainers(
    appName: string,
    limit?: number,
    keep: (record: ContainerMetricsRecord) => boolean = () => true,
  ): Promise<ContainerMetricsRecord[]> {
    return this.read<ContainerMetricsRecord>(
      "containers",
      limit,
      (record) => record.appName === appName && keep(record),
    );
  }

  /** Deletes the day files older than `retentionDays` days before `now`; answers how many. */
  async prune(retentionDays: number, now = new Date()): Promise<number> {
    const oldestKept = dayOf(new Date(now.getTime() - retentionDays * 86_400_000).toISOString());
    let removed = 0;
    for (const series of ["system", "containers"] as const) {
      for (const day of await this.days(series)) {
        if (day < oldestKept) {
          await rm(this.file(series, day), { force: true });
          removed++;
        }
      }
    }
    return removed;
  }

  /** The system samples taken at `since` or later, oldest first. */
  async readSystemSince(since: Date): Promise<SystemMetricsRecord[]> {
    const from = since.toISOString();
    const records: SystemMetricsRecord[] = [];
    for (const day of await this.days("system")) {
      if (day < dayOf(from)) continue;
      for (const line of (await readFile(this.file("system", day), "utf8")).split("\n")) {
        if (line === "") continue;
        let record: SystemMetricsRecord;
        try {
          record = JSON.parse(line) as SystemMetricsRecord;
        } catch {
          continue;
        }
        if (typeof record.timestamp === "string" && record.timestamp >= from) records.push(record);
      }
    }
    return records;
  }

  /** Deletes every stored sample of both series (settings.cleanMonitoring); answers what went. */
  async clear(): Promise<{ filesRemoved: number; bytesRemoved: number }> {
    let filesRemoved = 0;
    let bytesRemoved = 0;
    for (const series of ["system", "containers"] as const) {
      for (const day of await this.days(series)) {
        const file = this.file(series, day);
        bytesRemoved += await stat(file).then(
          (info) => info.size,
          () => 0,
        );
        await rm(file, { force: true });
        filesRemoved++;
      }
    }
    return { filesRemoved, bytesRemoved };
  }

  private file(series: Series, day: string): string {
    return path.join(this.directory, series, `${day}.jsonl`);
  }

  private async append(series: Series, timestamp: string, records: object[]): Promise<void> {
    await mkdir(path.join(this.directory, series), { recursive: true, mode: 0o700 });
    const lines = records.map((record) => `${JSON.stringify(record)}\n`).join("");
    await appendFile(this.file(series, dayOf(timestamp)), lines, { mode: 0o600 });
  }

  /** Day names of a series, oldest first. */
  private async days(series: Series): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(path.join(this.directory, series));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return names.flatMap((name) => DAY_FILE.exec(name)?.[1] ?? []).sort();
  }

  private async read<T>(
    series: Series,
    limit: number | undefined,
    keep: (record: T) => boolean,
  ): Promise<T[]> {
    const wanted = limit ?? Number.POSITIVE_INFINITY;
    const newestFirst: T[] = [];
    for (const day of (await this.days(series)).reverse()) {
      const lines = (await readFile(this.file(series, day), "utf8")).split("\n");
      for (let index = lines.length - 1; index >= 0 && newestFirst.length < wanted; index--) {
        const line = lines[index]!;
        if (line === "") continue;
        let record: T;
        try {
          record = JSON.parse(line) as T;
        } catch {
          continue; // a line torn by a crash in the middle of a write
        }
        if (keep(record)) newestFirst.push(record);
      }
      if (newestFirst.length >= wanted) break;
    }
    return newestFirst.reverse();
  }
}
