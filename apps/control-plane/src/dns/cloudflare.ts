/**
 * Cloudflare's v4 API for DNS (documented at developers.cloudflare.com/api): token verification
 * (GET /user/tokens/verify), zones (GET /zones, paged) and a zone's DNS records (GET, POST, PUT,
 * DELETE /zones/<zone>/dns_records[/<record>]). Every call goes through the outbound guard to
 * the configured base URL (PLATFORM_CLOUDFLARE_API_URL: Cloudflare's, or a stand-in in tests),
 * the token in an Authorization: Bearer header; no redirect is followed. Errors name the
 * operation, the HTTP status and Cloudflare's own error messages, never the token.
 */
import type { ServiceContext } from "../context.ts";
import { OutboundRefusedError } from "../outbound/guard.ts";
import { guardedRequest, OutboundFetchError } from "../outbound/http.ts";

/** What a Cloudflare call failed on, worded for a 400 (no secret in it). */
export class DnsProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "DnsProviderError";
  }
}

export interface DnsZone {
  id: string;
  name: string;
}

export type DnsRecordType = "A" | "AAAA" | "CNAME";

export interface DnsRecord {
  id: string;
  type: string;
  name: string;
  content: string;
  ttl: number;
  proxied: boolean;
}

export interface DnsRecordFields {
  type: DnsRecordType;
  name: string;
  content: string;
  /** Seconds; Cloudflare's 1 means "automatic" (its default when left out). */
  ttl?: number;
  /** Through Cloudflare's proxy; false (DNS only, Cloudflare's default) when left out. */
  proxied?: boolean;
}

type CloudflareContext = Pick<ServiceContext, "config">;

const TIMEOUT_MS = 15_000;
const MAX_BYTES = 4 * 1024 * 1024;
const PAGE_SIZE = 50;
/** At most this many pages are read of a list (5,000 zones or records). */
const MAX_PAGES = 100;

interface Envelope<T> {
  success?: boolean;
  errors?: { code?: number; message?: string }[];
  result?: T;
  result_info?: { page?: number; total_pages?: number };
}

const segment = (id: string) => encodeURIComponent(id);

async function call<T>(
  ctx: CloudflareContext,
  token: string,
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  what: string,
  json?: unknown,
): Promise<Envelope<T>> {
  let answer: { status: number; body: string };
  try {
    answer = await guardedRequest(`${ctx.config.cloudflareApiUrl}${path}`, {
      method,
      json,
      allow: ctx.config.outboundAllow,
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BYTES,
      headers: { authorization: `Bearer ${token}` },
    });
  } catch (error) {
    if (error instanceof OutboundRefusedError) {
      throw new DnsProviderError(`Cloudflare may not be reached: ${error.message}`);
    }
    if (error instanceof OutboundFetchError)
      throw new DnsProviderError(`Cloudflare: ${what} failed: ${error.message}`);
    throw error;
  }
  let envelope: Envelope<T> | null = null;
  try {
    envelope = JSON.parse(answer.body) as Envelope<T>;
  } catch {
    // Not JSON: reported by status below.
  }
  const ok = answer.status >= 200 && answer.status < 300 && envelope?.success === true;
  if (!ok) {
    const messages = (envelope?.errors ?? [])
      .map((error) => (typeof error?.message === "string" ? error.message.slice(0, 200) : ""))
      .filter(Boolean)
      .slice(0, 3)
      .join("; ");
    throw new DnsProviderError(
      `Cloudflare: ${what} failed (HTTP ${answer.status})${messages ? `: ${messages}` : ""}`,
      answer.status,
    );
  }
  return envelope!;
}

/** Checks that Cloudflare accepts the token and that it is active (GET /user/tokens/verify). */
export async function verifyToken(ctx: CloudflareContext, token: string): Promise<void> {
  const answer = await call<{ status?: string }>(
    ctx,
    token,
    "GET",
    "/user/tokens/verify",
    "verifying the token",
  );
  const status = answer.result?.status;
  if (status !== undefined && status !== "active") {
    throw new DnsProviderError(`Cloudflare: the token is ${status}, not active`);
  }
}

