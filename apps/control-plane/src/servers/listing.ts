/**
 * The server lists beside server.all (server.withSSHKey, buildServers, allForPermissions,
 * count) and the services placed on one server (server.getServices), each scoped to the
 * caller's organization (server.count: to the organizations the caller owns).
 */
import type { Caller } from "../context.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type { Server, ServerType } from "../db/schema.ts";
import { grantsOf, seesService } from "../projects/permissions.ts";
import {
  loadServiceSummaries,
  type ServiceKind,
  serviceFields,
  serviceIdKey,
  serviceKinds,
} from "../projects/workload-kinds.ts";

/** The organization's servers that have an SSH key and are of `serverType`, newest first. */
export function listServersWithSshKey(
  db: Db,
  organizationId: string,
  serverType: ServerType,
  activeOnly: boolean,
): Promise<Server[]> {
  let query = db
    .selectFrom("servers")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .where("sshKeyId", "is not", null)
    .where("serverType", "=", serverType);
  if (activeOnly) query = query.where("serverStatus", "=", "active");
  return query.orderBy("createdAt", "desc").orderBy("serverId", "desc").execute();
}

/** What a permission form needs of each server of the organization, newest first. */
export function listServersForPermissions(db: Db, organizationId: string) {
  return db
    .selectFrom("servers")
    .select(["serverId", "name", "ipAddress", "serverType"])
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("serverId", "desc")
    .execute();
}

/** How many servers the organizations owned by `userId` have together. */
export async function countServersOfOwnedOrganizations(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom("servers")
    .innerJoin("members", "members.organizationId", "servers.organizationId")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("members.userId", "=", userId)
    .where("members.role", "=", "owner")
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Whether the organization has a server or a project yet. */
export async function organizationHasServersOrProjects(db: Db, organizationId: string): Promise<boolean> {
  const server = await db
    .selectFrom("servers")
    .select("serverId")
    .where("organizationId", "=", organizationId)
    .limit(1)
    .executeTakeFirst();
  if (server) return true;
  const project = await db
    .selectFrom("projects")
    .select("projectId")
    .where("organizationId", "=", organizationId)
    .limit(1)
    .executeTakeFirst();
  return project !== undefined;
}

export interface ServerService {
  id: string;
  type: ServiceKind;
  name: string;
  projectId: string;
  projectName: string;
  environmentId: string;
  environmentName: string;
  /** The service's page in this platform's dashboard. */
  url: string;
}

const DATABASE_KINDS: ReadonlySet<ServiceKind> = new Set([
  "postgres",
  "mysql",
  "mariadb",
  "mongo",
  "redis",
  "libsql",
]);

function dashboardUrl(kind: ServiceKind, id: string): string {
  const parts = DATABASE_KINDS.has(kind) ? ["database", kind, id] : [kind, id];
  return `/#/${parts.map(encodeURIComponent).join("/")}`;
}

/**
 * The services of the caller's organization placed on `serverId` (a server of that organization,
 * already checked), those a restricted member was not granted left out; by kind, then name.
 */
export async function servicesOnServer(db: Db, caller: Caller, serverId: string): Promise<ServerService[]> {
  const environments = await ownedBy(db.selectFrom("environments"), "environments", caller.organizationId)
    .select([
      "environments.environmentId",
      "environments.name as environmentName",
      "projects.projectId",
      "projects.name as projectName",
    ])
    .execute();
  const byId = new Map(environments.map((environment) => [environment.environmentId, environment]));
  const summaries = await loadServiceSummaries(db, [...byId.keys()]);
  const grants = await grantsOf(db, caller);
  const found: ServerService[] = [];
  for (const [environmentId, services] of summaries) {
    const environment = byId.get(environmentId)!;
    for (const kind of serviceKinds) {
      for (const row of services[serviceFields[kind]] as Record<string, unknown>[]) {
        if (row.serverId !== serverId) continue;
        const id = row[serviceIdKey(kind)] as string;
        if (!seesService(grants, { serviceId: id, environmentId, projectId: environment.projectId }))
          continue;
        found.push({
          id,
          type: kind,
          name: row.name as string,
          projectId: environment.projectId,
          projectName: environment.projectName,
          environmentId,
          environmentName: environment.environmentName,
          url: dashboardUrl(kind, id),
        });
      }
    }
  }
  const order = (kind: ServiceKind) => serviceKinds.indexOf(kind);
  return found.sort(
    (a, b) => order(a.type) - order(b.type) || a.name.localeCompare(b.name) || a.id.localeCompare(b.id),
  );
}
