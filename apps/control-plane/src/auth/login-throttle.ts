/**
 * Login throttling, counted in the database (table login_throttle) so that every control plane
 * on it agrees (issue 10 finding 7, issue 22 finding 7). An attempt is counted before the
 * password is checked, so concurrent attempts and every call of a tRPC batch count; a refused
 * attempt is a 429 with Retry-After. Three counters, none of which lets strangers lock an owner
 * out of their account:
 * - per (account, client address) pair, with exponential backoff: the first
 *   LOGIN_PAIR_FREE_ATTEMPTS attempts are free, then each one waits twice as long as the one
 *   before (30 s, 1 min, 2 min, … up to an hour); a successful login clears the pair;
 * - per client address across accounts: LOGIN_MAX_ATTEMPTS.address in a window of
 *   LOGIN_WINDOW_SECONDS (successes give their attempt back);
 * - per account, only for addresses that have not signed in to it in the last
 *   LOGIN_TRUSTED_DAYS days: LOGIN_MAX_ATTEMPTS.accountFromNewAddresses in a window, which bounds
 *   guessing spread over many addresses. An address that signed in successfully is never
 *   refused because of failures from other addresses.
 * Rows: `pair:<email> <address>` (attempts, time of the last attempt), `address:<address>` and
 * `account:<email>` (attempts, window start), `trusted:<email> <address>` (last success).
 */
import { isIP } from "node:net";
import type { Transaction } from "kysely";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../errors.ts";

export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const LOGIN_MAX_ATTEMPTS = { address: 50, accountFromNewAddresses: 100 } as const;
export const LOGIN_PAIR_FREE_ATTEMPTS = 5;
export const LOGIN_BACKOFF_SECONDS = { first: 30, max: 60 * 60 } as const;
/** A pair's count is forgotten a day after its last attempt. */
const PAIR_FORGET_SECONDS = 24 * 60 * 60;
export const LOGIN_TRUSTED_DAYS = 30;

/** Clients without a socket address (in-process calls) share one. */
const UNKNOWN_ADDRESS = "unknown";

/** An IPv6 client is counted by its /64: one subscriber commonly holds a whole /64. */
function addressKey(address: string | null): string {
  if (address === null) return UNKNOWN_ADDRESS;
  const bare = address.split("%")[0]!;
  if (isIP(bare) !== 6) return bare;
  const [head = "", tail] = bare.split("::");
  const front = head === "" ? [] : head.split(":");
  const back = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups =
    tail === undefined ? front : [...front, ...Array(8 - front.length - back.length).fill("0"), ...back];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

function keys(email: string, address: string | null) {
  const source = addressKey(address);
  return {
    pair: `pair:${email} ${source}`,
    address: `address:${source}`,
    account: `account:${email}`,
    trusted: `trusted:${email} ${source}`,
  };
}

/** The wait the pair owes after `attempts` attempts (0 while they are free). */
export function pairBackoffSeconds(attempts: number): number {
  if (attempts < LOGIN_PAIR_FREE_ATTEMPTS) return 0;
  const doublings = attempts - LOGIN_PAIR_FREE_ATTEMPTS;
  return Math.min(LOGIN_BACKOFF_SECONDS.first * 2 ** Math.min(doublings, 20), LOGIN_BACKOFF_SECONDS.max);
}

type Trx = Transaction<Database>;

/** Counts one attempt in the fixed window of `key`; answers the seconds to wait when over `max`. */
async function takeWindowAttempt(db: Trx, key: string, max: number, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - LOGIN_WINDOW_SECONDS * 1000).toISOString();
  const row = await db
    .insertInto("loginThrottle")
    .values({ key, attempts: 1, windowStartedAt: now.toISOString() })
    .onConflict((oc) =>
      oc.column("key").doUpdateSet((eb) => {
        const expired = eb("loginThrottle.windowStartedAt", "<=", cutoff);
        return {
          attempts: eb
            .case()
            .when(expired)
            .then(1)
            .else(eb("loginThrottle.attempts", "+", 1))
            .end(),
          windowStartedAt: eb
            .case()
            .when(expired)
            .then(eb.ref("excluded.windowStartedAt"))
            .else(eb.ref("loginThrottle.windowStartedAt"))
            .end(),
        };
      }),
    )
    .returning(["attempts", "windowStartedAt"])
    .executeTakeFirstOrThrow();
  if (row.attempts <= max) return 0;
  const endsAt = new Date(row.windowStartedAt).getTime() + LOGIN_WINDOW_SECONDS * 1000;
  return Math.max(Math.ceil((endsAt - now.getTime()) / 1000), 1);
}

