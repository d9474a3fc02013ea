/** The SQL of DNS providers: every lookup is scoped to the organization that owns the provider. */
import type { Db } from "../db/database.ts";
import type { DnsProviderRow } from "../db/schema.ts";

export type { DnsProviderRow };

export const DNS_PROVIDER_NAME_CONSTRAINT = "dns_providers_organization_name_unique";

export function findDnsProvider(
  db: Db,
  organizationId: string,
  dnsProviderId: string,
): Promise<DnsProviderRow | undefined> {
  return db
    .selectFrom("dnsProviders")
    .selectAll()
    .where("dnsProviderId", "=", dnsProviderId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** The organization's providers by name. */
export function listDnsProviders(db: Db, organizationId: string): Promise<DnsProviderRow[]> {
  return db
    .selectFrom("dnsProviders")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("name")
    .execute();
}

export function insertDnsProvider(
  db: Db,
  row: Pick<DnsProviderRow, "dnsProviderId" | "organizationId" | "name" | "providerType" | "apiTokenSealed">,
): Promise<DnsProviderRow> {
  return db.insertInto("dnsProviders").values(row).returningAll().executeTakeFirstOrThrow();
}

export function updateDnsProviderRow(
  db: Db,
  organizationId: string,
  dnsProviderId: string,
  fields: Pick<DnsProviderRow, "name" | "apiTokenSealed">,
): Promise<DnsProviderRow | undefined> {
  return db
    .updateTable("dnsProviders")
    .set(fields)
    .where("dnsProviderId", "=", dnsProviderId)
    .where("organizationId", "=", organizationId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the provider; its domains are detached by the foreign key (ON DELETE SET NULL). */
export async function deleteDnsProvider(
  db: Db,
  organizationId: string,
  dnsProviderId: string,
): Promise<boolean> {
  const removed = await db
    .deleteFrom("dnsProviders")
    .where("dnsProviderId", "=", dnsProviderId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  return removed.numDeletedRows > 0n;
}

/** Records on the domain which provider record points its host at the server. */
export async function setDomainDnsRecord(
  db: Db,
  domainId: string,
  record: { dnsProviderId: string | null; dnsZoneId: string | null; dnsRecordId: string | null },
): Promise<void> {
  await db.updateTable("domains").set(record).where("domainId", "=", domainId).execute();
}
