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

/**
 * Ticks due while no control plane ran (issue 40 item 6d). Every process that runs croner jobs
 * stamps the instance lease row `cron-alive` every CRON_BEAT_MS (its `until`: the last time a
 * control plane's croner ran). A process starting reads the stamp it finds first: from then to
 * its start, a tick of a job with no cron_ticks row was due while no control plane fired it.
 */
const ALIVE = "cron-alive";
export const CRON_BEAT_MS = 5_000;

/** The span between the last stamp of any control plane and this one's start. */
export interface CronDowntime {
  from: Date;
  to: Date;
}

interface Beat {
  downtime: Promise<CronDowntime | null>;
  users: number;
  timer: NodeJS.Timeout;
}

const beats = new Map<Db, Beat>();

async function stamp(db: Db, owner: string): Promise<void> {
  await db
    .insertInto("instanceLeases")
    .values({ name: ALIVE, owner, until: sql<string>`now()` })
    .onConflict((conflict) => conflict.column("name").doUpdateSet({ owner, until: sql<string>`now()` }))
    .execute();
}

/**
 * Starts this process's stamps on `db` (once, however many tables call it; release with
 * releaseCronBeat) and answers the span from the last stamp it finds to its start (null: the
 * first start ever). A tick in it is one no copy fired unless it has a cron_ticks row.
 */
export function cronDowntime(db: Db, owner: string): Promise<CronDowntime | null> {
  let beat = beats.get(db);
  if (!beat) {
    const downtime = (async () => {
      const row = await db
        .selectFrom("instanceLeases")
        .select("until")
        .where("name", "=", ALIVE)
        .executeTakeFirst();
      const now = await sql<{ now: Date }>`select now() as now`.execute(db);
      await stamp(db, owner);
      if (!row) return null;
      // Ticks of the last second may still be being claimed by a live copy: not counted.
      return { from: new Date(row.until), to: new Date(new Date(now.rows[0]!.now).getTime() - 1000) };
    })();
    const timer = setInterval(() => {
      stamp(db, owner).catch(() => {});
    }, CRON_BEAT_MS);
    timer.unref();
    beat = { downtime, users: 0, timer };
    beats.set(db, beat);
  }
  beat.users++;
  return beat.downtime;
}

/** One user of cronDowntime is done; the last one stops the stamps. */
export function releaseCronBeat(db: Db): void {
  const beat = beats.get(db);
  if (!beat || --beat.users > 0) return;
  clearInterval(beat.timer);
  beats.delete(db);
}

/** Of `ticks`, those no control plane claimed (no cron_ticks row). */
export async function unclaimedTicks(db: Db, job: string, ticks: Date[]): Promise<Date[]> {
  if (ticks.length === 0) return [];
  const claimed = await db
    .selectFrom("cronTicks")
    .select("tick")
    .where("job", "=", job)
    .where("tick", ">=", ticks[0]!.toISOString())
    .where("tick", "<=", ticks[ticks.length - 1]!.toISOString())
    .execute();
  const seen = new Set(claimed.map((row) => new Date(row.tick).getTime()));
  return ticks.filter((tick) => !seen.has(tick.getTime()));
}
