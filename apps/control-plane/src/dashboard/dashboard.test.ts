/**
 * The dashboard's page and its cookie sessions (issue 29), without a browser: `/` serves the
 * built page under a strict CSP with no inline script and says whether a user exists; login
 * sets an HttpOnly SameSite=Strict cookie (Secure only behind TLS: PLATFORM_URL https or a
 * trusted proxy's X-Forwarded-Proto), which authenticates queries and, with its CSRF token,
 * mutations (403 without); Bearer tokens and API keys never need the token; logout ends the
 * session on the server; the cookie spends the session's rate limit like its Bearer token.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDashboard } from "../../../../scripts/build-dashboard.mjs";
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE } from "../auth/cookie-session.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let server: ReturnType<typeof serve>;
let base: string;

beforeAll(async () => {
  await buildDashboard();
  platform = await startTestPlatform({
    PLATFORM_TRUSTED_PROXIES: "127.0.0.1",
    PLATFORM_SESSION_RATE_LIMIT: "40/600",
  });
  server = serve({ fetch: platform.app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await platform?.close();
});

/** name=value of each Set-Cookie, and its attributes. */
function cookiesOf(headers: Headers): Map<string, { value: string; attributes: string[] }> {
  const cookies = new Map<string, { value: string; attributes: string[] }>();
  for (const line of headers.getSetCookie()) {
    const [pair, ...attributes] = line.split(";").map((part) => part.trim());
    const [name, value] = [pair!.slice(0, pair!.indexOf("=")), pair!.slice(pair!.indexOf("=") + 1)];
    cookies.set(name, { value, attributes: attributes.map((a) => a.toLowerCase()) });
  }
  return cookies;
}

const login = (headers: Record<string, string> = {}) =>
  fetch(`${base}/api/auth.login`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ email: "owner@example.com", password: "correct-horse-battery" }),
  });

