/**
 * Build slots per server (settings.updateBuildsConcurrency for this machine,
 * server.updateBuildsConcurrency for a server): how many deployments that build a service
 * (deploy, redeploy, rebuild) run on one server at once, beside the queue's global concurrency.
 * The server is where the deployment builds: its build server, else where it runs. A limit of
 * null is no limit of the server's own. The limit is read again at every try, so a change
 * takes effect for the next deployment to start; a change through this control plane wakes the
 * waiting ones at once, one through another copy (or a waiting deployment dropped from the
 * queue) is seen at the next recheck.
 *
 * The slots are this control plane's: several copies on one database each allow N (see
 * docs/decisions.md).
 */
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { Db } from "../db/database.ts";

/** Dokploy's bounds of buildsConcurrency. */
export const MIN_BUILDS_CONCURRENCY = 1;
export const MAX_BUILDS_CONCURRENCY = 100;

const BUILDING_KINDS = new Set(["deploy", "redeploy", "rebuild"]);

/** The server whose slots a waiting deployment needs; null when it builds nothing (or is gone). */
export async function buildServerOf(db: Db, deploymentId: string): Promise<string | null> {
  const row = await db
    .selectFrom("deployments")
    .select(["kind", "status", "serverId", "buildServerId"])
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirst();
  if (row?.status !== "idle" || !BUILDING_KINDS.has(row.kind)) return null;
  return row.buildServerId ?? row.serverId ?? LOCAL_SERVER_ID;
}

/** The stored limit of `serverId` (this machine's in the settings row); null: none. */
export async function buildsConcurrencyOf(db: Db, serverId: string): Promise<number | null> {
  if (serverId === LOCAL_SERVER_ID) {
    const row = await db.selectFrom("webServerSettings").select("buildsConcurrency").executeTakeFirst();
    return row?.buildsConcurrency ?? null;
  }
  const row = await db
    .selectFrom("servers")
    .select("buildsConcurrency")
    .where("serverId", "=", serverId)
    .executeTakeFirst();
  return row?.buildsConcurrency ?? null;
}

/** How often a waiting deployment reads its server's limit again without being woken. */
export const RECHECK_MS = 5_000;

export class ServerBuildSlots {
  constructor(private readonly recheckMs = RECHECK_MS) {}

  private readonly used = new Map<string, number>();
  private readonly waiters = new Map<string, Set<() => void>>();

  /** How many deployments build on `serverId` in this process now. */
  usedOn(serverId: string): number {
    return this.used.get(serverId) ?? 0;
  }

  /** How many deployments wait for a slot of `serverId` in this process now. */
  waitingOn(serverId: string): number {
    return this.waiters.get(serverId)?.size ?? 0;
  }

  /**
   * Waits until `serverId` has a free slot under `limit()` (read at every try), takes it and
   * answers its release; an abort of `signal` ends the wait with its reason.
   */
  async acquire(
    serverId: string,
    limit: () => Promise<number | null>,
    signal?: AbortSignal,
    /** Called once before the first wait (the worker gives its global slot back meanwhile). */
    onWait?: () => void,
  ): Promise<() => void> {
    let waited = false;
    for (;;) {
      signal?.throwIfAborted();
      const size = await limit();
      const used = this.usedOn(serverId);
      if (size === null || used < size) {
        this.used.set(serverId, used + 1);
        let released = false;
        return () => {
          if (released) return;
          released = true;
          this.used.set(serverId, this.usedOn(serverId) - 1);
          this.wake(serverId);
        };
      }
      if (!waited) onWait?.();
      waited = true;
      await new Promise<void>((resolve, reject) => {
        const set = this.waiters.get(serverId) ?? new Set();
        this.waiters.set(serverId, set);
        const timer = setTimeout(() => done(), this.recheckMs);
        timer.unref();
        const done = () => {
          clearTimeout(timer);
          set.delete(done);
          signal?.removeEventListener("abort", aborted);
          resolve();
        };
        const aborted = () => {
          clearTimeout(timer);
          set.delete(done);
          reject(signal?.reason);
        };
        set.add(done);
        signal?.addEventListener("abort", aborted, { once: true });
      });
    }
  }

  /** Lets the deployments waiting on `serverId` try again (a slot freed, or the limit changed). */
  wake(serverId: string): void {
    for (const waiter of [...(this.waiters.get(serverId) ?? [])]) waiter();
  }
}
