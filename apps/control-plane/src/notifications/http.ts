/**
 * Every request a notification channel makes: the URL's host through the outbound guard and the
 * own-address rule (checkUserTarget) first, then one POST that follows no redirect, with a
 * timeout. A failure is a DeliveryError whose message names what went wrong (refused address,
 * HTTP status, timeout, connection refused) and never the receiver's body, the URL's path or
 * query (webhook URLs carry keys) or a header.
 */
import type { ServiceContext } from "../context.ts";
import { badRequest } from "../errors.ts";
import { OutboundRefusedError } from "../outbound/guard.ts";
import { checkUserTarget } from "../outbound/own-addresses.ts";

/** How long one request to a receiver may take. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** A delivery that failed; `field`: the input field it is about (a refused address). */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "DeliveryError";
  }
}

/** A refused address or a failed send as the API answers it: 400 naming the field, no remote text. */
export function deliveryAsApiError(error: unknown): never {
  if (error instanceof DeliveryError) {
    throw badRequest(error.message, error.field ? { fields: [error.field] } : undefined);
  }
  throw error;
}

export type OutboundContext = Pick<ServiceContext, "config" | "db">;

/** Checks a host and port a channel would reach; throws DeliveryError naming `field`. */
export async function checkChannelTarget(
  ctx: OutboundContext,
  organizationId: string,
  field: string,
  target: { host: string; port: number },
): Promise<void> {
  try {
    await checkUserTarget(ctx, organizationId, target);
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw new DeliveryError(`${field}: ${error.message}`, field);
    throw error;
  }
}

/** The URL of a field, parsed; throws DeliveryError naming the field when it is no http(s) URL. */
export function parseChannelUrl(field: string, text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DeliveryError(`${field}: is not a URL`, field);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new DeliveryError(`${field}: must be an http:// or https:// URL`, field);
  }
  return url;
}

const portOf = (url: URL) => Number(url.port || (url.protocol === "https:" ? 443 : 80));

export async function checkChannelUrl(
  ctx: OutboundContext,
  organizationId: string,
  field: string,
  text: string,
): Promise<URL> {
  const url = parseChannelUrl(field, text);
  await checkChannelTarget(ctx, organizationId, field, { host: url.hostname, port: portOf(url) });
  return url;
}

export interface ChannelRequest {
  /** The input field the URL comes from (named in a refusal). */
  field: string;
  url: string;
  headers?: Record<string, string>;
  body: string;
}

/** POSTs through the guard; resolves on a 2xx answer, throws DeliveryError otherwise. */
export async function postToChannel(
  ctx: OutboundContext,
  organizationId: string,
  request: ChannelRequest,
): Promise<void> {
  const url = await checkChannelUrl(ctx, organizationId, request.field, request.url);
  const where = `${url.protocol}//${url.host}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
  } catch (error) {
    throw new DeliveryError(`${where} could not be reached: ${transportReason(error)}`);
  }
  // The body is read and dropped: never echoed, but the connection is freed.
  await response.body?.cancel().catch(() => {});
  if (response.status >= 300 && response.status < 400) {
    throw new DeliveryError(`${where} answered a redirect (HTTP ${response.status}), which is not followed`);
  }
  if (response.status < 200 || response.status >= 300) {
    throw new DeliveryError(`${where} answered HTTP ${response.status}`);
  }
}

/** Why a connection failed, in words of our own (never a remote text). */
export function transportReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; name?: string } } | null)?.cause;
  const name = (error as { name?: string } | null)?.name;
  if (name === "TimeoutError" || cause?.name === "TimeoutError" || name === "AbortError") {
    return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} seconds`;
  }
  switch (cause?.code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "connection reset";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host does not resolve";
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return "connection timed out";
    default:
      return cause?.code?.startsWith("ERR_TLS") || cause?.code?.includes("CERT")
        ? "TLS failed"
        : "network error";
  }
}
