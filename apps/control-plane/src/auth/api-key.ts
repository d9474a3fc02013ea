/**
 * API keys: 256 random bits, shown once, stored as a SHA-256 hash with a short display start.
 * A key may expire, may have a token-bucket rate limit (rateLimitMax requests per
 * rateLimitTimeWindow, refilled continuously) and a usage budget (`remaining`, reset to
 * refillAmount every refillInterval). Both are updated with one atomic UPDATE each, so several
 * control planes behind a load balancer share the same limits.
 */
import { sql } from "kysely";
import type { ServiceContext } from "../context.ts";
import { newId, randomToken, sha256Hex } from "../crypto/ids.ts";
import type { ApiKey } from "../db/schema.ts";
import { ApiError } from "../errors.ts";

export interface ApiKeyOptions {
  name: string;
  userId: string;
  organizationId: string;
  prefix?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  expiresInSeconds?: number | undefined;
  rateLimitEnabled?: boolean | undefined;
  rateLimitTimeWindowSeconds?: number | undefined;
  rateLimitMax?: number | undefined;
  remaining?: number | undefined;
  refillAmount?: number | undefined;
  refillIntervalSeconds?: number | undefined;
}

const DEFAULT_RATE_LIMIT = { timeWindowSeconds: 60, max: 60 };

export async function createApiKey(ctx: ServiceContext, options: ApiKeyOptions) {
  const secret = randomToken(32);
  const key = options.prefix ? `${options.prefix}_${secret}` : secret;
  const now = ctx.now();
  const rateLimitEnabled = options.rateLimitEnabled ?? false;
  const row = await ctx.db
    .insertInto("apiKeys")
    .values({
      apiKeyId: newId(),
      userId: options.userId,
      organizationId: options.organizationId,
      name: options.name,
      prefix: options.prefix ?? null,
      start: key.slice(0, (options.prefix?.length ?? 0) + 6),
      keyHash: sha256Hex(key),
      metadata: JSON.stringify(options.metadata ?? {}),
      expiresAt: options.expiresInSeconds
        ? new Date(now.getTime() + options.expiresInSeconds * 1000).toISOString()
        : null,
      rateLimitEnabled,
      rateLimitTimeWindowMs: rateLimitEnabled
        ? (options.rateLimitTimeWindowSeconds ?? DEFAULT_RATE_LIMIT.timeWindowSeconds) * 1000
        : null,
      rateLimitMax: rateLimitEnabled ? (options.rateLimitMax ?? DEFAULT_RATE_LIMIT.max) : null,
      bucketTokens: null,
      bucketUpdatedAt: null,
      remaining: options.remaining ?? null,
      refillAmount: options.refillAmount ?? null,
      refillIntervalMs: options.refillIntervalSeconds ? options.refillIntervalSeconds * 1000 : null,
      lastRefillAt: null,
      lastUsedAt: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, key };
}

/** The stored form of a presented secret: what `apiKeys.keyHash` is looked up by. */
export function apiKeyHash(presented: string): string {
  return sha256Hex(presented);
}

/**
 * Uses the key row looked up by apiKeyHash (with whatever the caller joined to it): throws 401
 * when there is none or it expired, 429 over a limit, else spends one use and returns the row.
 */
export async function useApiKey<K extends ApiKey>(ctx: ServiceContext, key: K | undefined): Promise<K> {
  if (!key) throw new ApiError("UNAUTHORIZED", "Invalid API key");
  if (key.expiresAt && new Date(key.expiresAt) <= ctx.now()) {
    throw new ApiError("UNAUTHORIZED", "API key expired");
  }
  if (key.remaining !== null) await spendUsage(ctx, key);
  if (hasRateLimit(key)) await takeToken(ctx, key);
  return key;
}

const hasRateLimit = (key: ApiKey) =>
  Boolean(key.rateLimitEnabled && key.rateLimitMax && key.rateLimitTimeWindowMs);

/** Whether useApiKey writes on each use (a usage budget or a rate limit): such a key is never cached. */
export const spendsOnUse = (key: ApiKey) => key.remaining !== null || hasRateLimit(key);

async function spendUsage(ctx: ServiceContext, key: ApiKey): Promise<void> {
  const refillDue = sql<boolean>`(refill_amount is not null and refill_interval_ms is not null
    and now() - coalesce(last_refill_at, created_at) >= refill_interval_ms * interval '1 millisecond')`;
  const spent = await ctx.db
    .updateTable("apiKeys")
    .set({
      remaining: sql`case when ${refillDue} then refill_amount - 1 else remaining - 1 end`,
      lastRefillAt: sql`case when ${refillDue} then now() else last_refill_at end`,
    })
    .where("apiKeyId", "=", key.apiKeyId)
    .where(sql<boolean>`(case when ${refillDue} then refill_amount else remaining end) >= 1`)
    .returning("remaining")
    .executeTakeFirst();
  if (!spent) {
    const headers: Record<string, string> = {};
    if (key.refillIntervalMs) {
      const since = key.lastRefillAt ?? key.createdAt;
      const waitMs = new Date(since).getTime() + key.refillIntervalMs - ctx.now().getTime();
      headers["Retry-After"] = String(Math.max(1, Math.ceil(waitMs / 1000)));
    }
    throw new ApiError("TOO_MANY_REQUESTS", "API key usage limit reached", { reason: "remaining" }, headers);
  }
}

async function takeToken(ctx: ServiceContext, key: ApiKey): Promise<void> {
  const available = sql<number>`least(rate_limit_max::float8, coalesce(bucket_tokens, rate_limit_max::float8)
    + extract(epoch from (now() - coalesce(bucket_updated_at, now())))::float8 * 1000
      * rate_limit_max / rate_limit_time_window_ms)`;
  const taken = await ctx.db
    .updateTable("apiKeys")
    .set({ bucketTokens: sql`${available} - 1`, bucketUpdatedAt: sql`now()`, lastUsedAt: sql`now()` })
    .where("apiKeyId", "=", key.apiKeyId)
    .where(sql<boolean>`${available} >= 1`)
    .returning("bucketTokens")
    .executeTakeFirst();
  if (!taken) {
    const msPerToken = key.rateLimitTimeWindowMs! / key.rateLimitMax!;
    const missing = 1 - Math.max(0, key.bucketTokens ?? 0);
    const retryAfterSeconds = Math.max(1, Math.ceil((missing * msPerToken) / 1000));
    throw new ApiError(
      "TOO_MANY_REQUESTS",
      `Rate limit exceeded: at most ${key.rateLimitMax} requests per ${key.rateLimitTimeWindowMs! / 1000} s`,
      { retryAfterSeconds },
      { "Retry-After": String(retryAfterSeconds) },
    );
  }
}
