/**
 * The per-session rate limit (issue 22 finding 8): a token bucket per session, as API keys have
 * (auth/api-key.ts), of PLATFORM_SESSION_RATE_LIMIT requests (default SESSION_RATE_LIMIT)
 * refilled continuously over its window.
 * Every procedure call counts, each call of a tRPC batch too. Kept in memory: a request never
 * waits for a database write, and a session spread over several control planes gets at most
 * one bucket on each.
 */
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";
import { SESSION_RATE_LIMIT } from "../limits.ts";

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Oldest buckets are dropped past this many sessions (a dropped bucket starts full). */
const MAX_TRACKED_SESSIONS = 100_000;

export class SessionRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly limit: { max: number; timeWindowSeconds: number } = SESSION_RATE_LIMIT) {}

  /** Spends one token of the session's bucket; throws 429 with Retry-After when it is empty. */
  take(sessionId: string, now = Date.now()): void {
    const msPerToken = (this.limit.timeWindowSeconds * 1000) / this.limit.max;
    const bucket = this.buckets.get(sessionId) ?? { tokens: this.limit.max, updatedAt: now };
    const tokens = Math.min(this.limit.max, bucket.tokens + (now - bucket.updatedAt) / msPerToken);
    // Re-inserted so that the Map's order is the order of last use.
    this.buckets.delete(sessionId);
    if (tokens < 1) {
      this.buckets.set(sessionId, { tokens, updatedAt: now });
      const retryAfterSeconds = Math.max(1, Math.ceil(((1 - tokens) * msPerToken) / 1000));
      throw new ApiError(
        "TOO_MANY_REQUESTS",
        `Rate limit exceeded: at most ${this.limit.max} requests per ${this.limit.timeWindowSeconds} s per session`,
        { retryAfterSeconds },
        { "Retry-After": String(retryAfterSeconds) },
      );
    }
    this.buckets.set(sessionId, { tokens: tokens - 1, updatedAt: now });
    if (this.buckets.size > MAX_TRACKED_SESSIONS) {
      this.buckets.delete(this.buckets.keys().next().value!);
    }
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
