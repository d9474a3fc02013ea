/**
 * The per-session rate limit (issue 22 finding 8): a token bucket per session, as API keys have
 * (auth/api-key.ts), of PLATFORM_SESSION_RATE_LIMIT requests (default SESSION_RATE_LIMIT)
 * refilled continuously over its window. Every procedure call counts, each call of a tRPC batch
 * too.
 *
 * The bucket lives in PostgreSQL (table session_rate_buckets, issue 40 item 1), so a session
 * spread over several control planes has one bucket, not one per copy. So that a request does
 * not always wait for a write, a copy takes a few tokens at a time (a grant of max/100, at
 * least 1) and spends them from memory; a grant not spent within the window is dropped. What a
 * copy holds was taken from the shared bucket, so the copies together never spend more than it
 * gives; at worst a session is refused while another copy still holds a few of its tokens.
 */
import { sql } from "kysely";
import type { Config } from "../config.ts";
import type { Db } from "../db/database.ts";
import { ApiError } from "../errors.ts";
import { SESSION_RATE_LIMIT } from "../limits.ts";

/** Tokens a copy holds in memory, and when it was granted them. */
interface Held {
  tokens: number;
  grantedAt: number;
}

/** Past this many sessions, the oldest grants are dropped (their tokens are lost, never doubled). */
const MAX_HELD_SESSIONS = 100_000;
/** How often a copy deletes buckets that refilled (a missing bucket starts full, as they are). */
const PRUNE_EVERY_MS = 60_000;

export class SessionRateLimiter {
  private readonly held = new Map<string, Held>();
  private prunedAt = 0;
  /** Tokens one database write grants this copy. */
  readonly grant: number;

  constructor(private readonly limit: { max: number; timeWindowSeconds: number } = SESSION_RATE_LIMIT) {
    this.grant = Math.max(1, Math.floor(limit.max / 100));
  }

  /** Spends one token of the session's bucket; throws 429 with Retry-After when it is empty. */
  async take(db: Db, sessionId: string): Promise<void> {
    const now = Date.now();
    const held = this.held.get(sessionId);
    if (held && held.tokens >= 1 && now - held.grantedAt < this.limit.timeWindowSeconds * 1000) {
      held.tokens -= 1;
      return;
    }
    this.held.delete(sessionId);
    const { max, timeWindowSeconds } = this.limit;
    const available = sql<number>`least(${max}::float8, b.tokens
      + greatest(0, extract(epoch from (now() - b.updated_at)))::float8 * ${max}::float8 / ${timeWindowSeconds}::float8)`;
    const granted = sql<number>`case when ${available} >= 1 then least(${this.grant}, floor(${available}))::int else 0 end`;
    const { rows } = await sql<{ tokens: number; granted: number }>`
      insert into session_rate_buckets as b (session_id, tokens, granted, updated_at)
      values (${sessionId}, ${max - this.grant}, ${this.grant}, now())
      on conflict (session_id) do update
        set tokens = ${available} - ${granted}, granted = ${granted}, updated_at = now()
      returning tokens, granted`.execute(db);
    const row = rows[0]!;
    this.prune(db, now);
    if (row.granted < 1) {
      const msPerToken = (timeWindowSeconds * 1000) / max;
      const retryAfterSeconds = Math.max(1, Math.ceil(((1 - row.tokens) * msPerToken) / 1000));
      throw new ApiError(
        "TOO_MANY_REQUESTS",
        `Rate limit exceeded: at most ${max} requests per ${timeWindowSeconds} s per session`,
        { retryAfterSeconds },
        { "Retry-After": String(retryAfterSeconds) },
      );
    }
    if (row.granted > 1) {
      this.held.set(sessionId, { tokens: row.granted - 1, grantedAt: now });
      if (this.held.size > MAX_HELD_SESSIONS) this.held.delete(this.held.keys().next().value!);
    }
  }

  /** Now and then, deletes the buckets untouched for a window (full again by then). */
  private prune(db: Db, now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    void db
      .deleteFrom("sessionRateBuckets")
      .where("updatedAt", "<", sql<string>`now() - make_interval(secs => ${this.limit.timeWindowSeconds})`)
      .execute()
      .catch(() => {});
  }
}

const limiters = new WeakMap<Config, SessionRateLimiter | null>();

/** The limiter of a configuration (PLATFORM_SESSION_RATE_LIMIT), null when it is off. */
export function sessionRateLimiterOf(config: Config): SessionRateLimiter | null {
  if (!limiters.has(config)) {
    limiters.set(config, config.sessionRateLimit ? new SessionRateLimiter(config.sessionRateLimit) : null);
  }
  return limiters.get(config)!;
}
