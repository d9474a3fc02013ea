/**
 * Calls to a Git provider's REST API, all through the outbound guard: the host is resolved and
 * checked (with the own-address rule) before every request, redirects are not followed (the
 * guard checked the host the URL names), answers are bounded in time and size. A provider that
 * answers an error becomes a 400 naming the provider and status, never echoing the request's
 * credentials.
 */
import type { ServiceContext } from "../context.ts";
import { ApiError, badRequest } from "../errors.ts";
import { OutboundRefusedError } from "../outbound/guard.ts";
import { checkUserTarget } from "../outbound/own-addresses.ts";

const TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface ProviderRequest {
  method?: "GET" | "POST" | "PUT" | "PATCH";
  headers?: Record<string, string>;
  /** A JSON body, or form fields (application/x-www-form-urlencoded). */
  json?: unknown;
  form?: Record<string, string>;
  /** Error statuses answered as they are instead of thrown (404: "not a collaborator"). */
  acceptStatus?: number[];
}

export interface ProviderAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A usable http(s) base URL (no credentials, query or fragment); the problem otherwise. */
export function baseUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an http(s) URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http(s) URL";
  if (url.username || url.password) return "must not carry credentials";
  if (url.search || url.hash) return "must not carry a query or fragment";
  return null;
}

const portOf = (url: URL) => Number(url.port || (url.protocol === "https:" ? 443 : 80));

/**
 * Checks a provider URL a user gave (gitlabUrl, giteaInternalUrl, ...): a 400 naming `field` when
 * it is malformed or the outbound guard refuses its address.
 */
export async function checkProviderUrl(
  ctx: ServiceContext,
  organizationId: string,
  field: string,
  value: string,
): Promise<string> {
  const problem = baseUrlProblem(value);
  if (problem) throw badRequest(`${field} ${problem}`, { fields: [field] });
  const url = new URL(value);
  try {
    await checkUserTarget(ctx, organizationId, {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: portOf(url),
    });
  } catch (error) {
    // A name this machine cannot resolve yet is kept; every request checks it again where it resolves.
    if (error instanceof OutboundRefusedError && !error.unresolved) {
      throw badRequest(`${field} is not allowed: ${error.message}`, { fields: [field] });
    }
    if (!(error instanceof OutboundRefusedError)) throw error;
  }
  return value.replace(/\/+$/, "");
}

/** One request to a provider's API through the outbound guard. */
export async function providerFetch(
  ctx: ServiceContext,
  organizationId: string,
  providerName: string,
  target: string,
  request: ProviderRequest = {},
): Promise<ProviderAnswer> {
  const url = new URL(target);
  try {
    await checkUserTarget(ctx, organizationId, {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: portOf(url),
    });
  } catch (error) {
    if (error instanceof OutboundRefusedError) {
      throw badRequest(`${providerName} may not be reached: ${error.message}`);
    }
    throw error;
  }
  const headers: Record<string, string> = { accept: "application/json", ...request.headers };
  let body: string | undefined;
  if (request.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(request.json);
  } else if (request.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(request.form).toString();
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method ?? (body === undefined ? "GET" : "POST"),
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const reason =
      error instanceof Error && error.name === "TimeoutError" ? "timed out" : "could not be reached";
    throw badRequest(`${providerName} ${reason} at ${url.origin}`);
  }
  const raw = new Uint8Array(await response.arrayBuffer());
  if (raw.byteLength > MAX_BODY_BYTES) throw badRequest(`${providerName} answered more than 8 MiB`);
  const text = new TextDecoder().decode(raw);
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the error message below.
  }
  if (!response.ok && !request.acceptStatus?.includes(response.status)) {
    const detail =
      parsed && typeof parsed === "object" && "message" in parsed && typeof parsed.message === "string"
        ? `: ${parsed.message.slice(0, 200)}`
        : parsed && typeof parsed === "object" && "error_description" in parsed
          ? `: ${String(parsed.error_description).slice(0, 200)}`
          : "";
    throw new ApiError("BAD_REQUEST", `${providerName} answered ${response.status}${detail}`);
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
