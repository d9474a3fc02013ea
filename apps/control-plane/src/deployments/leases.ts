/**
 * Leases on running deployments, for several control planes on one database. The control plane
 * that runs a deployment (worker) or follows it after a restart (recovery) holds its lease and
 * renews it every LEASE_MS / 3; recovery takes over only a deployment whose lease ran out (its
 * control plane died) or that it held itself under the same instance id (it restarted), with
 * one conditional write, so exactly one control plane recovers each deployment.
 */
import type { Db } from "../db/database.ts";

/** How long a lease holds without renewal. */
export const LEASE_MS = 15_000;

export class DeploymentLeases {
  private readonly held = new Set<string>();
  private db: Db | undefined;
  private readonly timer: NodeJS.Timeout;

  /** `owner`: this control plane's instance id (stable across its restarts). */
  constructor(readonly owner: string) {
    this.timer = setInterval(() => void this.renew(), LEASE_MS / 3);
    this.timer.unref();
  }

  /** Holds the lease of a deployment this control plane just claimed (idle -> running). */
  async hold(db: Db, deploymentId: string, now: Date): Promise<void> {
    this.db = db;
    await db
      .insertInto("deploymentLeases")
      .values({ deploymentId, owner: this.owner, until: until(now) })
      .onConflict((conflict) =>
        conflict.column("deploymentId").doUpdateSet({ owner: this.owner, until: until(now) }),
      )
      .execute();
    this.held.add(deploymentId);
  }

  /**
   * Takes the lease of a running deployment unless another live control plane holds it;
   * answers whether this one has it now.
   */
  async take(db: Db, deploymentId: string, now: Date): Promise<boolean> {
    this.db = db;
    const row = await db
      .insertInto("deploymentLeases")
      .values({ deploymentId, owner: this.owner, until: until(now) })
      .onConflict((conflict) =>
        conflict
          .column("deploymentId")
          .doUpdateSet({ owner: this.owner, until: until(now) })
          .where((eb) =>
            eb.or([
              eb("deploymentLeases.until", "<", now.toISOString()),
              eb("deploymentLeases.owner", "=", this.owner),
            ]),
          ),
      )
      .returning("deploymentId")
      .executeTakeFirst();
    if (row) this.held.add(deploymentId);
    return row !== undefined;
  }

  /** Whether this control plane holds the deployment's lease (runs or follows it now). */
  holds(deploymentId: string): boolean {
    return this.held.has(deploymentId);
  }

  /** Gives the lease up (the deployment ended or was handed back); best effort. */
  async release(deploymentId: string): Promise<void> {
    this.held.delete(deploymentId);
    await this.db
      ?.deleteFrom("deploymentLeases")
      .where("deploymentId", "=", deploymentId)
      .where("owner", "=", this.owner)
      .execute()
      .catch(() => {});
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async renew(): Promise<void> {
    if (!this.db || this.held.size === 0) return;
    await this.db
      .updateTable("deploymentLeases")
      .set({ until: until(new Date()) })
      .where("owner", "=", this.owner)
      .where("deploymentId", "in", [...this.held])
      .execute()
      .catch(() => {}); // the database is away: renewed at the next tick
  }
}

function until(now: Date): string {
  return new Date(now.getTime() + LEASE_MS).toISOString();
}
