/**
 * Host ownership across the instance: organizations share proxies, so a host (with all its
 * paths) belongs to one organization. A wildcard `*.x` claims every host under x, at any depth.
 * Another organization's host, a host under its wildcard, or a wildcard over its hosts is a 409
 * naming `host`; so is the control plane's own host (settings.assignDomainServer) for anyone
 * but the instance organization. Within one organization hosts may repeat across applications
 * (different paths, as in Dokploy). A wildcard may not claim a whole top-level domain (`*.com`)
 * nor the instance's shared wildcard domain (`*.traefik.me`, `*.1.2.3.4.traefik.me`), where
 * generated hosts of every organization live (400 naming `host`).
 *
 * Claims are serialized by a transaction-scoped advisory lock, so two organizations cannot claim
 * the same host at once: call claimHost inside the transaction that writes the domain.
 */
import { sql, type Transaction } from "kysely";
import { ownedBy, withOwner } from "../db/owned.ts";
import type { Database } from "../db/schema.ts";
import { badRequest, conflict } from "../errors.ts";
import { isInstanceOrganization } from "../organizations/instance.ts";

/** The advisory lock key of host claims ("host" in ASCII; any constant of ours works). */
const HOST_CLAIM_LOCK = 0x686f7374;

const isWildcard = (host: string) => host.startsWith("*.");

/** The wildcards that would cover `host`: `a.b.c` -> `*.b.c`, `*.c`; `*.b.c` -> `*.b.c`, `*.c`. */
export function coveringWildcards(host: string): string[] {
  const labels = (isWildcard(host) ? host.slice(2) : host).split(".");
  const start = isWildcard(host) ? 0 : 1;
  const wildcards: string[] = [];
  for (let index = start; index < labels.length; index++)
    wildcards.push(`*.${labels.slice(index).join(".")}`);
  return wildcards;
}

/** Whether a claim on `a` and a claim on `b` overlap (same host, or one wildcard covers the other). */
export function hostsOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  return coveringWildcards(a).includes(b) || coveringWildcards(b).includes(a);
}

/**
 * Refuses (409 naming `host`) a host another organization routes; `host` is stored form (lower
 * case, punycode). Takes the claim lock for the rest of the transaction. With `path`, the same
 * host and path already routed in this organization (two routers with one rule) is a 400 naming
 * `host`; `exceptDomainId` is the domain being edited.
 */
export async function claimHost(
  trx: Transaction<Database>,
  organizationId: string,
  host: string,
  route?: { path: string; exceptDomainId?: string },
): Promise<void> {
  const instanceOrganization = () => isInstanceOrganization(trx, organizationId);
  const settings = await trx
    .selectFrom("webServerSettings")
    .select(["host", "wildcardDomain"])
    .where("id", "=", 1)
    .executeTakeFirst();
  if (isWildcard(host)) {
    const parent = host.slice(2);
    if (!parent.includes(".")) {
      throw badRequest(`Invalid input: host: ${host} would claim a whole top-level domain`, {
        fields: ["host"],
      });
    }
    const shared = settings?.wildcardDomain.toLowerCase();
    const overlapsShared =
      shared && (parent === shared || shared.endsWith(`.${parent}`) || parent.endsWith(`.${shared}`));
    if (overlapsShared && !(await instanceOrganization())) {
      throw badRequest(`Invalid input: host: ${host} would claim the shared wildcard domain ${shared}`, {
        fields: ["host"],
      });
    }
  }
  await sql`select pg_advisory_xact_lock(${HOST_CLAIM_LOCK})`.execute(trx);
  const candidates = [host, ...coveringWildcards(host)];
  let query = withOwner(
    trx
      .selectFrom("domains")
      .innerJoin("applications", "applications.applicationId", "domains.applicationId"),
    "applications.environmentId",
  )
    .select("domains.host")
    .where("projects.organizationId", "<>", organizationId);
  query = query.where((eb) => {
    const checks = [eb("domains.host", "in", candidates)];
    if (isWildcard(host)) {
      const suffix = `.${host.slice(2)}`.replace(/[\\%_]/g, (character) => `\\${character}`);
      checks.push(eb("domains.host", "like", `%${suffix}`));
    }
    return eb.or(checks);
  });
  const taken = await query.limit(1).executeTakeFirst();
  if (taken) {
    throw conflict(`Invalid input: host: ${host} is already routed by another organization`, {
      fields: ["host"],
    });
  }
  if (route) await refuseSameRoute(trx, organizationId, host, route.path, route.exceptDomainId);
  if (settings?.host && hostsOverlap(host, settings.host.toLowerCase()) && !(await instanceOrganization())) {
    throw conflict(`Invalid input: host: ${host} is the control plane's own host`, { fields: ["host"] });
  }
}

/** The organization's application and compose domains on `host` + `path` (but `exceptDomainId`). */
async function refuseSameRoute(
  trx: Transaction<Database>,
  organizationId: string,
  host: string,
  path: string,
  exceptDomainId: string | undefined,
): Promise<void> {
  const byApplication = ownedBy(
    trx
      .selectFrom("domains")
      .innerJoin("applications", "applications.applicationId", "domains.applicationId"),
    "applications.environmentId",
    organizationId,
  )
    .select(["domains.domainId", "applications.name"])
    .where("domains.host", "=", host)
    .where("domains.path", "=", path);
  const byCompose = ownedBy(
    trx.selectFrom("domains").innerJoin("compose", "compose.composeId", "domains.composeId"),
    "compose.environmentId",
    organizationId,
  )
    .select(["domains.domainId", "compose.name"])
    .where("domains.host", "=", host)
    .where("domains.path", "=", path);
  const found = [...(await byApplication.execute()), ...(await byCompose.execute())].find(
    (row) => row.domainId !== exceptDomainId,
  );
  if (found) {
    throw badRequest(`Invalid input: host: ${host}${path} is already a domain of ${found.name}`, {
      fields: ["host"],
    });
  }
}
