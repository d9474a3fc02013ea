/**
 * A GET through the outbound guard, for documents the platform fetches from a URL an operator or
 * a user named (template catalogues): the host is checked and the connection goes to the very
 * address that was checked (no second DNS answer can swap it for an internal one), each redirect
 * is checked the same way, the whole exchange has a deadline, and the body is cut off at a size
 * cap. Errors say what failed (status, timeout, size, refusal) and never carry the body.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import { type AllowList, checkOutboundHost, type HostResolver, systemResolver } from "./guard.ts";

export class OutboundFetchError extends Error {
  constructor(
    readonly url: string,
    message: string,
  ) {
    super(`${url}: ${message}`);
    this.name = "OutboundFetchError";
  }
}

export interface GuardedGetOptions {
  allow: AllowList;
  /** The whole exchange, redirects included (default 10 s). */
  timeoutMs?: number;
  /** Bytes of body accepted (default 1 MiB). */
  maxBytes?: number;
  /** Redirects followed, each checked again (default 3). */
  maxRedirects?: number;
  signal?: AbortSignal;
  resolver?: HostResolver;
  /** An extra check of each URL before it is reached (e.g. the own-address rule for user targets). */
  checkTarget?: (url: URL) => Promise<void>;
  /** Extra request headers (e.g. a Vault token); sent to every URL of the exchange. */
  headers?: Record<string, string>;
}

/** The body of `url` as text (200 only); throws OutboundFetchError or OutboundRefusedError. */
export async function guardedGetText(url: string, options: GuardedGetOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let target = new URL(url);
  for (let redirects = 0; ; redirects++) {
    const response = await getOnce(target, options, signal, timeoutMs);
    if (response.location === undefined) return response.body;
    if (redirects >= (options.maxRedirects ?? 3)) {
      throw new OutboundFetchError(url, "too many redirects");
    }
    target = new URL(response.location, target);
  }
}

async function getOnce(
  target: URL,
  options: GuardedGetOptions,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<{ body: string; location?: string }> {
  const shown = `${target.origin}${target.pathname}`;
  const answer = await sendOnce(target, "GET", undefined, options, signal, timeoutMs, true);
  if ([301, 302, 303, 307, 308].includes(answer.status) && answer.location) {
    return { body: "", location: answer.location };
  }
  if (answer.status !== 200) throw new OutboundFetchError(shown, `answered HTTP ${answer.status}`);
  return { body: answer.body };
}

export interface GuardedRequestOptions extends Omit<GuardedGetOptions, "maxRedirects"> {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** A JSON body (sent with content-type application/json). */
  json?: unknown;
}

/**
 * One request through the guard, redirects not followed (a redirect is answered as its status):
 * the status and the body as text, whatever the status, for APIs whose errors are documents
 * (Cloudflare's `{success: false, errors}`). Throws OutboundFetchError (timeout, size, transport)
 * or OutboundRefusedError.
 */
export async function guardedRequest(
  url: string,
  options: GuardedRequestOptions,
): Promise<{ status: number; body: string }> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const answer = await sendOnce(new URL(url), options.method, body, options, signal, timeoutMs, false);
  return { status: answer.status, body: answer.body };
}

async function sendOnce(
  target: URL,
  method: string,
  body: string | undefined,
  options: GuardedGetOptions,
  signal: AbortSignal,
  timeoutMs: number,
  bodyOf200Only: boolean,
): Promise<{ status: number; body: string; location?: string }> {
  const shown = `${target.origin}${target.pathname}`;
  if (target.protocol !== "http:" && target.protocol !== "https:") {
    throw new OutboundFetchError(shown, "only http:// and https:// URLs are fetched");
  }
  if (target.username !== "" || target.password !== "") {
    throw new OutboundFetchError(shown, "URLs with credentials are not fetched");
  }
  await options.checkTarget?.(target);
  const [address] = await checkOutboundHost(
    target.hostname,
    options.allow,
    options.resolver ?? systemResolver,
  );
  if (signal.aborted) throw abortError(shown, signal, timeoutMs);
  // The connection goes to the address checked above, whatever a new DNS answer would say.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    const family = isIP(address!) === 6 ? 6 : 4;
    if ((lookupOptions as { all?: boolean }).all) {
      (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
        { address: address!, family },
      ]);
    } else callback(null, address!, family);
  };
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  const headers: Record<string, string> = { ...options.headers, accept: "application/json, text/plain, */*" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const outgoing = request(
      target,
      { method, lookup: pinned, signal, headers },
      (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        if ([301, 302, 303, 307, 308].includes(status)) {
          response.resume();
          resolve({ status, body: "", location: response.headers.location });
          return;
        }
        if (bodyOf200Only && status !== 200) {
          response.resume();
          resolve({ status, body: "" });
          return;
        }
        const declared = Number(response.headers["content-length"]);
        if (Number.isFinite(declared) && declared > maxBytes) {
          response.destroy();
          reject(new OutboundFetchError(shown, `the body is larger than ${maxBytes} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            response.destroy();
            reject(new OutboundFetchError(shown, `the body is larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", (error) => reject(failure(shown, error, signal, timeoutMs)));
      },
    );
    outgoing.on("error", (error) => reject(failure(shown, error, signal, timeoutMs)));
    outgoing.end(body);
  });
}

function abortError(url: string, signal: AbortSignal, timeoutMs: number): OutboundFetchError {
  const reason = signal.reason as Error | undefined;
  return new OutboundFetchError(
    url,
    reason?.name === "TimeoutError" ? `no complete answer within ${timeoutMs} ms` : "aborted",
  );
}

function failure(url: string, error: Error, signal: AbortSignal, timeoutMs: number): OutboundFetchError {
  if (signal.aborted) return abortError(url, signal, timeoutMs);
  return new OutboundFetchError(url, (error as NodeJS.ErrnoException).code ?? error.message);
}
