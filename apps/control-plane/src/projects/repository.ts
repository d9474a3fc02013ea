/**
 * The SQL of projects and environments: plain functions taking the database (or a
 * transaction) first. Every lookup by id is scoped to an organization, so a row of another
 * organization is simply not found. Rules (permissions, defaults, conflicts) live in the routers,
 * except the 409 of a duplicate environment name, which both the environment and project routers raise.
 */
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type { Environment, Project } from "../db/schema.ts";
import { conflict } from "../errors.ts";

export type { Environment, Project };

export interface ProjectValues {
  organizationId: string;
  name: string;
  description: string | null;
  env: string;
}

export interface EnvironmentValues {
  projectId: string;
  name: string;
  description: string | null;
  env: string;
  isDefault: boolean;
}

export interface ProjectPatch {
  name?: string;
  description?: string | null;
  env?: string;
}

export type EnvironmentPatch = ProjectPatch;

export const ENVIRONMENT_NAME_CONSTRAINT = "environments_project_name_unique";

export function insertProject(db: Db, values: ProjectValues): Promise<Project> {
  return db
    .insertInto("projects")
    .values({ projectId: newId(), ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function insertEnvironment(db: Db, values: EnvironmentValues): Promise<Environment> {
  return db
    .insertInto("environments")
    .values({ environmentId: newId(), ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findProject(db: Db, organizationId: string, projectId: string): Promise<Project | undefined> {
  return db
    .selectFrom("projects")
    .selectAll()
    .where("projectId", "=", projectId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** The organization's projects, newest first. */
export function listProjects(db: Db, organizationId: string): Promise<Project[]> {
  return db
    .selectFrom("projects")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("projectId", "desc")
    .execute();
}

/** Environments of many projects in one query: per project the default first, then by age. */
export async function listEnvironments(db: Db, projectIds: readonly string[]): Promise<Environment[]> {
  if (projectIds.length === 0) return [];
  return db
    .selectFrom("environments")
    .selectAll()
    .where("projectId", "in", projectIds)
    .orderBy("isDefault", "desc")
    .orderBy("createdAt", "asc")
    .orderBy("name", "asc")
    .execute();
}

export async function updateProject(
  db: Db,
  organizationId: string,
  projectId: string,
  patch: ProjectPatch,
): Promise<Project | undefined> {
  if (Object.keys(patch).length === 0) return findProject(db, organizationId, projectId);
  return db
    .updateTable("projects")
    .set(patch)
    .where("projectId", "=", projectId)
    .where("organizationId", "=", organizationId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a project; its environments go with it (ON DELETE CASCADE). */
export async function deleteProject(db: Db, organizationId: string, projectId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("projects")
    .where("projectId", "=", projectId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Escapes LIKE wildcards so user text matches literally (backslash is Postgres' default escape). */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, "\\$&");
}

/** An ilike pattern that matches `text` anywhere, its wildcards taken literally. */
export const containing = (text: string) => `%${escapeLike(text)}%`;

export interface ProjectSearch {
  /** Matches name or description. */
  q?: string | undefined;
  name?: string | undefined;
  description?: string | undefined;
  limit: number;
  offset: number;
  /** Only these projects (a member's accessedProjects); absent or null: every one. */
  projectIds?: ReadonlySet<string> | null;
}

/** Case-insensitive partial matching; blank filters are ignored. Newest first. */
export async function searchProjects(
  db: Db,
  organizationId: string,
  search: ProjectSearch,
): Promise<{ items: Project[]; total: number }> {
  const q = search.q?.trim();
  const name = search.name?.trim();
  const description = search.description?.trim();
  if (search.projectIds && search.projectIds.size === 0) return { items: [], total: 0 };
  let filtered = db.selectFrom("projects").where("organizationId", "=", organizationId);
  if (search.projectIds) filtered = filtered.where("projectId", "in", [...search.projectIds]);
  if (q) {
    const pattern = containing(q);
    filtered = filtered.where((eb) =>
      eb.or([eb("name", "ilike", pattern), eb("description", "ilike", pattern)]),
    );
  }
  if (name) filtered = filtered.where("name", "ilike", containing(name));
  if (description) filtered = filtered.where("description", "ilike", containing(description));

  const [items, count] = await Promise.all([
    filtered
      .selectAll()
      .orderBy("createdAt", "desc")
      .orderBy("projectId", "desc")
      .limit(search.limit)
      .offset(search.offset)
      .execute(),
    filtered.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.total) };
}

export interface EnvironmentSearch {
  /** Matches name or description. */
  q?: string | undefined;
  name?: string | undefined;
  description?: string | undefined;
  projectId?: string | undefined;
  limit: number;
  offset: number;
  /** A member's lists (projects/permissions.ts); null: every one. */
  projectIds: ReadonlySet<string> | null;
  environmentIds: ReadonlySet<string> | null;
}

/** environment.search: case-insensitive partial matching, blank filters ignored, newest first. */
export async function searchEnvironments(
  db: Db,
  organizationId: string,
  search: EnvironmentSearch,
): Promise<{ items: Environment[]; total: number }> {
  if (search.projectIds?.size === 0 || search.environmentIds?.size === 0) return { items: [], total: 0 };
  let filtered = ownedBy(db.selectFrom("environments"), "environments", organizationId);
  if (search.projectIds) filtered = filtered.where("environments.projectId", "in", [...search.projectIds]);
  if (search.environmentIds) {
    filtered = filtered.where("environments.environmentId", "in", [...search.environmentIds]);
  }
  if (search.projectId) filtered = filtered.where("environments.projectId", "=", search.projectId);
  const q = search.q?.trim();
  if (q) {
    const pattern = containing(q);
    filtered = filtered.where((eb) =>
      eb.or([eb("environments.name", "ilike", pattern), eb("environments.description", "ilike", pattern)]),
    );
  }
  const name = search.name?.trim();
  if (name) filtered = filtered.where("environments.name", "ilike", containing(name));
  const description = search.description?.trim();
  if (description) filtered = filtered.where("environments.description", "ilike", containing(description));
  const [items, count] = await Promise.all([
    filtered
      .selectAll("environments")
      .orderBy("environments.createdAt", "desc")
      .orderBy("environments.environmentId", "desc")
      .limit(search.limit)
      .offset(search.offset)
      .execute(),
    filtered.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.total) };
}

/** An environment, found only when its project belongs to the organization. */
export function findEnvironment(
  db: Db,
  organizationId: string,
  environmentId: string,
): Promise<Environment | undefined> {
  return ownedBy(db.selectFrom("environments"), "environments", organizationId)
    .selectAll("environments")
    .where("environments.environmentId", "=", environmentId)
    .executeTakeFirst();
}

/** An environment with its project (read by the same join), found only in the organization. */
export async function findEnvironmentWithProject(
  db: Db,
  organizationId: string,
  environmentId: string,
): Promise<{ environment: Environment; project: Project } | undefined> {
  const row = await ownedBy(db.selectFrom("environments"), "environments", organizationId)
    .selectAll("environments")
    .select([
      "projects.name as projectName",
      "projects.description as projectDescription",
      "projects.env as projectEnv",
      "projects.createdAt as projectCreatedAt",
    ])
    .where("environments.environmentId", "=", environmentId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { projectName, projectDescription, projectEnv, projectCreatedAt, ...environment } = row;
  const project: Project = {
    projectId: environment.projectId,
    organizationId,
    name: projectName,
    description: projectDescription,
    env: projectEnv,
    createdAt: projectCreatedAt,
  };
  return { environment, project };
}

export async function updateEnvironment(
  db: Db,
  environmentId: string,
  patch: EnvironmentPatch,
): Promise<Environment | undefined> {
  if (Object.keys(patch).length === 0) {
    return db
      .selectFrom("environments")
      .selectAll()
      .where("environmentId", "=", environmentId)
      .executeTakeFirst();
  }
  return db
    .updateTable("environments")
    .set(patch)
    .where("environmentId", "=", environmentId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEnvironment(db: Db, environmentId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("environments")
    .where("environmentId", "=", environmentId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * True when `error` is Postgres' unique_violation (23505), of `constraint` when one is given
 * (as `pg` reports it).
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  const {
    code,
    constraint: violated,
    message,
  } = error as {
    code?: unknown;
    constraint?: unknown;
    message?: unknown;
  };
  if (code !== "23505") return false;
  if (constraint === undefined) return true;
  return violated === constraint || (typeof message === "string" && message.includes(constraint));
}

/**
 * Runs a write of an environment named `name` (insert, update, or a transaction making one),
 * turning a duplicate name in its project into 409 naming `name`.
 */
export async function uniqueEnvironmentName<T>(
  name: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, ENVIRONMENT_NAME_CONSTRAINT)) {
      throw conflict(`This project already has an environment named "${name}"`, { fields: ["name"] });
    }
    throw error;
  }
}

/** Which of `projectIds` are projects of the organization. */
export async function existingProjectIds(
  db: Db,
  organizationId: string,
  projectIds: readonly string[],
): Promise<Set<string>> {
  if (projectIds.length === 0) return new Set();
  const rows = await db
    .selectFrom("projects")
    .select("projectId as id")
    .where("organizationId", "=", organizationId)
    .where("projectId", "in", projectIds)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Which of `serverIds` are the organization's servers. */
export async function existingServerIds(
  db: Db,
  organizationId: string,
  serverIds: readonly string[],
): Promise<Set<string>> {
  if (serverIds.length === 0) return new Set();
  const rows = await db
    .selectFrom("servers")
    .select("serverId as id")
    .where("organizationId", "=", organizationId)
    .where("serverId", "in", serverIds)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Which of `gitProviderIds` are the organization's git providers. */
export async function existingGitProviderIds(
  db: Db,
  organizationId: string,
  gitProviderIds: readonly string[],
): Promise<Set<string>> {
  if (gitProviderIds.length === 0) return new Set();
  const rows = await db
    .selectFrom("gitProviders")
    .select("gitProviderId as id")
    .where("organizationId", "=", organizationId)
    .where("gitProviderId", "in", gitProviderIds)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Which of `environmentIds` are environments of the organization's projects. */
export async function existingEnvironmentIds(
  db: Db,
  organizationId: string,
  environmentIds: readonly string[],
): Promise<Set<string>> {
  if (environmentIds.length === 0) return new Set();
  const rows = await ownedBy(db.selectFrom("environments"), "environments", organizationId)
    .select("environments.environmentId as id")
    .where("environments.environmentId", "in", environmentIds)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Which of `serviceIds` are applications, database services or compose stacks of the organization. */
export async function existingServiceIds(
  db: Db,
  organizationId: string,
  serviceIds: readonly string[],
): Promise<Set<string>> {
  if (serviceIds.length === 0) return new Set();
  const rows = await ownedBy(db.selectFrom("applications"), "applications.environmentId", organizationId)
    .select("applications.applicationId as id")
    .where("applications.applicationId", "in", serviceIds)
    .unionAll(
      ownedBy(db.selectFrom("databaseServices"), "databaseServices.environmentId", organizationId)
        .select("databaseServices.databaseId as id")
        .where("databaseServices.databaseId", "in", serviceIds),
    )
    .unionAll(
      ownedBy(db.selectFrom("compose"), "compose.environmentId", organizationId)
        .select("compose.composeId as id")
        .where("compose.composeId", "in", serviceIds),
    )
    .execute();
  return new Set(rows.map((row) => row.id));
}
