/**
 * The web dashboard (issue 29) at `/`: the single-page application that scripts/build-dashboard.mjs
 * bundles into dist/dashboard (index.html, app.js, app.css), served by this process with a strict
 * Content-Security-Policy (scripts and styles from this origin only, no inline script), gzip when
 * the browser takes it, and nothing loaded from elsewhere. The page is a client of the public
 * API under /api (relative URLs), signed in by the session cookie (auth/cookie-session.ts).
 * index.html's <html> says whether a user exists yet (data-first-run): the sign-in form's
 * other mode registers the first user, and asks for the set-up token (data-setup-token
 * "required") when the page was not asked for from this machine (auth/setup-token.ts).
 */
import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import type { Context, Hono } from "hono";
import { fromLoopback } from "../auth/client-address.ts";
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";

export const DASHBOARD_DIR = new URL("../../../../dist/dashboard/", import.meta.url);

export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": DASHBOARD_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

const ASSETS: Record<string, string> = {
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};

interface Asset {
  body: Buffer;
  gzipped: Buffer;
}

/** Files read once per process (a new build is seen on the next start). */
const cache = new Map<string, Promise<Asset>>();

function asset(file: string): Promise<Asset> {
  let found = cache.get(file);
  if (!found) {
    found = readFile(new URL(file, DASHBOARD_DIR)).then((body) => ({ body, gzipped: gzipSync(body) }));
    // A missing build is looked for again on the next request.
    found.catch(() => cache.delete(file));
    cache.set(file, found);
  }
  return found;
}

async function send(c: Context, file: string, type: string, transform?: (text: string) => string) {
  let loaded: Asset;
  try {
    loaded = await asset(file);
  } catch {
    throw new ApiError(
      "SERVICE_UNAVAILABLE",
      "The dashboard is not built: run `node scripts/build.mjs` (npm start does it)",
    );
  }
  let { body, gzipped } = loaded;
  if (transform) {
    body = Buffer.from(transform(body.toString("utf8")));
    gzipped = gzipSync(body);
  }
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    "Content-Type": type,
    Vary: "Accept-Encoding",
  };
  headers["Cache-Control"] = file === "index.html" ? "no-store" : "no-cache";
  if (/\bgzip\b/.test(c.req.header("accept-encoding") ?? "")) {
    headers["Content-Encoding"] = "gzip";
    return c.body(new Uint8Array(gzipped), 200, headers);
  }
  return c.body(new Uint8Array(body), 200, headers);
}

export function registerDashboardRoutes(app: Hono, ctx: ServiceContext): void {
  app.get("/", async (c) => {
    const anyUser = await ctx.db.selectFrom("users").select("userId").limit(1).executeTakeFirst();
    const setupToken = !anyUser && !fromLoopback(c, ctx.config.trustedProxies);
    return send(c, "index.html", "text/html; charset=utf-8", (html) =>
      html.replace(
        "<html ",
        `<html data-first-run="${anyUser ? "false" : "true"}" data-setup-token="${setupToken ? "required" : "none"}" `,
      ),
    );
  });
  app.get("/dashboard/:file", (c) => {
    const file = c.req.param("file");
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) throw new ApiError("NOT_FOUND", `No dashboard file ${file}`);
    return send(c, file, type);
  });
}
