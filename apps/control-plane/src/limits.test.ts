/**
 * Issue 22 finding 8: a tRPC batch holds at most MAX_BATCH_CALLS calls, each call spends a
 * token of the session's bucket, and a slow client cannot hold a connection open with slow
 * headers or a slow body (over real sockets, with the server options main.ts uses).
 */
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";
import {
  BODY_TIMEOUT_MS,
  HEADERS_TIMEOUT_MS,
  HTTP_SERVER_OPTIONS,
  limitSlowBodies,
  MAX_BATCH_CALLS,
  SESSION_RATE_LIMIT,
} from "./limits.ts";
import { type Session, startTestPlatform, type TestPlatform } from "./testing/harness.ts";

const batch = (platform: TestPlatform, calls: number, token?: string) =>
  platform.request(
    `/api/trpc/${Array(calls).fill("project.all").join(",")}?batch=1&input=${encodeURIComponent("{}")}`,
    { method: "GET", ...(token ? { token } : {}) },
  );

describe("tRPC batches and the per-session rate limit", () => {
  let platform: TestPlatform;
  let owner: Session;
  /** A new session of the owner. */
  const newSession = async () =>
    (
      (await platform.mutate("auth.login", { email: owner.user.email, password: "correct-horse-battery" }))
        .body as { token: string }
    ).token;
  beforeAll(async () => {
    platform = await startTestPlatform({ PLATFORM_SESSION_RATE_LIMIT: "30/60" });
    owner = await platform.registerOwner();
  });
  afterAll(() => platform?.close());

  it("refuses a batch of more than MAX_BATCH_CALLS calls with a 400 naming the batch, running none", async () => {
    const response = await batch(platform, 1000, owner.token);
    expect(response.status).toBe(400);
    const errors = response.body as any[];
    expect(errors[0].error.json.data.fields).toEqual(["batch"]);
    expect(errors[0].error.json.message).toBe(
      `A batch holds at most ${MAX_BATCH_CALLS} calls; this one has 1000`,
    );
    // Nothing ran: the session's bucket is still full.
    const full = await batch(platform, MAX_BATCH_CALLS, owner.token);
    expect(full.status).toBe(200);
    expect(full.body).toHaveLength(MAX_BATCH_CALLS);
  });

  it("limits a session's requests with a token bucket, counting each call of a batch", async () => {
    const session = { token: await newSession() };
    const first = await batch(platform, MAX_BATCH_CALLS, session.token);
    expect(first.status).toBe(200);
    // 10 tokens left: a batch of 20 runs 10 calls and refuses the rest.
    const second = await batch(platform, MAX_BATCH_CALLS, session.token);
    expect(second.status).toBe(207);
    const codes = (second.body as any[]).map((result) => result.error?.json?.data?.code ?? "OK");
    expect(codes.filter((code) => code === "OK").length).toBeGreaterThanOrEqual(10);
    expect(codes.filter((code) => code === "OK").length).toBeLessThanOrEqual(11);
    expect(codes.slice(-5)).toEqual(Array(5).fill("TOO_MANY_REQUESTS"));
    const single = await platform.query("project.all", {}, { token: session.token });
    expect(single.status).toBe(429);
    expect(Number(single.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(single.body.error.message).toBe("Rate limit exceeded: at most 30 requests per 60 s per session");
    // Another session of the same user has its own bucket.
    expect((await platform.query("project.all", {}, { token: await newSession() })).status).toBe(200);
  });

  it("reads PLATFORM_SESSION_RATE_LIMIT: 600/60 by default, off, or a clear error", () => {
    const base = { PLATFORM_SECRET_KEY: Buffer.alloc(32, 1).toString("base64") };
    expect(loadConfig(base).sessionRateLimit).toEqual(SESSION_RATE_LIMIT);
    expect(SESSION_RATE_LIMIT).toEqual({ max: 600, timeWindowSeconds: 60 });
    expect(loadConfig({ ...base, PLATFORM_SESSION_RATE_LIMIT: "off" }).sessionRateLimit).toBeNull();
    expect(() => loadConfig({ ...base, PLATFORM_SESSION_RATE_LIMIT: "many" })).toThrow(
      /PLATFORM_SESSION_RATE_LIMIT/,
    );
  });
});

describe("slow clients over a real socket", () => {
  let platform: TestPlatform;
  let server: ReturnType<typeof serve>;
  let port: number;
  beforeAll(async () => {
    platform = await startTestPlatform();
    server = serve({
      fetch: platform.app.fetch,
      port: 0,
      hostname: "127.0.0.1",
      serverOptions: HTTP_SERVER_OPTIONS,
    });
    limitSlowBodies(server);
    await new Promise((resolve) => server.once("listening", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await platform?.close();
  });

  /** Writes `head`, then one byte every second; resolves with the seconds until the server closes. */
  function trickle(head: string, drip: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = connect(port, "127.0.0.1", () => socket.write(head));
      const timer = setInterval(() => socket.writable && socket.write(drip), 1000);
      const done = () => {
        clearInterval(timer);
        resolve((Date.now() - started) / 1000);
      };
      socket.on("close", done);
      socket.on("error", () => {});
      socket.setTimeout(40_000, () => {
        clearInterval(timer);
        socket.destroy();
        reject(new Error("the server kept the connection open for 40 s"));
      });
    });
  }

  it("closes connections whose headers or body trickle in, well within 20 s", async () => {
    const [headers, body] = await Promise.all([
      trickle("POST /api/auth.login HTTP/1.1\r\nHost: x\r\n", "X-A: b\r\n"),
      trickle(
        "POST /api/auth.login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
        " ",
      ),
    ]);
    expect(headers).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS / 1000 - 1);
    expect(headers).toBeLessThan(20);
    expect(body).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS / 1000 - 1);
    expect(body).toBeLessThan(20);
  }, 60_000);
});
