/**
 * SQL for organizations as tenants: creating one (its creator becomes the owner) and deleting
 * an empty one. Deleting removes every member as user.remove does (a user left in no
 * organization goes too) and cascades to its invitations, empty projects, registries and SSH
 * keys; sessions active in it move to another organization of their user.
 */
import { sql } from "kysely";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import { loadServiceSummaries } from "../projects/workload-kinds.ts";
import { removeFromOrganization } from "../users/repository.ts";

export async function createOrganization(db: Db, ownerId: string, name: string): Promise<string> {
  const organizationId = newId();
  await db.transaction().execute((trx) => insertOrganizationWithOwner(trx, organizationId, ownerId, name));
  return organizationId;
}

/** An organization and its owner's membership; run in a transaction. */
export async function insertOrganizationWithOwner(
  trx: Db,
  organizationId: string,
  ownerId: string,
  name: string,
): Promise<void> {
  await trx.insertInto("organizations").values({ organizationId, name, ownerId }).execute();
  await trx
    .insertInto("members")
    .values({
      memberId: newId(),
      organizationId,
      userId: ownerId,
      role: "owner",
      canCreateProjects: true,
      canDeleteProjects: true,
      canAccessAuditLog: true,
    })
    .execute();
}

export async function findOrganizationName(db: Db, organizationId: string): Promise<string> {
  const organization = await db
    .selectFrom("organizations")
    .select("name")
    .where("organizationId", "=", organizationId)
    .executeTakeFirstOrThrow();
  return organization.name;
}

/**
 * What still keeps the organization from being deleted ("2 services and 1 server"), or null.
 * Services have running parts (Swarm services, volumes, published ports, proxy files) that the
 * cascade would leave behind; they are counted through the service-kind registry, so every
 * kind (applications, databases, and the next one registered) keeps it.
 */
export async function organizationInUse(db: Db, organizationId: string): Promise<string | null> {
  const environments = await ownedBy(db.selectFrom("environments"), "environments", organizationId)
    .select("environments.environmentId")
    .execute();
  const summaries = await loadServiceSummaries(
    db,
    environments.map((environment) => environment.environmentId),
  );
  let serviceCount = 0;
  for (const services of summaries.values()) {
    for (const ofKind of Object.values(services)) serviceCount += ofKind.length;
  }
  const servers = await db
    .selectFrom("servers")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("organizationId", "=", organizationId)
    .executeTakeFirstOrThrow();
  const parts = [
    [serviceCount, "service"],
    [Number(servers.count), "server"],
  ] as const;
  const left = parts
    .filter(([count]) => count > 0)
    .map(([count, noun]) => `${count} ${noun}${count > 1 ? "s" : ""}`);
  return left.length > 0 ? left.join(" and ") : null;
}

export async function deleteOrganization(db: Db, organizationId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Sessions active in it switch to their user's oldest other organization (the cascade below
    // ends the sessions of users who have none).
    await sql`
      update sessions set active_organization_id = other.organization_id
      from (
        select distinct on (user_id) user_id, organization_id from members
        where organization_id <> ${organizationId}
        order by user_id, created_at, organization_id
      ) as other
      where sessions.user_id = other.user_id and sessions.active_organization_id = ${organizationId}
    `.execute(trx);
    const members = await trx
      .selectFrom("members")
      .select("userId")
      .where("organizationId", "=", organizationId)
      .execute();
    for (const { userId } of members) await removeFromOrganization(trx, organizationId, userId);
    await trx.deleteFrom("organizations").where("organizationId", "=", organizationId).execute();
  });
}