/** Counts one attempt of the pair unless it still owes a wait; answers that wait. */
async function takePairAttempt(db: Trx, key: string, now: Date): Promise<number> {
  await db
    .insertInto("loginThrottle")
    .values({ key, attempts: 0, windowStartedAt: now.toISOString() })
    .onConflict((oc) => oc.column("key").doNothing())
    .execute();
  // The row lock makes concurrent attempts of one pair wait for each other.
  const row = await db
    .selectFrom("loginThrottle")
    .select(["attempts", "windowStartedAt"])
    .where("key", "=", key)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const last = new Date(row.windowStartedAt).getTime();
  const attempts = now.getTime() - last > PAIR_FORGET_SECONDS * 1000 ? 0 : row.attempts;
  const wait = Math.ceil((last + pairBackoffSeconds(attempts) * 1000 - now.getTime()) / 1000);
  if (attempts > 0 && wait > 0) return wait;
  await db
    .updateTable("loginThrottle")
    .set({ attempts: attempts + 1, windowStartedAt: now.toISOString() })
    .where("key", "=", key)
    .execute();
  return 0;
}

async function isTrusted(db: Trx, key: string, now: Date): Promise<boolean> {
  const since = new Date(now.getTime() - LOGIN_TRUSTED_DAYS * 24 * 60 * 60 * 1000).toISOString();
  const row = await db
    .selectFrom("loginThrottle")
    .select("key")
    .where("key", "=", key)
    .where("windowStartedAt", ">", since)
    .executeTakeFirst();
  return row !== undefined;
}

/** Forgets ended windows, forgotten pairs and expired trust. */
async function forgetOldRows(db: Db, now: Date): Promise<void> {
  const before = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
  await db
    .deleteFrom("loginThrottle")
    .where((eb) =>
      eb.or([
        eb.and([eb("key", "like", "pair:%"), eb("windowStartedAt", "<=", before(PAIR_FORGET_SECONDS))]),
        eb.and([
          eb("key", "like", "trusted:%"),
          eb("windowStartedAt", "<=", before(LOGIN_TRUSTED_DAYS * 24 * 60 * 60)),
        ]),
        eb.and([
          eb.or([eb("key", "like", "address:%"), eb("key", "like", "account:%")]),
          eb("windowStartedAt", "<=", before(LOGIN_WINDOW_SECONDS)),
        ]),
      ]),
    )
    .execute();
}

/** Counts one attempt for `email` from `address`; throws 429 when a counter refuses it. */
export async function takeLoginAttempt(
  ctx: Pick<ServiceContext, "db" | "now">,
  email: string,
  address: string | null,
): Promise<void> {
  const now = ctx.now();
  const key = keys(email, address);
  const retryAfterSeconds = await ctx.db.transaction().execute(async (trx) => {
    const pairWait = await takePairAttempt(trx, key.pair, now);
    if (pairWait > 0) return pairWait;
    const addressWait = await takeWindowAttempt(trx, key.address, LOGIN_MAX_ATTEMPTS.address, now);
    if (addressWait > 0) return addressWait;
    if (await isTrusted(trx, key.trusted, now)) return 0;
    return takeWindowAttempt(trx, key.account, LOGIN_MAX_ATTEMPTS.accountFromNewAddresses, now);
  });
  // Now and then, forget what has expired.
  if (Math.random() < 0.02) await forgetOldRows(ctx.db, now);
  if (retryAfterSeconds > 0) {
    throw new ApiError(
      "TOO_MANY_REQUESTS",
      `Too many login attempts: try again in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
      { "Retry-After": String(retryAfterSeconds) },
    );
  }
}

/**
 * After a successful login: the pair starts afresh, the address gets its attempt back and is
 * trusted for the account for LOGIN_TRUSTED_DAYS days. The account's count of attempts from new
 * addresses stays: the owner's success does not give a guesser elsewhere a fresh allowance.
 */
export async function loginSucceeded(
  ctx: Pick<ServiceContext, "db" | "now">,
  email: string,
  address: string | null,
): Promise<void> {
  const key = keys(email, address);
  const now = ctx.now().toISOString();
  await ctx.db.deleteFrom("loginThrottle").where("key", "=", key.pair).execute();
  await ctx.db
    .updateTable("loginThrottle")
    .set((eb) => ({ attempts: eb("attempts", "-", 1) }))
    .where("key", "=", key.address)
    .where("attempts", ">", 0)
    .execute();
  await ctx.db
    .insertInto("loginThrottle")
    .values({ key: key.trusted, attempts: 1, windowStartedAt: now })
    .onConflict((oc) => oc.column("key").doUpdateSet({ windowStartedAt: now }))
    .execute();
}
