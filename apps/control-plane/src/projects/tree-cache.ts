/**
 * Each organization's project tree (project.all), kept in this process already checked against
 * the output schema and serialized (db/notified-cache.ts). Triggers NOTIFY
 * `platform_project_trees` on any write to a table the tree reads (migration
 * 20261125-20-project-tree-invalidation): projects, environments, tags and project_tags
 * (20261201-70-tags) and each registered service kind's summary table; a kind added without its trigger makes the cache answer nothing.
 */
import type { Db, Notifications } from "../db/database.ts";
import { NotifiedCache, tablesWithTrigger } from "../db/notified-cache.ts";
import { PreparedOutput } from "../procedure.ts";
import { loadProjectTrees } from "./details.ts";
import { type ProjectTrees, projectTreesSchema } from "./schemas.ts";
import { serviceKindHooks } from "./workload-kinds.ts";

export const PROJECT_TREE_CHANNEL = "platform_project_trees";
const TRIGGER_SUFFIX = "notify_project_trees";

/** The tables that have the invalidation trigger, as the database says. */
export function tablesNotifyingTrees(db: Db): Promise<Set<string>> {
  return tablesWithTrigger(db, TRIGGER_SUFFIX);
}

export class ProjectTreeCache {
  private readonly cache = new NotifiedCache<PreparedOutput<ProjectTrees>>({
    readTables: () => [
      "projects",
      "environments",
      "tags",
      "project_tags",
      ...Object.values(serviceKindHooks).map((hooks) => hooks?.summaryTable),
    ],
    sizeOf: (prepared) => prepared.json.length,
    maxBytes: 8 * 1024 * 1024,
  });

  /** Starts trusting the cache once `notifications` tell about writes to `notifyingTables`. */
  attach(notifications: Notifications, notifyingTables: ReadonlySet<string>): void {
    this.cache.attach(notifications, notifyingTables);
  }

  invalidate(): void {
    this.cache.invalidate();
  }

  /**
   * The projects of `organizationId` with their environments and services, checked against
   * project.all's output schema: from the cache when it is current as of this call, else read.
   */
  async get(db: Db, organizationId: string): Promise<PreparedOutput<ProjectTrees>> {
    const trees = await this.cache.get(organizationId, async () =>
      PreparedOutput.of(projectTreesSchema, await loadProjectTrees(db, organizationId)),
    );
    if (!trees) throw new Error("a project tree is always loaded");
    return trees;
  }

  /** Whether a current tree of `organizationId` is kept (for tests and diagnostics). */
  holds(organizationId: string): boolean {
    return this.cache.holds(organizationId);
  }
}
