/**
 * DNS providers (Dokploy's dnsProvider, issue 41 item 5): an organization's Cloudflare accounts,
 * whose zones and records the platform lists and edits through Cloudflare's v4 API
 * (dns/cloudflare.ts), and which a domain may name so that the record pointing its host at the
 * server is made with it and follows it (domainRecords below).
 *
 * The API token is sealed, bound to its row and organization, and answered only as
 * DNS_SECRET_MASK; a config sending the mask keeps the stored token (Dokploy's merge). Dokploy's
 * other provider types (route53, ...) are not served: a 400 naming config.providerType.
 */
import { isIPv4, isIPv6 } from "node:net";
import { z } from "zod";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import type { DnsProviderRow } from "../db/schema.ts";
import { ApiError, badRequest, conflict, notFound } from "../errors.ts";
import {
  DnsProviderError,
  type DnsRecordFields,
  type DnsZone,
  deleteRecord,
  listRecords,
  listZones,
  updateRecord,
  upsertRecord,
  verifyToken,
} from "./cloudflare.ts";
import {
  DNS_PROVIDER_NAME_CONSTRAINT,
  deleteDnsProvider,
  findDnsProvider,
  insertDnsProvider,
  listDnsProviders,
  updateDnsProviderRow,
} from "./repository.ts";

export { DnsProviderError };

export const DNS_SECRET_MASK = "********";

export const dnsProviderNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-zA-Z0-9_-]+$/, "Name can only contain letters, numbers, dashes and underscores");

/** Dokploy's cloudflare config; its other provider types are refused by the literal. */
export const cloudflareConfigSchema = z.strictObject({
  providerType: z.literal("cloudflare"),
  apiToken: z.string().trim().min(1).max(1024),
});
export type CloudflareConfigInput = z.output<typeof cloudflareConfigSchema>;

