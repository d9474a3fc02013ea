/**
 * The per-session rate limit held in PostgreSQL (issue 40 item 1): two limiters standing for two
 * control planes on one database spend one bucket, whichever of them a request reaches; a grant
 * of several tokens is spent from memory and never doubles what the bucket gives.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../errors.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { SessionRateLimiter } from "./session-rate-limit.ts";

/** Takes `count` tokens through the limiters in turn; answers how many were refused per limiter. */
async function spend(platform: TestPlatform, limiters: SessionRateLimiter[], session: string, count: number) {
  const refused = limiters.map(() => 0);
  for (let i = 0; i < count; i++) {
    const index = i % limiters.length;
    try {
      await limiters[index]!.take(platform.ctx.db, session);
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(429);
      refused[index]!++;
    }
  }
  return refused;
}

describe("the per-session rate limit across control planes", () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(() => platform?.close());

  it("gives a session one bucket however its requests are spread over two copies", async () => {
    // An hour's window: the bucket refills by one token every two minutes, never during the test.
    const limit = { max: 30, timeWindowSeconds: 3600 };
    const copies = [new SessionRateLimiter(limit), new SessionRateLimiter(limit)];
    const refused = await spend(platform, copies, "session-a", 40);
    // Per copy, 30 each would have let all 40 through.
    expect(refused.reduce((sum, n) => sum + n, 0)).toBe(10);
    expect(refused).toEqual([5, 5]);
    // Another session has its own bucket; a third copy sees the first session's empty one.
    await expect(copies[0]!.take(platform.ctx.db, "session-b")).resolves.toBeUndefined();
    const third = new SessionRateLimiter(limit);
    await expect(third.take(platform.ctx.db, "session-a")).rejects.toMatchObject({
      status: 429,
      message: "Rate limit exceeded: at most 30 requests per 3600 s per session",
    });
  });

  it("grants several tokens at a time to a copy, and the copies together spend at most the bucket", async () => {
    // Ten hours' window: a token refills per minute.
    const limit = { max: 600, timeWindowSeconds: 36_000 };
    const copies = [
      new SessionRateLimiter(limit),
      new SessionRateLimiter(limit),
      new SessionRateLimiter(limit),
    ];
    expect(copies[0]!.grant).toBe(6);
    const refused = await spend(platform, copies, "session-c", 900);
    const allowed = 900 - refused.reduce((sum, n) => sum + n, 0);
    // The bucket gives 600 (a copy spends the rest of its grant before asking again), not 900.
    expect(allowed).toBeGreaterThanOrEqual(600);
    expect(allowed).toBeLessThanOrEqual(601);
    const row = await platform.ctx.db
      .selectFrom("sessionRateBuckets")
      .selectAll()
      .where("sessionId", "=", "session-c")
      .executeTakeFirstOrThrow();
    expect(row.tokens).toBeLessThan(1);
  });

  it("answers Retry-After from the bucket's refill", async () => {
    const limit = { max: 2, timeWindowSeconds: 60 };
    const copy = new SessionRateLimiter(limit);
    await copy.take(platform.ctx.db, "session-d");
    await copy.take(platform.ctx.db, "session-d");
    const error = (await copy.take(platform.ctx.db, "session-d").catch((e) => e)) as ApiError;
    expect(error.status).toBe(429);
    const retryAfter = Number(error.headers["Retry-After"]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
  });
});
