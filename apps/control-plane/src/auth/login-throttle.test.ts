/**
 * Login throttling (issue 10 finding 7, issue 22 finding 7): per (account, client address) pair
 * with exponential backoff, per client address, and per account only for addresses that have
 * not signed in to it lately, counted in the database, over sequential, concurrent and batched
 * attempts; the client address is taken from the socket unless the peer is a trusted proxy.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import {
  LOGIN_BACKOFF_SECONDS,
  LOGIN_MAX_ATTEMPTS,
  LOGIN_PAIR_FREE_ATTEMPTS,
  LOGIN_TRUSTED_DAYS,
  pairBackoffSeconds,
} from "./login-throttle.ts";

const PASSWORD = "correct-horse-battery";
const FREE = LOGIN_PAIR_FREE_ATTEMPTS;

describe("login throttling", () => {
  let platform: TestPlatform;
  let owner: Session;
  let member: Session;

  const login = (email: string, password: string) => platform.mutate("auth.login", { email, password });
  /** Moves every counter's time back by `seconds`, as if that much time had passed. */
  const age = async (seconds: number) => {
    const rows = await platform.ctx.db.selectFrom("loginThrottle").selectAll().execute();
    for (const row of rows) {
      const earlier = new Date(new Date(row.windowStartedAt).getTime() - seconds * 1000).toISOString();
      await platform.ctx.db
        .updateTable("loginThrottle")
        .set({ windowStartedAt: earlier })
        .where("key", "=", row.key)
        .execute();
    }
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    member = await platform.addMember(owner, "member", "throttled@example.com");
  });
  afterAll(() => platform.close());
  // In-process requests share one client address: each test starts with no counts.
  beforeEach(async () => {
    await platform.ctx.db.deleteFrom("loginThrottle").execute();
  });

  it("backs off exponentially per (account, address) pair, even for the right password", async () => {
    expect([FREE - 1, FREE, FREE + 1, FREE + 2, FREE + 30].map(pairBackoffSeconds)).toEqual([
      0,
      LOGIN_BACKOFF_SECONDS.first,
      LOGIN_BACKOFF_SECONDS.first * 2,
      LOGIN_BACKOFF_SECONDS.first * 4,
      LOGIN_BACKOFF_SECONDS.max,
    ]);
    for (let i = 0; i < FREE; i++) expect((await login(member.user.email, `wrong-${i}`)).status).toBe(401);
    const limited = await login(member.user.email, "wrong-again");
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe("TOO_MANY_REQUESTS");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(LOGIN_BACKOFF_SECONDS.first - 5);
    expect(retryAfter).toBeLessThanOrEqual(LOGIN_BACKOFF_SECONDS.first);
    expect(limited.body.error.data.retryAfterSeconds).toBe(retryAfter);
    expect((await login(member.user.email, PASSWORD)).status).toBe(429);
    // Once the wait is over one more attempt is checked, then the wait doubles.
    await age(LOGIN_BACKOFF_SECONDS.first + 1);
    expect((await login(member.user.email, "wrong-after-wait")).status).toBe(401);
    const doubled = await login(member.user.email, PASSWORD);
    expect(doubled.status).toBe(429);
    expect(Number(doubled.headers.get("retry-after"))).toBeGreaterThan(LOGIN_BACKOFF_SECONDS.first * 2 - 5);
    // An unknown email is throttled the same way, so the answers say nothing about accounts.
    for (let i = 0; i < FREE; i++) await login("nobody@example.com", "x");
    const unknown = await login("nobody@example.com", "x");
    expect(unknown.status).toBe(429);
    expect(unknown.body.error.message).toMatch(/^Too many login attempts: try again in \d+ s$/);
    // Other accounts are not locked out; once the wait is over the right password works.
    expect((await login(owner.user.email, PASSWORD)).status).toBe(200);
    await age(LOGIN_BACKOFF_SECONDS.first * 2 + 1);
    expect((await login(member.user.email, PASSWORD)).status).toBe(200);
  });

  it("resets a pair's count after a successful login", async () => {
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < FREE - 1; i++) {
        expect((await login(member.user.email, "wrong")).status).toBe(401);
      }
      expect((await login(member.user.email, PASSWORD)).status).toBe(200);
    }
  });

  it("counts 100 concurrent attempts: only the free ones are checked", async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => login(member.user.email, `concurrent-${i}`)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(FREE);
    expect(statuses.filter((status) => status === 429)).toHaveLength(100 - FREE);
    expect((await login(member.user.email, PASSWORD)).status).toBe(429);
  });

  it("counts every call of a tRPC batch", async () => {
    const calls = 20;
    const paths = Array.from({ length: calls }, () => "auth.login").join(",");
    const inputs = Object.fromEntries(
      Array.from({ length: calls }, (_, i) => [
        String(i),
        { email: member.user.email, password: `batch-${i}` },
      ]),
    );
    const batch = await platform.request(`/api/trpc/${paths}?batch=1`, {
      method: "POST",
      body: JSON.stringify(inputs),
    });
    expect(batch.status).toBe(207);
    const codes = (batch.body as any[]).map((result) => result.error?.json?.data?.code);
    expect(codes.slice(0, FREE)).toEqual(Array(FREE).fill("UNAUTHORIZED"));
    expect(new Set(codes.slice(FREE))).toEqual(new Set(["TOO_MANY_REQUESTS"]));
    expect(Number(batch.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await login(member.user.email, PASSWORD)).status).toBe(429);
  });

  it("limits one client address to 50 attempts across accounts; successes do not use it up", async () => {
    // Successful logins from the address do not count against it.
    for (let i = 0; i < 5; i++) expect((await login(owner.user.email, PASSWORD)).status).toBe(200);
    const answers: number[] = [];
    for (let i = 0; i < LOGIN_MAX_ATTEMPTS.address; i++) {
      answers.push((await login(`spray-${i % 10}@example.com`, "wrong")).status);
    }
    expect(new Set(answers)).toEqual(new Set([401]));
    const limited = await login("fresh-account@example.com", "wrong");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await login(owner.user.email, PASSWORD)).status).toBe(429);
  });

  it("counts guesses of currentPassword in user.update as login attempts", async () => {
    const session = await login(member.user.email, PASSWORD);
    const token = session.body.token;
    for (let i = 0; i < FREE; i++) {
      const wrong = await platform.mutate(
        "user.update",
        { password: "a-new-password", currentPassword: `guess-${i}` },
        { token },
      );
      expect(wrong.status).toBe(400);
    }
    const limited = await platform.mutate(
      "user.update",
      { password: "a-new-password", currentPassword: PASSWORD },
      { token },
    );
    expect(limited.status).toBe(429);
  });

  it("keeps the counts in the database, where every control plane on it finds them", async () => {
    await login(member.user.email, "wrong");
    const rows = await platform.ctx.db.selectFrom("loginThrottle").selectAll().orderBy("key").execute();
    expect(rows.map((row) => [row.key, row.attempts])).toEqual([
      ["account:throttled@example.com", 1],
      ["address:unknown", 1],
      ["pair:throttled@example.com unknown", 1],
    ]);
  });
});

