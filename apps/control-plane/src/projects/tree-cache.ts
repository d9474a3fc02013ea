/**
 * Each organization's project tree (project.all), kept in this process already checked against
 * the output schema and serialized, so that a read neither queries nor parses nor stringifies.
 *
 * Freshness, on every control plane sharing the database, as for the caller cache
 * (auth/caller-cache.ts): triggers NOTIFY `platform_project_trees` on any write to a table the
 * tree reads (migration 20261125-20-project-tree-invalidation), each notification empties the
 * cache, and a hit is used only after a fence, so a write committed before a request arrived is
 * in its answer whichever instance made it. The cache answers nothing while the listening
 * connection is down, and while a registered service kind's summary table has no trigger (a kind
 * added without its migration would otherwise be shown stale).
 */
import { sql } from "kysely";
import type { Db, Notifications } from "../db/database.ts";
import { PreparedOutput } from "../procedure.ts";
import { loadProjectTrees } from "./details.ts";
import { type ProjectTrees, projectTreesSchema } from "./schemas.ts";
import { serviceKindHooks } from "./services.ts";

export const PROJECT_TREE_CHANNEL = "platform_project_trees";

/** Beyond this many bytes of JSON the oldest trees make room (a bound, not a tuning knob). */
const MAX_BYTES = 8 * 1024 * 1024;

/** The tables that have the invalidation trigger, as the database says. */
export async function tablesNotifyingTrees(db: Db): Promise<Set<string>> {
  const { rows } = await sql<{ table: string }>`
    select c.relname as table from pg_catalog.pg_trigger t join pg_catalog.pg_class c on c.oid = t.tgrelid
    where t.tgname = c.relname || '_notify_project_trees'`.execute(db);
  return new Set(rows.map((row) => row.table));
}

export class ProjectTreeCache {
  private readonly entries = new Map<string, PreparedOutput<ProjectTrees>>();
  private bytes = 0;
  private notifications: Notifications | null = null;
  private notifyingTables: ReadonlySet<string> = new Set();
  /** Bumped by every invalidation: a read that began before one must not store its answer. */
  private generation = 0;

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
   * The projects of `organizationId` with their environments and services, checked against
   * project.all's output schema: from the cache when it is current as of this call, else read
   * (and kept when nothing changed meanwhile).
   */
  async get(db: Db, organizationId: string): Promise<PreparedOutput<ProjectTrees>> {
    const trusted = this.trusted();
    if (trusted && this.entries.has(organizationId)) {
      try {
        await this.notifications?.fence();
        const entry = this.entries.get(organizationId);
        if (entry) return entry;
      } catch {
        // The listening connection failed: read the database as if nothing were cached.
      }
    }
    const generation = this.generation;
    const prepared = PreparedOutput.of(projectTreesSchema, await loadProjectTrees(db, organizationId));
    if (trusted && generation === this.generation && this.notifications?.live)
      this.store(organizationId, prepared);
    return prepared;
  }

  /** Whether a current tree of `organizationId` is kept (for tests and diagnostics). */
  holds(organizationId: string): boolean {
    return this.trusted() && this.entries.has(organizationId);
  }

  private trusted(): boolean {
    if (!this.notifications?.live) return false;
    for (const hooks of Object.values(serviceKindHooks)) {
      if (!hooks?.summaryTable || !this.notifyingTables.has(hooks.summaryTable)) return false;
    }
    return true;
  }

  private store(organizationId: string, prepared: PreparedOutput<ProjectTrees>): void {
    const previous = this.entries.get(organizationId);
    if (previous) {
      this.entries.delete(organizationId);
      this.bytes -= previous.json.length;
    }
    for (const [key, entry] of this.entries) {
      if (this.bytes + prepared.json.length <= MAX_BYTES) break;
      this.entries.delete(key);
      this.bytes -= entry.json.length;
    }
    if (prepared.json.length > MAX_BYTES) return;
    this.entries.set(organizationId, prepared);
    this.bytes += prepared.json.length;
  }
}
