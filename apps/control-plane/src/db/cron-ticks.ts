/**
 * One run per cron tick across control planes (issue 40): croner fires in every copy on one
 * database; each inserts (job, tick) and only the copy whose insert lands runs the tick. The
 * tick is the firing's scheduled second (croner fires within milliseconds of it, so every copy
 * names the same one). Rows older than a day are pruned now and then.
 */
import { sql } from "kysely";
import type { Db } from "./database.ts";

const PRUNE_EVERY_MS = 3_600_000;
let prunedAt = 0;

/** The scheduled second of a firing that happened at `now`. */
export function tickOf(now: Date): Date {
  return new Date(Math.round(now.getTime() / 1000) * 1000);
}

/** Claims the tick of `job` for `owner`; answers whether this control plane runs it. */
export async function claimTick(db: Db, job: string, tick: Date, owner: string): Promise<boolean> {
  if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
    prunedAt = Date.now();
    await db.deleteFrom("cronTicks").where("tick", "<", sql<string>`now() - interval '1 day'`).execute();
  }
  const row = await db
    .insertInto("cronTicks")
    .values({ job, tick: tick.toISOString(), owner })
    .onConflict((conflict) => conflict.columns(["job", "tick"]).doNothing())
    .returning("job")
    .executeTakeFirst();
  return row !== undefined;
}
