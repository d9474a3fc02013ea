/**
 * The SQL of forward auth: an organization's OIDC providers, its servers' authentication
 * services (settings; serverId null is this machine) and the domains they protect. Every lookup
 * by id is scoped to the organization, so another organization's row is not found.
 */
import { type Insertable, sql, type Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import { ownedBy, withOwner } from "../db/owned.ts";
import type {
  ForwardAuthProviderRow,
  ForwardAuthProviderTable,
  ForwardAuthSettingsRow,
  ForwardAuthSettingsTable,
} from "../db/schema.ts";

export const AUTH_DOMAIN_CONSTRAINT = "forward_auth_settings_auth_domain_unique";
export const SETTINGS_SERVER_CONSTRAINT = "forward_auth_settings_server_unique";

export function findProvider(
  db: Db,
  organizationId: string,
  providerId: string,
): Promise<ForwardAuthProviderRow | undefined> {
  return db
    .selectFrom("forwardAuthProviders")
    .selectAll()
    .where("providerId", "=", providerId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** The organization's providers, oldest first (Dokploy's order). */
export function listProviders(db: Db, organizationId: string): Promise<ForwardAuthProviderRow[]> {
  return db
    .selectFrom("forwardAuthProviders")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "asc")
    .orderBy("providerId", "asc")
    .execute();
}

export function insertProvider(
  db: Db,
  values: Insertable<ForwardAuthProviderTable>,
): Promise<ForwardAuthProviderRow> {
  return db.insertInto("forwardAuthProviders").values(values).returningAll().executeTakeFirstOrThrow();
}

export async function deleteProvider(db: Db, providerId: string): Promise<void> {
  await db.deleteFrom("forwardAuthProviders").where("providerId", "=", providerId).execute();
}

/** The servers (null: this machine) whose authentication service signs in with the provider. */
export async function serversUsingProvider(db: Db, providerId: string): Promise<(string | null)[]> {
  const rows = await db
    .selectFrom("forwardAuthSettings")
    .select("serverId")
    .where("providerId", "=", providerId)
    .execute();
  return rows.map((row) => row.serverId);
}

/** The organization's settings of one server (null: this machine). */
export function findSettings(
  db: Db,
  organizationId: string,
  serverId: string | null,
): Promise<ForwardAuthSettingsRow | undefined> {
  let query = db.selectFrom("forwardAuthSettings").selectAll().where("organizationId", "=", organizationId);
  query = serverId === null ? query.where("serverId", "is", null) : query.where("serverId", "=", serverId);
  return query.executeTakeFirst();
}

export function listSettings(db: Db, organizationId: string): Promise<ForwardAuthSettingsRow[]> {
  return db
    .selectFrom("forwardAuthSettings")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .execute();
}

export function insertSettings(
  db: Db,
  values: Insertable<ForwardAuthSettingsTable>,
): Promise<ForwardAuthSettingsRow> {
  return db.insertInto("forwardAuthSettings").values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateSettings(
  db: Db,
  forwardAuthSettingsId: string,
  patch: Updateable<ForwardAuthSettingsTable>,
): Promise<ForwardAuthSettingsRow> {
  return db
    .updateTable("forwardAuthSettings")
    .set(patch)
    .where("forwardAuthSettingsId", "=", forwardAuthSettingsId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteSettings(db: Db, forwardAuthSettingsId: string): Promise<void> {
  await db
    .deleteFrom("forwardAuthSettings")
    .where("forwardAuthSettingsId", "=", forwardAuthSettingsId)
    .execute();
}

/** How many of the organization's domains on the server (null: this machine) are protected. */
export async function countProtectedDomains(
  db: Db,
  organizationId: string,
  serverId: string | null,
): Promise<number> {
  let query = ownedBy(
    db
      .selectFrom("forwardAuthDomains")
      .innerJoin("domains", "domains.domainId", "forwardAuthDomains.domainId")
      .innerJoin("applications", "applications.applicationId", "domains.applicationId"),
    "applications.environmentId",
    organizationId,
  ).select((eb) => eb.fn.countAll<string>().as("count"));
  query =
    serverId === null
      ? query.where("applications.serverId", "is", null)
      : query.where("applications.serverId", "=", serverId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function isDomainProtected(db: Db, domainId: string): Promise<boolean> {
  const row = await db
    .selectFrom("forwardAuthDomains")
    .select("domainId")
    .where("domainId", "=", domainId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function protectDomain(db: Db, domainId: string): Promise<void> {
  await db
    .insertInto("forwardAuthDomains")
    .values({ domainId })
    .onConflict((c) => c.doNothing())
    .execute();
}

export async function unprotectDomain(db: Db, domainId: string): Promise<void> {
  await db.deleteFrom("forwardAuthDomains").where("domainId", "=", domainId).execute();
}

/**
 * The application's protected domains, each with the settings of the application's server in
 * its organization (undefined `forwardAuthSettingsId`: that server has no authentication service).
 */
export async function protectedDomainsOf(
  db: Db,
  applicationId: string,
): Promise<{ domainId: string; forwardAuthSettingsId: string | null }[]> {
  return withOwner(
    db
      .selectFrom("forwardAuthDomains")
      .innerJoin("domains", "domains.domainId", "forwardAuthDomains.domainId")
      .innerJoin("applications", "applications.applicationId", "domains.applicationId"),
    "applications.environmentId",
  )
    .leftJoin("forwardAuthSettings", (join) =>
      join
        .onRef("forwardAuthSettings.organizationId", "=", "projects.organizationId")
        .on(sql<boolean>`forward_auth_settings.server_id is not distinct from applications.server_id`),
    )
    .select(["forwardAuthDomains.domainId", "forwardAuthSettings.forwardAuthSettingsId"])
    .where("domains.applicationId", "=", applicationId)
    .execute();
}
