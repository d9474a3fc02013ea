/**
 * The SQL of domains and security credentials. Lookups by id are scoped to an organization
 * through application (or compose stack) -> environment -> project, so another organization's row
 * is not found.
 */
import { type Insertable, sql, type Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type { Domain, DomainTable, Security } from "../db/schema.ts";

export type { Domain, Security };

export const SECURITY_USERNAME_CONSTRAINT = "security_application_username_unique";

/** A domain with the organization its application belongs to. */
export type LocatedDomain = Domain & { organizationId: string };

export function findDomain(
  db: Db,
  organizationId: string,
  domainId: string,
): Promise<LocatedDomain | undefined> {
  return ownedBy(
    db
      .selectFrom("domains")
      .leftJoin("applications", "applications.applicationId", "domains.applicationId")
      .leftJoin("compose", "compose.composeId", "domains.composeId"),
    sql<string>`coalesce(applications.environment_id, compose.environment_id)`,
    organizationId,
  )
    .selectAll("domains")
    .select("projects.organizationId")
    .where("domains.domainId", "=", domainId)
    .executeTakeFirst();
}

/** The application's domains, in the order they were created. */
export function listApplicationDomains(db: Db, applicationId: string): Promise<Domain[]> {
  return db
    .selectFrom("domains")
    .selectAll()
    .where("applicationId", "=", applicationId)
    .where("domainType", "=", "application")
    .orderBy("uniqueConfigKey", "asc")
    .execute();
}

/** The ids of a compose stack's domains. */
export async function composeDomainIds(db: Db, composeId: string): Promise<string[]> {
  const rows = await db.selectFrom("domains").select("domainId").where("composeId", "=", composeId).execute();
  return rows.map((row) => row.domainId);
}

export function insertDomain(db: Db, values: Insertable<DomainTable>): Promise<Domain> {
  return db.insertInto("domains").values(values).returningAll().executeTakeFirstOrThrow();
}

/** Applies `patch` to a domain already found in the caller's organization. */
export function updateDomain(db: Db, domainId: string, patch: Updateable<DomainTable>): Promise<Domain> {
  return db
    .updateTable("domains")
    .set(patch)
    .where("domainId", "=", domainId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteDomain(db: Db, domainId: string): Promise<void> {
  await db.deleteFrom("domains").where("domainId", "=", domainId).execute();
}

/** A credential with the organization its application belongs to. */
export type LocatedSecurity = Security & { organizationId: string };

export function findSecurity(
  db: Db,
  organizationId: string,
  securityId: string,
): Promise<LocatedSecurity | undefined> {
  return ownedBy(
    db
      .selectFrom("security")
      .innerJoin("applications", "applications.applicationId", "security.applicationId"),
    "applications.environmentId",
    organizationId,
  )
    .selectAll("security")
    .select("projects.organizationId")
    .where("security.securityId", "=", securityId)
    .executeTakeFirst();
}

/** The application's credentials, oldest first (the order of the basicAuth users). */
export function listApplicationCredentials(db: Db, applicationId: string): Promise<Security[]> {
  return db
    .selectFrom("security")
    .selectAll()
    .where("applicationId", "=", applicationId)
    .orderBy("createdAt", "asc")
    .orderBy("username", "asc")
    .execute();
}