describe("the dashboard page", () => {
  it("is served at / under a strict CSP, with no inline script, in its first-registration mode until a user exists", async () => {
    const first = await platform.request("/");
    expect(first.status).toBe(200);
    const csp = first.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(first.headers.get("content-type")).toMatch(/^text\/html/);
    const html = String(first.body);
    expect(html).toContain('data-first-run="true"');
    // Every script comes from this origin by a relative URL; none is inline.
    for (const script of html.match(/<script[^>]*>[^<]*<\/script>/g) ?? []) {
      expect(script).toMatch(/src="\/dashboard\/app\.js\?v=[0-9a-f]+"/);
      expect(script).toMatch(/><\/script>$/);
    }
    expect(html).not.toMatch(/https?:\/\//);

    const js = await platform.request("/dashboard/app.js");
    expect(js.status).toBe(200);
    const gzipped = await platform.app.request("/dashboard/app.js", {
      headers: { "accept-encoding": "gzip" },
    });
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    expect((await gzipped.arrayBuffer()).byteLength).toBeLessThan(String(js.body).length / 2);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(js.headers.get("content-security-policy")).toBe(csp);
    expect((await platform.request("/dashboard/other.js")).status).toBe(404);
    // The API's unknown paths still answer as the API does.
    expect((await platform.request("/api/nothing.here")).status).toBe(404);

    await platform.registerOwner();
    expect(String((await platform.request("/")).body)).toContain('data-first-run="false"');
  });
});

describe("cookie sessions", () => {
  it("login sets an HttpOnly SameSite=Strict cookie, Secure only when a trusted proxy says https", async () => {
    const plain = cookiesOf((await login()).headers);
    const session = plain.get(SESSION_COOKIE)!;
    const csrf = plain.get(CSRF_COOKIE)!;
    expect(session.attributes).toEqual(expect.arrayContaining(["httponly", "samesite=strict", "path=/"]));
    expect(session.attributes).not.toContain("secure");
    expect(csrf.attributes).toContain("samesite=strict");
    expect(csrf.attributes).not.toContain("httponly");

    const proxied = cookiesOf((await login({ "x-forwarded-proto": "https" })).headers);
    expect(proxied.get(SESSION_COOKIE)!.attributes).toContain("secure");
    expect(proxied.get(CSRF_COOKIE)!.attributes).toContain("secure");
  });

  it("the cookie authenticates queries; a mutation needs the CSRF token (403 without), Bearer and API keys never", async () => {
    const response = await login();
    const cookies = cookiesOf(response.headers);
    const { token, user } = (await response.json()) as { token: string; user: { organizationId: string } };
    const cookie = `${SESSION_COOKIE}=${cookies.get(SESSION_COOKIE)!.value}; ${CSRF_COOKIE}=${cookies.get(CSRF_COOKIE)!.value}`;
    const csrfToken = cookies.get(CSRF_COOKIE)!.value;

    const listed = await fetch(`${base}/api/project.all`, { headers: { cookie } });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([]);

    const create = (headers: Record<string, string>, name: string) =>
      fetch(`${base}/api/project.create`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ name }),
      });
    const refused = await create({ cookie }, "Refused");
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error.data.fields).toEqual([CSRF_HEADER]);
    expect((await create({ cookie, [CSRF_HEADER]: "forged-token" }, "Forged")).status).toBe(403);
    // The token of another session does not fit this one.
    const other = cookiesOf((await login()).headers).get(CSRF_COOKIE)!.value;
    expect((await create({ cookie, [CSRF_HEADER]: other }, "Other")).status).toBe(403);
    // tRPC's form of the procedure is a mutation too.
    const trpc = await fetch(`${base}/api/trpc/project.create`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify({ name: "Trpc" }),
    });
    expect(trpc.status).toBe(403);
    expect((await create({ cookie, [CSRF_HEADER]: csrfToken }, "With token")).status).toBe(200);

    // Bearer tokens and API keys, as before: no CSRF token, even beside a cookie.
    expect((await create({ authorization: `Bearer ${token}` }, "Bearer")).status).toBe(200);
    expect(
      (await create({ authorization: `Bearer ${token}`, cookie: `${SESSION_COOKIE}=x` }, "Both")).status,
    ).toBe(200);
    const key = await platform.mutateOk(
      "user.createApiKey",
      { name: "script", metadata: { organizationId: user.organizationId } },
      { token },
    );
    expect((await create({ "x-api-key": key.key }, "Api key")).status).toBe(200);

    const names = (await platform.query("project.all", {}, { token })).body.map((p: any) => p.name).sort();
    expect(names).toEqual(["Api key", "Bearer", "Both", "With token"]);
    // Nothing in the log says the cookie's token.
    expect(platform.logLines.join("\n")).not.toContain(cookies.get(SESSION_COOKIE)!.value);
  });

  it("logout ends the session on the server and clears the cookies", async () => {
    const cookies = cookiesOf((await login()).headers);
    const cookie = `${SESSION_COOKIE}=${cookies.get(SESSION_COOKIE)!.value}`;
    const out = await fetch(`${base}/api/auth.logout`, {
      method: "POST",
      headers: { cookie, [CSRF_HEADER]: cookies.get(CSRF_COOKIE)!.value },
    });
    expect(out.status).toBe(200);
    const cleared = cookiesOf(out.headers);
    expect(cleared.get(SESSION_COOKIE)).toMatchObject({ value: "" });
    expect(cleared.get(SESSION_COOKIE)!.attributes).toContain("max-age=0");
    expect(cleared.get(CSRF_COOKIE)!.attributes).toContain("max-age=0");
    // The old cookie, replayed, is refused: the session row is revoked, not only the cookie.
    expect((await fetch(`${base}/api/project.all`, { headers: { cookie } })).status).toBe(401);
    // The live log stream reads the cookie too (and refuses the revoked one).
    expect((await fetch(`${base}/api/deployment.logs?deploymentId=x`, { headers: { cookie } })).status).toBe(
      401,
    );
  });

  it("a session's cookie and its Bearer token spend one rate-limit bucket", async () => {
    const response = await login();
    const cookie = `${SESSION_COOKIE}=${cookiesOf(response.headers).get(SESSION_COOKIE)!.value}`;
    const { token } = (await response.json()) as { token: string };
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      statuses.push((await fetch(`${base}/api/project.all`, { headers: { cookie } })).status);
      statuses.push(
        (await fetch(`${base}/api/project.all`, { headers: { authorization: `Bearer ${token}` } })).status,
      );
    }
    // 40 per window: the 41st request of the pair of credentials is refused, whichever it is.
    expect(statuses.slice(0, 40).every((status) => status === 200)).toBe(true);
    expect(statuses.slice(40).every((status) => status === 429)).toBe(true);
  });
});

describe("Secure behind TLS", () => {
  it("PLATFORM_URL https makes the cookies Secure", async () => {
    const tls = await startTestPlatform({ PLATFORM_URL: "https://platform.example.com" });
    try {
      await tls.registerOwner();
      const response = await tls.app.request("/api/auth.login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "owner@example.com", password: "correct-horse-battery" }),
      });
      const cookies = cookiesOf(response.headers);
      expect(cookies.get(SESSION_COOKIE)!.attributes).toContain("secure");
      expect(cookies.get(CSRF_COOKIE)!.attributes).toContain("secure");
    } finally {
      await tls.close();
    }
  });
});
