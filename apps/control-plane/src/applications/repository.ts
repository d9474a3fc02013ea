/**
 * The SQL of applications: plain functions taking the database (or a transaction) first.
 * Every lookup by id is scoped to an organization through environment -> project, so a row of
 * another organization is simply not found. Rules live in routers/application.ts.
 */
import { randomBytes } from "node:crypto";
import { RESERVED_NAME_PREFIX } from "@platform/names";
import { sql } from "kysely";
import { newId, randomToken } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy, withOwner } from "../db/owned.ts";
import type { Application, ApplicationUpdate, NewApplication, Port } from "../db/schema.ts";
import { containing } from "../projects/repository.ts";

export type { Application, ApplicationUpdate };

export const APP_NAME_CONSTRAINT = "applications_app_name_unique";

/** What application.one adds: where the application lives. */
export interface ApplicationPlace {
  organizationId: string;
  projectId: string;
  projectName: string;
  environmentName: string;
}

export type LocatedApplication = Application & ApplicationPlace;

/** A fresh webhook token (application.refreshToken rotates it). */
export const newRefreshToken = () => randomToken(32);

const SUFFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/**
 * An appName from a display name (or an existing appName): lowercase slug of at most 50
 * characters plus a random 6-character suffix, always matching the spec 8 pattern.
 */
export function generateAppName(from: string): string {
  const slug =
    from
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 50)
      .replace(/-+$/, "") || "app";
  // `platform-*` is reserved for the platform's own services (@platform/names).
  const safe = `${slug}-`.startsWith(RESERVED_NAME_PREFIX) ? `app-${slug}`.slice(0, 50) : slug;
  const suffix = [...randomBytes(6)].map((byte) => SUFFIX_ALPHABET[byte % SUFFIX_ALPHABET.length]).join("");
  return `${safe}-${suffix}`;
}

