/** Request limits shared by the HTTP layer and the dispatcher. */
import type { IncomingMessage, Server } from "node:http";
import type { ServerType } from "@hono/node-server";

export const MAX_BODY_BYTES = 1024 * 1024;

/** Calls in one tRPC batch (`?batch=1`); each call counts against the caller's limits. */
export const MAX_BATCH_CALLS = 20;

/** Requests per session: a token bucket of `max` tokens refilled over `timeWindowSeconds`. */
export const SESSION_RATE_LIMIT = { max: 600, timeWindowSeconds: 60 } as const;

/** A request's headers must arrive within this time (the Node server's headersTimeout). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A request's body must arrive within this time, unless an authenticated upload route allows more. */
export const BODY_TIMEOUT_MS = 15_000;
/** The longest an allowed upload may take to arrive (the Node server's requestTimeout). */
export const UPLOAD_TIMEOUT_MS = 30 * 60_000;

/**
 * Options for the Node HTTP server (issue 22 finding 8): slow headers are cut after
 * HEADERS_TIMEOUT_MS, checked every second (Node checks every 30 s by default).
 */
export const HTTP_SERVER_OPTIONS = {
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: UPLOAD_TIMEOUT_MS,
  connectionsCheckingInterval: 1_000,
} as const;

const slowBodiesAllowed = new WeakSet<IncomingMessage>();

/** An authenticated upload may take up to UPLOAD_TIMEOUT_MS (`env` is Hono's c.env under node-server). */
export function allowSlowBody(env: unknown): void {
  const incoming = (env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming) slowBodiesAllowed.add(incoming);
}

/**
 * Cuts the connection of a request whose body has not fully arrived BODY_TIMEOUT_MS after its
 * headers, so a slow anonymous body cannot hold a connection (and its memory) for minutes.
 */
export function limitSlowBodies(server: ServerType): void {
  (server as Server).on("request", (request: IncomingMessage) => {
    if (request.complete) return;
    const timer = setTimeout(() => {
      if (!request.complete && !slowBodiesAllowed.has(request)) request.socket.destroy();
    }, BODY_TIMEOUT_MS);
    timer.unref();
    const clear = () => clearTimeout(timer);
    request.once("end", clear);
    request.once("close", clear);
  });
}
