/**
 * A named lease one control plane holds at a time among several on one database (issue 40):
 * taken with one conditional write (free, run out, or already this instance's: it restarted),
 * renewed by its holder well within `ttlMs`; a holder killed stops renewing and another takes it
 * once it ran out. Used for this machine's in-process agent (agents/agent-hub.ts).
 */
import type { Db } from "./database.ts";

export class InstanceLease {
  constructor(
    private readonly db: Db,
    readonly name: string,
    readonly owner: string,
    readonly ttlMs: number,
  ) {}

  /** Takes or renews the lease; answers whether this instance holds it now. */
  async take(now: Date): Promise<boolean> {
    const until = new Date(now.getTime() + this.ttlMs).toISOString();
    const row = await this.db
      .insertInto("instanceLeases")
      .values({ name: this.name, owner: this.owner, until })
      .onConflict((conflict) =>
        conflict
          .column("name")
          .doUpdateSet({ owner: this.owner, until })
          .where((eb) =>
            eb.or([
              eb("instanceLeases.until", "<", now.toISOString()),
              eb("instanceLeases.owner", "=", this.owner),
            ]),
          ),
      )
      .returning("name")
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Gives the lease up (a clean stop), so another instance takes it at once; best effort. */
  async release(): Promise<void> {
    await this.db
      .deleteFrom("instanceLeases")
      .where("name", "=", this.name)
      .where("owner", "=", this.owner)
      .execute()
      .catch(() => {});
  }
}
