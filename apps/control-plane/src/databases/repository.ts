/**
 * Rows of database services (all five kinds in one table). Reads on behalf of a caller go
 * through the organization of the environment: another organization's service is not found.
 */
import { sql } from "kysely";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy, withOwner } from "../db/owned.ts";
import type {
  DatabaseKind,
  DatabaseService,
  DatabaseServiceUpdate,
  NewDatabaseService,
} from "../db/schema.ts";
import { containing } from "../projects/repository.ts";

export type { DatabaseService, DatabaseServiceUpdate };

/** A member's accessed lists (projects/permissions.ts); null entries do not restrict. */
export interface VisibleIds {
  projects: ReadonlySet<string> | null;
  environments: ReadonlySet<string> | null;
  services: ReadonlySet<string> | null;
}

export const DATABASE_APP_NAME_CONSTRAINT = "database_services_app_name_unique";

/** A database service with where it lives. */
export type LocatedDatabase = DatabaseService & {
  organizationId: string;
  projectId: string;
  projectName: string;
  environmentName: string;
};

export function insertDatabase(db: Db, values: NewDatabaseService): Promise<DatabaseService> {
  return db.insertInto("databaseServices").values(values).returningAll().executeTakeFirstOrThrow();
}

export const newDatabaseId = () => newId();

/** The service of that kind and id in the organization; undefined otherwise. */
export function findDatabase(
  db: Db,
  organizationId: string,
  kind: DatabaseKind,
  databaseId: string,
): Promise<LocatedDatabase | undefined> {
  return ownedBy(db.selectFrom("databaseServices"), "databaseServices.environmentId", organizationId)
    .selectAll("databaseServices")
    .select([
      "projects.organizationId",
      "projects.projectId",
      "projects.name as projectName",
      "environments.name as environmentName",
    ])
    .where("databaseServices.kind", "=", kind)
    .where("databaseServices.databaseId", "=", databaseId)
    .executeTakeFirst();
}

/** The service with its organization, whatever the caller (deployments, teardown). */
export function findDatabaseWithOrganization(db: Db, databaseId: string) {
  return withOwner(db.selectFrom("databaseServices"), "databaseServices.environmentId")
    .selectAll("databaseServices")
    .select("projects.organizationId")
    .where("databaseServices.databaseId", "=", databaseId)
    .executeTakeFirst();
}

