/**
 * Cookie sessions of the web dashboard (issue 29): auth.login and auth.register also set the
 * session token as an HttpOnly, SameSite=Strict cookie (Secure when PLATFORM_URL is https or a
 * trusted proxy says the request was), with a CSRF token beside it in a cookie the page reads.
 * A request that authenticates by the cookie alone must send that token in X-CSRF-Token on
 * every mutation (any method but GET, HEAD and OPTIONS), else 403. Bearer tokens and API keys
 * are read first and never checked for it. The CSRF token is an HMAC of the session id under the
 * session signing key: a token planted in the cookie by another site cannot match.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { fromTrustedProxy } from "./client-address.ts";

export const SESSION_COOKIE = "platform_session";
export const CSRF_COOKIE = "platform_csrf";
export const CSRF_HEADER = "x-csrf-token";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** What authenticate() reads of a request. */
export interface RequestCredentials {
  authorization?: string | undefined;
  apiKey?: string | undefined;
  /** The session cookie's token, read only when neither header is sent. */
  sessionCookie?: string | undefined;
  csrfToken?: string | undefined;
  /** True for a method that may change something (the CSRF check applies). */
  unsafe?: boolean;
}

export function credentialsOf(request: Request): RequestCredentials {
  return {
    authorization: request.headers.get("authorization") ?? undefined,
    apiKey: request.headers.get("x-api-key") ?? undefined,
    sessionCookie: cookieOf(request.headers.get("cookie"), SESSION_COOKIE),
    csrfToken: request.headers.get(CSRF_HEADER) ?? undefined,
    unsafe: !SAFE_METHODS.has(request.method.toUpperCase()),
  };
}

function cookieOf(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const separator = part.indexOf("=");
    if (separator < 0 || part.slice(0, separator).trim() !== name) continue;
    const value = part.slice(separator + 1).trim();
    return value === "" ? undefined : value;
  }
  return undefined;
}

export function csrfTokenOf(ctx: ServiceContext, sessionId: string): string {
  return createHmac("sha256", ctx.sessionSigningKey).update(`csrf:${sessionId}`).digest("base64url");
}

/** Throws 403 unless the request's X-CSRF-Token is the session's. */
export function checkCsrf(ctx: ServiceContext, sessionId: string, presented: string | undefined): void {
  const expected = Buffer.from(csrfTokenOf(ctx, sessionId));
  const given = Buffer.from(presented ?? "");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new ApiError(
      "FORBIDDEN",
      `A request authenticated by the session cookie must send its CSRF token in ${CSRF_HEADER} (the ${CSRF_COOKIE} cookie) on every mutation`,
      { fields: [CSRF_HEADER] },
    );
  }
}

/** Sets and clears the cookies on the answer of one request (auth.login, auth.register, auth.logout). */
export interface SessionCookies {
  start(session: { token: string; sessionId: string; expiresAt: string }): void;
  end(): void;
}

export function sessionCookiesOf(c: Context, ctx: ServiceContext): SessionCookies {
  const secure = isSecureRequest(c, ctx);
  const attributes = (maxAge: number) =>
    `Path=/; Max-Age=${maxAge}; SameSite=Strict${secure ? "; Secure" : ""}`;
  return {
    start: ({ token, sessionId, expiresAt }) => {
      const maxAge = Math.max(0, Math.floor((Date.parse(expiresAt) - ctx.now().getTime()) / 1000));
      c.header("Set-Cookie", `${SESSION_COOKIE}=${token}; ${attributes(maxAge)}; HttpOnly`, { append: true });
      c.header("Set-Cookie", `${CSRF_COOKIE}=${csrfTokenOf(ctx, sessionId)}; ${attributes(maxAge)}`, {
        append: true,
      });
    },
    end: () => {
      c.header("Set-Cookie", `${SESSION_COOKIE}=; ${attributes(0)}; HttpOnly`, { append: true });
      c.header("Set-Cookie", `${CSRF_COOKIE}=; ${attributes(0)}`, { append: true });
    },
  };
}

/** https: PLATFORM_URL says so, or a trusted proxy (PLATFORM_TRUSTED_PROXIES) forwarded an https request. */
export function isSecureRequest(c: Context, ctx: ServiceContext): boolean {
  if (ctx.config.platformUrl?.startsWith("https:")) return true;
  if (!fromTrustedProxy(c, ctx.config.trustedProxies)) return false;
  const proto = c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return proto === "https";
}
