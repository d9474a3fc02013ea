/**
 * SQL for organizations as tenants: creating one (its creator becomes the owner) and deleting
 * an empty one. Deleting removes every member as user.remove does (a user left in no
 * organization goes too) and cascades to its invitations, empty projects, registries and SSH
 * keys; sessions active in it move to another organization of their user.
 */
import { sql } from "kysely";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { removeFromOrganization } from "../users/repository.ts";

export async function createOrganization(db: Db, ownerId: string, name: string): Promise<string> {
  const organizationId = newId();
  await db.transaction().execute(async (trx) => {
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
  });
  return organizationId;
}

/**
 * What still keeps the organization from being deleted ("2 services and 1 server"), or null.
 * Services have running parts (Swarm services, proxy files) that must be torn down first;
 * a new service kind must be counted here.
 */
export async function organizationInUse(db: Db, organizationId: string): Promise<string | null> {
  const applications = await db
    .selectFrom("applications")
    .innerJoin("environments", "environments.environmentId", "applications.environmentId")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("projects.organizationId", "=", organizationId)
    .executeTakeFirstOrThrow();
  // Database services are services too: the cascade would drop their rows and leave their Swarm
  // services, volumes and published ports running with nothing left to remove them.
  const databases = await db
    .selectFrom("databaseServices")
    .innerJoin("environments", "environments.environmentId", "databaseServices.environmentId")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("projects.organizationId", "=", organizationId)
    .executeTakeFirstOrThrow();
  const servers = await db
    .selectFrom("servers")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("organizationId", "=", organizationId)
    .executeTakeFirstOrThrow();
  const parts = [
    [Number(applications.count) + Number(databases.count), "service"],
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