export async function updateDatabase(
  db: Db,
  databaseId: string,
  patch: DatabaseServiceUpdate,
): Promise<DatabaseService | undefined> {
  if (Object.keys(patch).length === 0) {
    return db
      .selectFrom("databaseServices")
      .selectAll()
      .where("databaseId", "=", databaseId)
      .executeTakeFirst();
  }
  return db
    .updateTable("databaseServices")
    .set(patch)
    .where("databaseId", "=", databaseId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteDatabase(db: Db, databaseId: string): Promise<void> {
  await db.deleteFrom("databaseServices").where("databaseId", "=", databaseId).execute();
}

/** Whether an application, a database service or a compose stack has this appName (one Swarm namespace). */
export async function appNameTaken(db: Db, appName: string): Promise<boolean> {
  const row = await db
    .selectFrom("applications")
    .select(sql<number>`1`.as("one"))
    .where("appName", "=", appName)
    .unionAll(
      db.selectFrom("databaseServices").select(sql<number>`1`.as("one")).where("appName", "=", appName),
    )
    .unionAll(db.selectFrom("compose").select(sql<number>`1`.as("one")).where("appName", "=", appName))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether a database service has this appName (applications check theirs with it). */
export async function databaseAppNameTaken(db: Db, appName: string): Promise<boolean> {
  const row = await db
    .selectFrom("databaseServices")
    .select("databaseId")
    .where("appName", "=", appName)
    .executeTakeFirst();
  return row !== undefined;
}

/** Summaries of the database services of one kind in many environments, oldest first. */
export function listDatabaseSummaries(db: Db, kind: DatabaseKind, environmentIds: readonly string[]) {
  return db
    .selectFrom("databaseServices")
    .select([
      "databaseId",
      "environmentId",
      "name",
      "appName",
      "description",
      "serverId",
      "applicationStatus",
      "createdAt",
    ])
    .where("kind", "=", kind)
    .where("environmentId", "in", environmentIds)
    .orderBy("createdAt", "asc")
    .orderBy("databaseId", "asc")
    .execute();
}

export function listDatabasesWithOrganization(db: Db, databaseIds: readonly string[]) {
  return withOwner(db.selectFrom("databaseServices"), "databaseServices.environmentId")
    .selectAll("databaseServices")
    .select("projects.organizationId")
    .where("databaseServices.databaseId", "in", databaseIds)
    .execute();
}

export async function countDatabasesByServer(
  db: Db,
  serverIds: readonly string[],
): Promise<Array<{ serverId: string; count: number }>> {
  if (serverIds.length === 0) return [];
  const rows = await db
    .selectFrom("databaseServices")
    .select((eb) => ["serverId", eb.fn.countAll<number>().as("count")])
    .where("serverId", "in", serverIds)
    .groupBy("serverId")
    .execute();
  return rows.map((row) => ({ serverId: row.serverId!, count: Number(row.count) }));
}

export interface DatabaseSearch {
  q?: string | undefined;
  name?: string | undefined;
  appName?: string | undefined;
  description?: string | undefined;
  projectId?: string | undefined;
  environmentId?: string | undefined;
  limit: number;
  offset: number;
}

/**
 * `<kind>.search`: the organization's services of that kind, case-insensitive partial matching of
 * the text filters (blank ones ignored), newest first; a member sees only what the grants allow.
 */
export async function searchDatabases(
  db: Db,
  organizationId: string,
  kind: DatabaseKind,
  search: DatabaseSearch,
  visible: VisibleIds,
) {
  const lists = [
    ["projects.projectId", visible.projects],
    ["environments.environmentId", visible.environments],
    ["databaseServices.databaseId", visible.services],
  ] as const;
  if (lists.some(([, ids]) => ids?.size === 0)) return { items: [], total: 0 };
  let filtered = ownedBy(
    db.selectFrom("databaseServices"),
    "databaseServices.environmentId",
    organizationId,
  ).where("databaseServices.kind", "=", kind);
  for (const [column, ids] of lists) {
    if (ids) filtered = filtered.where(column, "in", [...ids]);
  }
  const q = search.q?.trim();
  if (q) {
    const pattern = containing(q);
    filtered = filtered.where((eb) =>
      eb.or([
        eb("databaseServices.name", "ilike", pattern),
        eb("databaseServices.appName", "ilike", pattern),
        eb("databaseServices.description", "ilike", pattern),
      ]),
    );
  }
  const textFilters = [
    ["databaseServices.name", search.name],
    ["databaseServices.appName", search.appName],
    ["databaseServices.description", search.description],
  ] as const;
  for (const [column, value] of textFilters) {
    const text = value?.trim();
    if (text) filtered = filtered.where(column, "ilike", containing(text));
  }
  if (search.projectId) filtered = filtered.where("projects.projectId", "=", search.projectId);
  if (search.environmentId) {
    filtered = filtered.where("databaseServices.environmentId", "=", search.environmentId);
  }
  const [items, count] = await Promise.all([
    filtered
      .select([
        "databaseServices.databaseId",
        "databaseServices.name",
        "databaseServices.appName",
        "databaseServices.description",
        "databaseServices.environmentId",
        "projects.projectId",
        "databaseServices.serverId",
        "databaseServices.applicationStatus",
        "databaseServices.createdAt",
      ])
      .orderBy("databaseServices.createdAt", "desc")
      .orderBy("databaseServices.databaseId", "desc")
      .limit(search.limit)
      .offset(search.offset)
      .execute(),
    filtered.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.total) };
}