/** Dokploy's dnsRecordFieldsSchema (A and CNAME) with AAAA, which a domain on an IPv6 server needs. */
export const dnsRecordFieldsSchema = {
  type: z.enum(["A", "AAAA", "CNAME"]),
  /** An ASCII DNS name (an IDN in punycode), `*.` for a wildcard, `@` for the zone's apex. */
  name: z
    .string()
    .trim()
    .min(1)
    .max(253)
    .regex(
      /^(@|(\*\.)?[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?)$/,
      "must be a DNS name",
    ),
  content: z
    .string()
    .trim()
    .min(1)
    .max(2048)
    .refine(
      (value) => [...value].every((character) => character >= " " && character !== "\u007f"),
      "must not contain control characters",
    ),
  ttl: z.number().int().positive().max(86_400).optional(),
  /** Cloudflare's proxy in front of the record (the orange cloud); DNS-only when left out. */
  proxied: z.boolean().optional(),
};

export const dnsProviderSchema = z.object({
  dnsProviderId: z.string(),
  name: z.string(),
  providerType: z.literal("cloudflare"),
  config: z.object({ providerType: z.literal("cloudflare"), apiToken: z.literal(DNS_SECRET_MASK) }),
  organizationId: z.string(),
  createdAt: z.string(),
});
export type DnsProviderView = z.infer<typeof dnsProviderSchema>;

export const dnsZoneSchema = z.object({ id: z.string(), name: z.string() });
export const dnsRecordSchema = z.object({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  content: z.string(),
  ttl: z.number(),
  proxied: z.boolean(),
});

const sealContext = (row: { dnsProviderId: string; organizationId: string }): SecretContext => ({
  table: "dns_providers",
  rowId: row.dnsProviderId,
  organizationId: row.organizationId,
});

/** What responses show of a provider: the token masked. */
export function toDnsProviderView(row: DnsProviderRow): DnsProviderView {
  return {
    dnsProviderId: row.dnsProviderId,
    name: row.name,
    providerType: row.providerType,
    config: { providerType: row.providerType, apiToken: DNS_SECRET_MASK },
    organizationId: row.organizationId,
    createdAt: row.createdAt,
  };
}

/** The provider's API token, opened. */
export function openToken(ctx: Pick<ServiceContext, "secrets">, row: DnsProviderRow): string {
  return ctx.secrets.decrypt(row.apiTokenSealed, sealContext(row));
}

/**
 * The token of `incoming`, the masked one standing for the stored provider's (Dokploy's
 * mergeDnsProviderConfig); the mask without a stored provider is refused.
 */
export function mergedToken(
  ctx: Pick<ServiceContext, "secrets">,
  incoming: CloudflareConfigInput,
  existing: DnsProviderRow | undefined,
): string {
  if (incoming.apiToken !== DNS_SECRET_MASK) return incoming.apiToken;
  if (!existing) {
    throw badRequest(
      "Invalid input: config.apiToken: the masked token can only stand for a stored provider's",
      {
        fields: ["config.apiToken"],
      },
    );
  }
  return openToken(ctx, existing);
}

/** A provider failure as the API answers it: a 400 with Cloudflare's words, never the token. */
export function asBadRequest(error: unknown): never {
  if (error instanceof DnsProviderError) throw badRequest(error.message);
  throw error;
}

const isNameTaken = (error: unknown) =>
  error instanceof Error && error.message.includes(DNS_PROVIDER_NAME_CONSTRAINT);
const nameTaken = (name: string) =>
  conflict(`A DNS provider named "${name}" already exists in this organization`, { fields: ["name"] });

export interface DnsProviderFields {
  name: string;
  config: CloudflareConfigInput;
}

export async function createDnsProvider(
  ctx: ServiceContext,
  organizationId: string,
  fields: DnsProviderFields,
): Promise<DnsProviderRow> {
  const token = mergedToken(ctx, fields.config, undefined);
  const dnsProviderId = newId();
  try {
    return await insertDnsProvider(ctx.db, {
      dnsProviderId,
      organizationId,
      name: fields.name,
      providerType: "cloudflare",
      apiTokenSealed: ctx.secrets.encrypt(token, sealContext({ dnsProviderId, organizationId })),
    });
  } catch (error) {
    if (isNameTaken(error)) throw nameTaken(fields.name);
    throw error;
  }
}

const throwNotFound = (): never => {
  throw notFound("DNS provider");
};

/** The provider of the organization, or a 404 (another organization's is one too). */
export async function requireDnsProvider(
  db: Db,
  organizationId: string,
  dnsProviderId: string,
): Promise<DnsProviderRow> {
  return (await findDnsProvider(db, organizationId, dnsProviderId)) ?? throwNotFound();
}

export { listDnsProviders };

export async function updateDnsProvider(
  ctx: ServiceContext,
  organizationId: string,
  dnsProviderId: string,
  fields: DnsProviderFields,
): Promise<DnsProviderRow> {
  const existing = await requireDnsProvider(ctx.db, organizationId, dnsProviderId);
  const token = mergedToken(ctx, fields.config, existing);
  try {
    return (
      (await updateDnsProviderRow(ctx.db, organizationId, dnsProviderId, {
        name: fields.name,
        apiTokenSealed: ctx.secrets.encrypt(token, sealContext(existing)),
      })) ?? throwNotFound()
    );
  } catch (error) {
    if (isNameTaken(error)) throw nameTaken(fields.name);
    throw error;
  }
}

export async function removeDnsProvider(
  db: Db,
  organizationId: string,
  dnsProviderId: string,
): Promise<void> {
  if (!(await deleteDnsProvider(db, organizationId, dnsProviderId))) throwNotFound();
}

type Ctx = Pick<ServiceContext, "config" | "secrets">;

export const testToken = (ctx: Ctx, token: string) => verifyToken(ctx, token).catch(asBadRequest);

export const zonesOf = (ctx: Ctx, row: DnsProviderRow) =>
  listZones(ctx, openToken(ctx, row)).catch(asBadRequest);

export const recordsOf = (ctx: Ctx, row: DnsProviderRow, zoneId: string) =>
  listRecords(ctx, openToken(ctx, row), zoneId).catch(asBadRequest);

/** dnsProvider.createRecord: Dokploy's upsert (a record of that type and name is overwritten). */
export const putRecord = async (ctx: Ctx, row: DnsProviderRow, zoneId: string, fields: DnsRecordFields) =>
  (await upsertRecord(ctx, openToken(ctx, row), zoneId, fields).catch(asBadRequest)).record;

export const replaceRecord = (
  ctx: Ctx,
  row: DnsProviderRow,
  zoneId: string,
  recordId: string,
  fields: DnsRecordFields,
) => updateRecord(ctx, openToken(ctx, row), zoneId, recordId, fields).catch(asBadRequest);

export const removeRecord = (ctx: Ctx, row: DnsProviderRow, zoneId: string, recordId: string) =>
  deleteRecord(ctx, openToken(ctx, row), zoneId, recordId).catch(asBadRequest);

// ---- a domain's record ----

const normalizeName = (value: string) => value.trim().toLowerCase().replace(/\.$/, "");

/** The most specific zone containing `host` (a wildcard host's `*.` aside). */
export function zoneForHost(zones: DnsZone[], host: string): DnsZone | undefined {
  const name = normalizeName(host).replace(/^\*\./, "");
  return zones
    .filter((zone) => {
      const zoneName = normalizeName(zone.name);
      return name === zoneName || name.endsWith(`.${zoneName}`);
    })
    .sort((a, b) => b.name.length - a.name.length)[0];
}

/** Where a domain's record points: the provider, the host and the server's address. */
export interface DomainRecordTarget {
  provider: DnsProviderRow;
  host: string;
  serverIp: string;
}

/** The provider record a domain made: enough to rename, restore or delete it later. */
export interface DomainDnsRecord {
  dnsProviderId: string;
  dnsZoneId: string;
  dnsRecordId: string;
}

const dnsField = (message: string) =>
  new ApiError("BAD_REQUEST", `Invalid input: dnsProviderId: ${message}`, { fields: ["dnsProviderId"] });

/**
 * Points `host` at the server in the provider's zone that holds it (A for an IPv4 address, AAAA
 * for IPv6), overwriting a record of that type and name as Dokploy's upsert does. `undo` puts
 * back what was there (deletes a created record, restores an overwritten one), for a domain
 * change that then fails. A provider failure, no zone for the host or no server address is a 400
 * naming dnsProviderId.
 */
export async function pointHostAtServer(
  ctx: Ctx,
  target: DomainRecordTarget,
): Promise<{ record: DomainDnsRecord; undo: () => Promise<void> }> {
  const ip = target.serverIp;
  const type = isIPv4(ip) ? "A" : isIPv6(ip) ? "AAAA" : undefined;
  if (!type) throw dnsField("the server has no public IP address to point the record at");
  const token = openToken(ctx, target.provider);
  try {
    const zone = zoneForHost(await listZones(ctx, token), target.host);
    if (!zone) throw dnsField(`no zone of the DNS provider holds ${target.host}`);
    // A domain's own record stays DNS-only: the server's proxy answers its HTTP-01 challenges.
    const fields = { type, name: target.host, content: ip, proxied: false } as const;
    const { record, created, previous } = await upsertRecord(ctx, token, zone.id, fields);
    const undo = async () => {
      if (created) await deleteRecord(ctx, token, zone.id, record.id);
      else if (previous) {
        await updateRecord(ctx, token, zone.id, previous.id, {
          type,
          name: previous.name,
          content: previous.content,
          ttl: previous.ttl,
          proxied: previous.proxied,
        });
      }
    };
    return {
      record: { dnsProviderId: target.provider.dnsProviderId, dnsZoneId: zone.id, dnsRecordId: record.id },
      undo,
    };
  } catch (error) {
    if (error instanceof DnsProviderError) throw dnsField(error.message);
    throw error;
  }
}

/**
 * Deletes the record a domain no longer needs. A record already gone (404) is fine; another
 * failure is logged with the record's zone and id and does not undo the domain change (a dead
 * token must not keep a domain from being removed).
 */
export async function removeDomainRecord(
  ctx: ServiceContext,
  organizationId: string,
  record: { dnsProviderId: string | null; dnsZoneId: string | null; dnsRecordId: string | null },
): Promise<void> {
  if (!record.dnsProviderId || !record.dnsZoneId || !record.dnsRecordId) return;
  const provider = await findDnsProvider(ctx.db, organizationId, record.dnsProviderId);
  if (!provider) return;
  try {
    await deleteRecord(ctx, openToken(ctx, provider), record.dnsZoneId, record.dnsRecordId);
  } catch (error) {
    if (error instanceof DnsProviderError && error.status === 404) return;
    if (!(error instanceof DnsProviderError)) throw error;
    ctx.logger.warn(
      {
        dnsProviderId: provider.dnsProviderId,
        dnsZoneId: record.dnsZoneId,
        dnsRecordId: record.dnsRecordId,
        reason: error.message,
      },
      "a domain's DNS record could not be deleted at its provider",
    );
  }
}

/** Whether the domain change moves its record (another host, another provider, or none). */
export function recordMoves(
  existing: { host: string; dnsProviderId: string | null; dnsRecordId: string | null },
  next: { host: string; dnsProviderId: string | null },
): boolean {
  if (existing.dnsProviderId !== next.dnsProviderId) return true;
  if (!next.dnsProviderId) return false;
  return existing.host !== next.host || !existing.dnsRecordId;
}