export function insertApplication(
  db: Db,
  values: Omit<NewApplication, "applicationId" | "refreshToken"> & { applicationId?: string },
): Promise<Application> {
  return db
    .insertInto("applications")
    .values({ applicationId: newId(), refreshToken: newRefreshToken(), ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

function selectLocatedApplications(db: Db, organizationId: string) {
  return ownedBy(db.selectFrom("applications"), "applications.environmentId", organizationId)
    .selectAll("applications")
    .select([
      "projects.organizationId",
      "projects.projectId",
      "projects.name as projectName",
      "environments.name as environmentName",
    ]);
}

export function findApplication(
  db: Db,
  organizationId: string,
  applicationId: string,
): Promise<LocatedApplication | undefined> {
  return selectLocatedApplications(db, organizationId)
    .where("applications.applicationId", "=", applicationId)
    .executeTakeFirst();
}

/** The application of the organization with this appName (appNames are unique instance-wide). */
export function findApplicationByAppName(
  db: Db,
  organizationId: string,
  appName: string,
): Promise<LocatedApplication | undefined> {
  return selectLocatedApplications(db, organizationId)
    .where("applications.appName", "=", appName)
    .executeTakeFirst();
}

/** Applies `patch` to an application already found in the caller's organization. */
export async function updateApplication(
  db: Db,
  applicationId: string,
  patch: ApplicationUpdate,
): Promise<Application | undefined> {
  if (Object.keys(patch).length === 0) {
    return db
      .selectFrom("applications")
      .selectAll()
      .where("applicationId", "=", applicationId)
      .executeTakeFirst();
  }
  return db
    .updateTable("applications")
    .set(patch)
    .where("applicationId", "=", applicationId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteApplication(db: Db, applicationId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("applications")
    .where("applicationId", "=", applicationId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** True when `serverId` is a server of the organization. */
export async function serverBelongsTo(db: Db, organizationId: string, serverId: string): Promise<boolean> {
  const row = await db
    .selectFrom("servers")
    .select("serverId")
    .where("serverId", "=", serverId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Serializes the changes of one application's domains and credentials (its row is locked until commit). */
export async function lockApplication(trx: Db, applicationId: string): Promise<void> {
  await trx
    .selectFrom("applications")
    .select("applicationId")
    .where("applicationId", "=", applicationId)
    .forUpdate()
    .executeTakeFirst();
}

/** True when `sshKeyId` is an SSH key of the organization. */
export async function sshKeyBelongsTo(db: Db, organizationId: string, sshKeyId: string): Promise<boolean> {
  const row = await db
    .selectFrom("sshKeys")
    .select("sshKeyId")
    .where("sshKeyId", "=", sshKeyId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * How many applications each given server carries, in one query
 * (`select server_id, count(*) from applications where server_id in (…) group by server_id`).
 */
export async function countApplicationsByServer(
  db: Db,
  serverIds: readonly string[],
): Promise<Array<{ serverId: string; count: number }>> {
  if (serverIds.length === 0) return [];
  const rows = await db
    .selectFrom("applications")
    .select((eb) => ["serverId", eb.fn.countAll<number>().as("count")])
    .where("serverId", "in", serverIds)
    .groupBy("serverId")
    .execute();
  return rows.map((row) => ({ serverId: row.serverId!, count: Number(row.count) }));
}

/** Summaries of the applications of many environments in one query, oldest first. */
export function listApplicationSummaries(db: Db, environmentIds: readonly string[]) {
  return db
    .selectFrom("applications")
    .select([
      "applicationId",
      "environmentId",
      "name",
      "appName",
      "description",
      "serverId",
      "applicationStatus",
      "createdAt",
    ])
    .where("environmentId", "in", environmentIds)
    .orderBy("createdAt", "asc")
    .orderBy("applicationId", "asc")
    .execute();
}

/** Applications of many ids with their organization (for duplication). */
export function listApplicationsWithOrganization(db: Db, applicationIds: readonly string[]) {
  return withOwner(db.selectFrom("applications"), "applications.environmentId")
    .selectAll("applications")
    .select("projects.organizationId")
    .where("applications.applicationId", "in", applicationIds)
    .orderBy("applications.createdAt", "asc")
    .execute();
}

export interface VisibleIds {
  projects: ReadonlySet<string> | null;
  environments: ReadonlySet<string> | null;
  services: ReadonlySet<string> | null;
}

export interface ApplicationSearch {
  q?: string | undefined;
  name?: string | undefined;
  appName?: string | undefined;
  description?: string | undefined;
  repository?: string | undefined;
  owner?: string | undefined;
  dockerImage?: string | undefined;
  projectId?: string | undefined;
  environmentId?: string | undefined;
  limit: number;
  offset: number;
}

/** What search reads of each kind of service it covers (application.search, compose.search). */
const SEARCHABLE = {
  application: {
    table: "applications",
    id: "applicationId",
    filters: ["name", "appName", "description", "repository", "owner", "dockerImage"],
    columns: [
      "applicationId",
      "name",
      "appName",
      "description",
      "environmentId",
      "serverId",
      "applicationStatus",
      "sourceType",
      "buildType",
      "repository",
      "owner",
      "branch",
      "dockerImage",
      "createdAt",
    ],
  },
  compose: {
    table: "compose",
    id: "composeId",
    filters: ["name", "appName", "description", "repository", "owner"],
    columns: [
      "composeId",
      "name",
      "appName",
      "description",
      "environmentId",
      "serverId",
      "composeStatus",
      "sourceType",
      "composeType",
      "repository",
      "owner",
      "branch",
      "createdAt",
    ],
  },
} as const;

export type SearchableKind = keyof typeof SEARCHABLE;

/**
 * The organization's services of `kind` matching `search`: case-insensitive partial matching of
 * the text filters (blank ones ignored; `q` on name, appName and description), newest first,
 * with the total; only the ones `visible` lets the caller see.
 */
export async function searchServices<Row = Record<string, unknown>>(
  db: Db,
  kind: SearchableKind,
  organizationId: string,
  search: ApplicationSearch,
  /** A member's accessed lists (projects/permissions.ts); null entries do not restrict. */
  visible: VisibleIds = { projects: null, environments: null, services: null },
): Promise<{ items: Row[]; total: number }> {
  const { table, id, filters, columns } = SEARCHABLE[kind];
  const column = (name: string) => sql.ref(`${table}.${name}`);
  const lists = [
    [sql.ref("projects.projectId"), visible.projects],
    [sql.ref("environments.environmentId"), visible.environments],
    [column(id), visible.services],
  ] as const;
  if (lists.some(([, ids]) => ids?.size === 0)) return { items: [], total: 0 };
  // Both tables have environmentId: the typed join is the applications' one.
  let filtered = ownedBy(
    db.selectFrom(table as "applications"),
    `${table}.environmentId` as "applications.environmentId",
    organizationId,
  );
  for (const [ref, ids] of lists) {
    if (ids) filtered = filtered.where(ref, "in", [...ids]);
  }
  const q = search.q?.trim();
  if (q) {
    const pattern = containing(q);
    filtered = filtered.where((eb) =>
      eb.or([
        eb(column("name"), "ilike", pattern),
        eb(column("appName"), "ilike", pattern),
        eb(column("description"), "ilike", pattern),
      ]),
    );
  }
  for (const name of filters) {
    const text = (search as unknown as Record<string, string | undefined>)[name]?.trim();
    if (text) filtered = filtered.where(column(name), "ilike", containing(text));
  }
  if (search.projectId) filtered = filtered.where("projects.projectId", "=", search.projectId);
  if (search.environmentId) filtered = filtered.where(column("environmentId"), "=", search.environmentId);

  const [items, count] = await Promise.all([
    filtered
      .select([...columns.map((name) => column(name).as(name)), "projects.projectId"])
      .orderBy(column("createdAt"), "desc")
      .orderBy(column(id), "desc")
      .limit(search.limit)
      .offset(search.offset)
      .execute(),
    filtered.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
  ]);
  return { items: items as Row[], total: Number(count.total) };
}

/** The organization's applications matching `search` (searchServices). */
export function searchApplications(
  db: Db,
  organizationId: string,
  search: ApplicationSearch,
  visible?: VisibleIds,
) {
  return searchServices<
    Pick<Application, (typeof SEARCHABLE.application.columns)[number]> & { projectId: string }
  >(db, "application", organizationId, search, visible);
}

/** The application's ports in a stable order (the service spec lists them so). */
export function listApplicationPorts(db: Db, applicationId: string): Promise<Port[]> {
  return db
    .selectFrom("ports")
    .selectAll()
    .where("applicationId", "=", applicationId)
    .orderBy("publishedPort")
    .orderBy("protocol")
    .execute();
}
