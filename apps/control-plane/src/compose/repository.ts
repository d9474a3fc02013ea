/**
 * Rows of compose stacks. Reads on behalf of a caller go through the organization of the
 * environment: another organization's stack is not found.
 */
import type { Caller } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy, withOwner } from "../db/owned.ts";
import type { Compose, ComposeUpdate, NewCompose } from "../db/schema.ts";
import { notFound } from "../errors.ts";
import { requireServiceAccess } from "../projects/permissions.ts";

export type { Compose };

export const COMPOSE_APP_NAME_CONSTRAINT = "compose_app_name_unique";

/** A stack with where it lives. */
export type LocatedCompose = Compose & {
  organizationId: string;
  projectId: string;
  projectName: string;
  environmentName: string;
  projectEnv: string | null;
  environmentEnv: string | null;
};

export const newComposeId = () => newId();

export function insertCompose(db: Db, values: NewCompose): Promise<Compose> {
  return db.insertInto("compose").values(values).returningAll().executeTakeFirstOrThrow();
}

/** Stacks with where they sit: of that organization, or (null) of any, for the system's reads. */
function located(db: Db, organizationId: string | null) {
  const from = db.selectFrom("compose");
  return (
    organizationId === null
      ? withOwner(from, "compose.environmentId")
      : ownedBy(from, "compose.environmentId", organizationId)
  )
    .selectAll("compose")
    .select([
      "projects.organizationId",
      "projects.projectId",
      "projects.name as projectName",
      "environments.name as environmentName",
      "projects.env as projectEnv",
      "environments.env as environmentEnv",
    ]);
}

/** The stack in the organization; undefined otherwise. */
export function findCompose(
  db: Db,
  organizationId: string,
  composeId: string,
): Promise<LocatedCompose | undefined> {
  return located(db, organizationId).where("compose.composeId", "=", composeId).executeTakeFirst();
}

/**
 * The stack when it is of the caller's organization and visible to the caller; else 404 naming
 * `what` (the stack, or what the caller asked for through it).
 */
export async function loadCallerCompose(
  db: Db,
  caller: Caller,
  composeId: string,
  what = "Compose",
): Promise<LocatedCompose> {
  const row = await findCompose(db, caller.organizationId, composeId);
  if (!row) throw notFound(what);
  await requireServiceAccess(
    db,
    caller,
    { serviceId: row.composeId, environmentId: row.environmentId, projectId: row.projectId },
    what,
  );
  return row;
}

/** The stack whatever the caller (deployments, teardown). */
export function findComposeWithOrganization(db: Db, composeId: string): Promise<LocatedCompose | undefined> {
  return located(db, null).where("compose.composeId", "=", composeId).executeTakeFirst();
}

/** The stacks of some environments, whatever the caller (teardown, copies). */
export function listComposeIn(db: Db, environmentIds: readonly string[]): Promise<LocatedCompose[]> {
  if (environmentIds.length === 0) return Promise.resolve([]);
  return located(db, null).where("compose.environmentId", "in", environmentIds).execute();
}

export async function updateCompose(
  db: Db,
  composeId: string,
  patch: ComposeUpdate,
): Promise<Compose | undefined> {
  if (Object.keys(patch).length === 0) {
    return db.selectFrom("compose").selectAll().where("composeId", "=", composeId).executeTakeFirst();
  }
  return db
    .updateTable("compose")
    .set(patch)
    .where("composeId", "=", composeId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteCompose(db: Db, composeId: string): Promise<void> {
  await db.deleteFrom("compose").where("composeId", "=", composeId).execute();
}

/** Serializes the domain writes of one stack (its Traefik file is rewritten from all its rows). */
export async function lockCompose(trx: Db, composeId: string): Promise<void> {
  await trx
    .selectFrom("compose")
    .select("composeId")
    .where("composeId", "=", composeId)
    .forUpdate()
    .execute();
}

/** Stores file mounts of the stack (its files the agent writes under `../files/`). */
export async function insertComposeFileMounts(
  db: Db,
  stack: Pick<LocatedCompose, "composeId" | "organizationId">,
  files: readonly { filePath: string; content: string }[],
): Promise<void> {
  if (files.length === 0) return;
  await db
    .insertInto("mounts")
    .values(
      files.map((file) => ({
        mountId: newId(),
        type: "file" as const,
        filePath: file.filePath,
        content: file.content,
        mountPath: "",
        serviceType: "compose",
        composeId: stack.composeId,
        organizationId: stack.organizationId,
      })),
    )
    .execute();
}

/** Summaries of the stacks of some environments (project trees). */
export function listComposeSummaries(db: Db, environmentIds: readonly string[]) {
  return db
    .selectFrom("compose")
    .select([
      "composeId",
      "name",
      "appName",
      "description",
      "serverId",
      "createdAt",
      "composeStatus",
      "environmentId",
    ])
    .where("environmentId", "in", environmentIds)
    .orderBy("createdAt")
    .orderBy("composeId")
    .execute();
}