async function listPaged<T>(ctx: CloudflareContext, token: string, path: string, what: string): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const separator = path.includes("?") ? "&" : "?";
    const answer = await call<T[]>(
      ctx,
      token,
      "GET",
      `${path}${separator}page=${page}&per_page=${PAGE_SIZE}`,
      what,
    );
    const result = Array.isArray(answer.result) ? answer.result : [];
    items.push(...result);
    const totalPages = answer.result_info?.total_pages;
    if (totalPages !== undefined ? page >= totalPages : result.length < PAGE_SIZE) break;
  }
  return items;
}

/** The zones the token may see, as {id, name}. */
export async function listZones(ctx: CloudflareContext, token: string): Promise<DnsZone[]> {
  const zones = await listPaged<{ id: string; name: string }>(ctx, token, "/zones", "listing the zones");
  return zones.map((zone) => ({ id: String(zone.id), name: String(zone.name) }));
}

const toRecord = (record: Partial<DnsRecord>): DnsRecord => ({
  id: String(record.id),
  type: String(record.type),
  name: String(record.name),
  content: String(record.content),
  ttl: Number(record.ttl ?? 1),
  proxied: record.proxied === true,
});

/** Every DNS record of a zone. */
export async function listRecords(
  ctx: CloudflareContext,
  token: string,
  zoneId: string,
): Promise<DnsRecord[]> {
  const records = await listPaged<Partial<DnsRecord>>(
    ctx,
    token,
    `/zones/${segment(zoneId)}/dns_records`,
    "listing the zone's records",
  );
  return records.map(toRecord);
}

/** The records of a zone with this type and exact name. */
async function findRecords(
  ctx: CloudflareContext,
  token: string,
  zoneId: string,
  type: DnsRecordType,
  name: string,
): Promise<DnsRecord[]> {
  const query = `type=${encodeURIComponent(type)}&name=${encodeURIComponent(name)}`;
  const records = await listPaged<Partial<DnsRecord>>(
    ctx,
    token,
    `/zones/${segment(zoneId)}/dns_records?${query}`,
    `looking up the ${type} record ${name}`,
  );
  return records.map(toRecord);
}

const payload = (fields: DnsRecordFields) => ({
  type: fields.type,
  name: fields.name,
  content: fields.content,
  ttl: fields.ttl ?? 1,
  proxied: fields.proxied ?? false,
});

/** Creates a record (POST). */
export async function createRecord(
  ctx: CloudflareContext,
  token: string,
  zoneId: string,
  fields: DnsRecordFields,
): Promise<DnsRecord> {
  const answer = await call<Partial<DnsRecord>>(
    ctx,
    token,
    "POST",
    `/zones/${segment(zoneId)}/dns_records`,
    `creating the ${fields.type} record ${fields.name}`,
    payload(fields),
  );
  return toRecord(answer.result ?? {});
}

/** Replaces a record (PUT, Cloudflare's overwrite). */
export async function updateRecord(
  ctx: CloudflareContext,
  token: string,
  zoneId: string,
  recordId: string,
  fields: DnsRecordFields,
): Promise<DnsRecord> {
  const answer = await call<Partial<DnsRecord>>(
    ctx,
    token,
    "PUT",
    `/zones/${segment(zoneId)}/dns_records/${segment(recordId)}`,
    `updating the ${fields.type} record ${fields.name}`,
    payload(fields),
  );
  return toRecord(answer.result ?? {});
}

/** Deletes a record. */
export async function deleteRecord(
  ctx: CloudflareContext,
  token: string,
  zoneId: string,
  recordId: string,
): Promise<void> {
  await call(
    ctx,
    token,
    "DELETE",
    `/zones/${segment(zoneId)}/dns_records/${segment(recordId)}`,
    "deleting the record",
  );
}

/**
 * The record of this type and name, created or, when one exists, overwritten (Dokploy's
 * upsertRecord). `created` says which, and `previous` is the record as it was before an overwrite.
 */
export async function upsertRecord(
  ctx: CloudflareContext,
  token: string,
  zoneId: string,
  fields: DnsRecordFields,
): Promise<{ record: DnsRecord; created: boolean; previous?: DnsRecord }> {
  const [existing] = await findRecords(ctx, token, zoneId, fields.type, fields.name);
  if (existing) {
    return {
      record: await updateRecord(ctx, token, zoneId, existing.id, fields),
      created: false,
      previous: existing,
    };
  }
  return { record: await createRecord(ctx, token, zoneId, fields), created: true };
}
