/**
 * Answers kept in this process already checked against their output schema and serialized, so
 * that a read neither queries nor parses nor stringifies, made fresh on every control plane
 * sharing the database (the project trees, projects/tree-cache.ts, and the application details,
 * applications/detail-cache.ts).
 *
 * Freshness, as for the caller cache (auth/caller-cache.ts): a trigger on every table the answers
 * read sends a NOTIFY on the cache's channel at commit, each notification empties the cache, and
 * a hit is used only after a fence, so a write committed before a request arrived is in its
 * answer whichever instance made it. The cache answers nothing while the listening connection is
 * down, and while one of the tables it reads has no trigger (as the database says at start).
 */
import { sql } from "kysely";
import type { Db, Notifications } from "./database.ts";

/** The tables that have the trigger named `<table>_<triggerSuffix>`, as the database says. */
export async function tablesWithTrigger(db: Db, triggerSuffix: string): Promise<Set<string>> {
  const { rows } = await sql<{ table: string }>`
    select c.relname as table from pg_catalog.pg_trigger t join pg_catalog.pg_class c on c.oid = t.tgrelid
    where t.tgname = c.relname || '_' || ${triggerSuffix}`.execute(db);
  return new Set(rows.map((row) => row.table));
}

export interface NotifiedCacheOptions<V> {
  /** The tables the answers read from; asked at each read, as a registry may grow. */
  readTables(): Iterable<string | undefined>;
  /** The size of a value in bytes, for the bound. */
  sizeOf(value: V): number;
  /** Beyond this many bytes the oldest entries make room (a bound, not a tuning knob). */
  maxBytes: number;
}

export class NotifiedCache<V> {
  private readonly entries = new Map<string, V>();
  private bytes = 0;
  private notifications: Notifications | null = null;
  private notifyingTables: ReadonlySet<string> = new Set();
  /** Bumped by every invalidation: a read that began before one must not store its answer. */
  private generation = 0;

  constructor(private readonly options: NotifiedCacheOptions<V>) {}

  /** Starts trusting the cache once `notifications` tell about writes to `notifyingTables`. */
  attach(notifications: Notifications, notifyingTables: ReadonlySet<string>): void {
    this.notifications = notifications;
    this.notifyingTables = notifyingTables;
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.bytes = 0;
  }

  /**
   * The value of `key`: from the cache when it is current as of this call, else from `load`
   * (and kept when nothing changed meanwhile; undefined is never kept).
   */
  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const trusted = this.trusted();
    if (trusted && this.entries.has(key)) {
      try {
        await this.notifications?.fence();
        const entry = this.entries.get(key);
        if (entry !== undefined) return entry;
      } catch {
        // The listening connection failed: read the database as if nothing were cached.
      }
    }
    const generation = this.generation;
    const value = await load();
    if (value !== undefined && trusted && generation === this.generation && this.notifications?.live) {
      this.store(key, value);
    }
    return value;
  }

  /** Whether a current value of `key` is kept (for tests and diagnostics). */
  holds(key: string): boolean {
    return this.trusted() && this.entries.has(key);
  }

  private trusted(): boolean {
    if (!this.notifications?.live) return false;
    for (const table of this.options.readTables()) {
      if (!table || !this.notifyingTables.has(table)) return false;
    }
    return true;
  }

  private store(key: string, value: V): void {
    const size = this.options.sizeOf(value);
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.bytes -= this.options.sizeOf(previous);
    }
    for (const [oldest, entry] of this.entries) {
      if (this.bytes + size <= this.options.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= this.options.sizeOf(entry);
    }
    if (size > this.options.maxBytes) return;
    this.entries.set(key, value);
    this.bytes += size;
  }
}
