/**
 * A domain's DNS record (dnsProviderId, issue 41 item 5): a domain naming one of the
 * organization's DNS providers gets the record pointing its host at its server's IP (A, or AAAA
 * for an IPv6 address), made before the domain is saved so that a provider failure is a 400
 * that changes nothing (a record made for a change that then fails is put back). The record
 * follows the domain: another host or provider makes the new one and deletes the old one after
 * the change; the domain's removal deletes it. A deletion the provider refuses is logged and does
 * not undo the domain change (docs/decisions.md).
 */
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import type { Domain } from "../db/schema.ts";
import { pointHostAtServer, recordMoves, removeDomainRecord, requireDnsProvider } from "../dns/index.ts";
import { setDomainDnsRecord } from "../dns/repository.ts";
import { notFound } from "../errors.ts";
import { loadWebServerSettings } from "../proxy/static-config.ts";
import { controlPlanePublicIp } from "../servers/public-ip.ts";
import { findServer } from "../servers/repository.ts";

type DnsColumns = Pick<Domain, "dnsProviderId" | "dnsZoneId" | "dnsRecordId">;

const NO_RECORD: DnsColumns = { dnsProviderId: null, dnsZoneId: null, dnsRecordId: null };

/** The address a server's proxy is reached at: its registered IP, or this machine's. */
async function serverIp(ctx: ServiceContext, organizationId: string, serverId: string): Promise<string> {
  if (serverId !== LOCAL_SERVER_ID) {
    const server = await findServer(ctx.db, organizationId, serverId);
    if (!server) throw notFound("Server");
    return server.ipAddress;
  }
  const settings = await loadWebServerSettings(ctx.db);
  return settings.serverIp || controlPlanePublicIp(ctx.config);
}

export interface DomainRecordChange {
  organizationId: string;
  /** The domain as stored (null: a new domain). */
  existing: (Pick<Domain, "host"> & DnsColumns) | null;
  /** The host and provider the domain will have, and the server its proxy runs on. */
  host: string;
  dnsProviderId: string | null;
  serverId: string;
}

/**
 * Runs `save` (the domain's insert or update) with its record made first and moved after;
 * answers the saved row with its record's columns.
 */
export async function saveWithDnsRecord(
  ctx: ServiceContext,
  change: DomainRecordChange,
  save: () => Promise<Domain>,
): Promise<Domain> {
  const existing = change.existing ?? { host: "", ...NO_RECORD };
  if (!recordMoves(existing, { host: change.host, dnsProviderId: change.dnsProviderId })) return save();
  const pointed = change.dnsProviderId
    ? await pointHostAtServer(ctx, {
        provider: await requireDnsProvider(ctx.db, change.organizationId, change.dnsProviderId),
        host: change.host,
        serverIp: await serverIp(ctx, change.organizationId, change.serverId),
      })
    : undefined;
  let row: Domain;
  try {
    row = await save();
  } catch (error) {
    await pointed
      ?.undo()
      .catch((undoError: unknown) =>
        ctx.logger.warn(
          { err: undoError, host: change.host },
          "a DNS record made for a failed domain change stays",
        ),
      );
    throw error;
  }
  const columns: DnsColumns = pointed?.record ?? NO_RECORD;
  await setDomainDnsRecord(ctx.db, row.domainId, columns);
  const sameRecord =
    existing.dnsRecordId === columns.dnsRecordId &&
    existing.dnsZoneId === columns.dnsZoneId &&
    existing.dnsProviderId === columns.dnsProviderId;
  if (!sameRecord) await removeDomainRecord(ctx, change.organizationId, existing);
  return { ...row, ...columns };
}

/** After a domain's removal: its record goes too. */
export function removeRecordOf(
  ctx: ServiceContext,
  organizationId: string,
  domain: DnsColumns,
): Promise<void> {
  return removeDomainRecord(ctx, organizationId, domain);
}