/** The platform over real HTTP behind a trusted proxy: X-Forwarded-For names the client. */
async function behindProxy() {
  const platform = await startTestPlatform({ PLATFORM_TRUSTED_PROXIES: "127.0.0.1" });
  const server = serve({ fetch: platform.app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  const login = (from: string, email: string, password: string) =>
    fetch(`http://127.0.0.1:${port}/api/auth.login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": from },
      body: JSON.stringify({ email, password }),
    });
  return {
    platform,
    login,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await platform.close();
    },
  };
}

describe("account lockout is no denial of service (issue 22 finding 7)", () => {
  let http: Awaited<ReturnType<typeof behindProxy>>;
  let owner: Session;
  beforeAll(async () => {
    http = await behindProxy();
    owner = await http.platform.registerOwner();
  });
  afterAll(() => http?.close());
  beforeEach(async () => {
    await http.platform.ctx.db.deleteFrom("loginThrottle").execute();
  });

  it("ten wrong passwords from one address do not lock the owner out from another", async () => {
    for (let i = 0; i < 10; i++) {
      expect([401, 429]).toContain((await http.login("203.0.113.66", owner.user.email, `guess-${i}`)).status);
    }
    expect((await http.login("203.0.113.66", owner.user.email, PASSWORD)).status).toBe(429);
    expect((await http.login("198.51.100.20", owner.user.email, PASSWORD)).status).toBe(200);
  });

  it("never locks out an address that signed in within 30 days, whatever other addresses try", async () => {
    const home = "192.0.2.10";
    expect((await http.login(home, owner.user.email, PASSWORD)).status).toBe(200);
    // Guessing spread over many addresses: each pair stays free, the account's count of
    // attempts from new addresses runs out.
    for (let i = 0; i < 10; i++) {
      expect((await http.login(`203.0.113.${100 + i}`, owner.user.email, "guess")).status).toBe(401);
    }
    await http.platform.ctx.db
      .updateTable("loginThrottle")
      .set({ attempts: LOGIN_MAX_ATTEMPTS.accountFromNewAddresses })
      .where("key", "=", `account:${owner.user.email}`)
      .execute();
    expect((await http.login("203.0.113.200", owner.user.email, "guess")).status).toBe(429);
    expect((await http.login("203.0.113.201", owner.user.email, PASSWORD)).status).toBe(429);
    // The address that signed in before is not refused.
    expect((await http.login(home, owner.user.email, PASSWORD)).status).toBe(200);
    // Trust ends LOGIN_TRUSTED_DAYS days after the last success.
    await http.platform.ctx.db
      .updateTable("loginThrottle")
      .set({ windowStartedAt: new Date(Date.now() - (LOGIN_TRUSTED_DAYS + 1) * 86_400_000).toISOString() })
      .where("key", "like", "trusted:%")
      .execute();
    expect((await http.login(home, owner.user.email, PASSWORD)).status).toBe(429);
  });

  it("an address trusted for one account is not trusted for another", async () => {
    const member = await http.platform.addMember(owner, "member", "second@example.com");
    const home = "192.0.2.11";
    expect((await http.login(home, owner.user.email, PASSWORD)).status).toBe(200);
    await http.platform.ctx.db
      .insertInto("loginThrottle")
      .values({
        key: `account:${member.user.email}`,
        attempts: LOGIN_MAX_ATTEMPTS.accountFromNewAddresses,
        windowStartedAt: new Date().toISOString(),
      })
      .execute();
    expect((await http.login(home, member.user.email, PASSWORD)).status).toBe(429);
  });
});

describe("the client address of login throttling", () => {
  async function overHttp(env: Record<string, string>) {
    const platform = await startTestPlatform(env);
    const server = serve({ fetch: platform.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    const login = (forwardedFor: string) =>
      fetch(`http://127.0.0.1:${port}/api/auth.login`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
        body: JSON.stringify({ email: "someone@example.com", password: "wrong" }),
      });
    const addressKeys = async () =>
      (await platform.ctx.db.selectFrom("loginThrottle").select("key").orderBy("key").execute())
        .map((row) => row.key)
        .filter((key) => key.startsWith("address:"));
    return {
      login,
      addressKeys,
      close: async () => {
        await new Promise((resolve) => server.close(resolve));
        await platform.close();
      },
    };
  }

  it("is the socket's peer: X-Forwarded-For is ignored by default", async () => {
    const http = await overHttp({});
    try {
      expect((await http.login("203.0.113.9")).status).toBe(401);
      expect((await http.login("198.51.100.7")).status).toBe(401);
      expect(await http.addressKeys()).toEqual(["address:127.0.0.1"]);
    } finally {
      await http.close();
    }
  });

  it("is the nearest untrusted X-Forwarded-For hop when the peer is a trusted proxy", async () => {
    const http = await overHttp({ PLATFORM_TRUSTED_PROXIES: "127.0.0.1,10.0.0.0/8" });
    try {
      // The client forged the first entry; the trusted proxies appended the rest.
      expect((await http.login("192.0.2.66, 203.0.113.9, 10.1.2.3")).status).toBe(401);
      expect((await http.login("2001:db8:1:2:aaaa::1")).status).toBe(401);
      expect((await http.login("2001:db8:1:2:bbbb::2")).status).toBe(401);
      expect(await http.addressKeys()).toEqual(["address:2001:db8:1:2::/64", "address:203.0.113.9"]);
    } finally {
      await http.close();
    }
  });

  it("refuses a bad PLATFORM_TRUSTED_PROXIES naming it", async () => {
    await expect(startTestPlatform({ PLATFORM_TRUSTED_PROXIES: "10.0.0.0/40" })).rejects.toThrow(
      /PLATFORM_TRUSTED_PROXIES/,
    );
  });
});
