/**
 * Tags (Dokploy's `tag` router): an organization's labels, each assigned to any of its projects;
 * project.all and project.one carry every project's tags (projects/details.ts reads them in the
 * tree's one query). Every lookup is scoped to the caller's organization: another organization's
 * tag or project is simply not found (404). Names are unique per organization (409 naming name).
 */
import { z } from "zod";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { TagRow } from "../db/schema.ts";
import { displayName } from "../display-name.ts";
import { conflict, notFound } from "../errors.ts";
import { findProject, isUniqueViolation } from "../projects/repository.ts";

const TAG_NAME_CONSTRAINT = "tags_organization_name_unique";
const PROJECT_TAG_CONSTRAINT = "project_tags_project_tag_unique";

export const tagIdSchema = z.string().min(1);
export const tagNameSchema = displayName(50);
/** A CSS hex colour (#rgb or #rrggbb), what Dokploy's colour picker sends. */
export const tagColorSchema = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, "color must be a hex colour such as #3b82f6");

export const tagSchema = z.object({
  tagId: z.string(),
  name: z.string(),
  color: z.string().nullable(),
  createdAt: z.string(),
  organizationId: z.string(),
});

/** A tag's assignment to a project, as Dokploy's project_tag row. */
export const projectTagSchema = z.object({ id: z.string(), projectId: z.string(), tagId: z.string() });

export type Tag = TagRow;

/** project.all's and project.one's `projectTags`: each assignment with its tag (Dokploy's shape). */
export const projectTagWithTagSchema = projectTagSchema.extend({ tag: tagSchema });
export type ProjectTagWithTag = z.input<typeof projectTagWithTagSchema>;

/** The tags of `projectIds` in one query, each project's by name (the tree reads them in its own query). */
export async function listProjectTags(db: Db, projectIds: readonly string[]): Promise<ProjectTagWithTag[]> {
  if (projectIds.length === 0) return [];
  const rows = await db
    .selectFrom("projectTags")
    .innerJoin("tags", "tags.tagId", "projectTags.tagId")
    .select([
      "projectTags.id",
      "projectTags.projectId",
      "tags.tagId",
      "tags.name",
      "tags.color",
      "tags.createdAt",
      "tags.organizationId",
    ])
    .where("projectTags.projectId", "in", projectIds)
    .orderBy("tags.name", "asc")
    .execute();
  return rows.map((row) => ({
    id: row.id,
    projectId: row.projectId,
    tagId: row.tagId,
    tag: {
      tagId: row.tagId,
      name: row.name,
      color: row.color,
      createdAt: row.createdAt,
      organizationId: row.organizationId,
    },
  }));
}

/** Runs a write naming `name`, turning a duplicate name in the organization into 409 naming `name`. */
async function uniqueName<T>(name: string | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, TAG_NAME_CONSTRAINT)) {
      throw conflict(`A tag named "${name}" already exists in your organization`, { fields: ["name"] });
    }
    throw error;
  }
}

export function createTag(
  db: Db,
  organizationId: string,
  values: { name: string; color?: string | undefined },
): Promise<Tag> {
  return uniqueName(values.name, () =>
    db
      .insertInto("tags")
      .values({ tagId: newId(), organizationId, name: values.name, color: values.color ?? null })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}

/** The organization's tags by name. */
export function listTags(db: Db, organizationId: string): Promise<Tag[]> {
  return db
    .selectFrom("tags")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("name", "asc")
    .execute();
}

/** The organization's tag, or 404. */
export async function findTag(db: Db, organizationId: string, tagId: string): Promise<Tag> {
  const tag = await db
    .selectFrom("tags")
    .selectAll()
    .where("tagId", "=", tagId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  if (!tag) throw notFound("Tag");
  return tag;
}

export async function updateTag(
  db: Db,
  organizationId: string,
  tagId: string,
  patch: { name?: string | undefined; color?: string | undefined },
): Promise<Tag> {
  const set: { name?: string; color?: string } = {};
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.color !== undefined) set.color = patch.color;
  if (Object.keys(set).length === 0) return findTag(db, organizationId, tagId);
  const tag = await uniqueName(patch.name, () =>
    db
      .updateTable("tags")
      .set(set)
      .where("tagId", "=", tagId)
      .where("organizationId", "=", organizationId)
      .returningAll()
      .executeTakeFirst(),
  );
  if (!tag) throw notFound("Tag");
  return tag;
}

/** Deletes the tag; its assignments go with it (ON DELETE CASCADE). */
export async function removeTag(db: Db, organizationId: string, tagId: string): Promise<void> {
  const result = await db
    .deleteFrom("tags")
    .where("tagId", "=", tagId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  if (result.numDeletedRows === 0n) throw notFound("Tag");
}

async function requireProject(db: Db, organizationId: string, projectId: string): Promise<void> {
  if (!(await findProject(db, organizationId, projectId))) throw notFound("Project");
}

/** Assigns the organization's tag to its project; 409 when it already is. */
export async function assignTag(
  db: Db,
  organizationId: string,
  projectId: string,
  tagId: string,
): Promise<z.output<typeof projectTagSchema>> {
  await requireProject(db, organizationId, projectId);
  await findTag(db, organizationId, tagId);
  try {
    return await db
      .insertInto("projectTags")
      .values({ id: newId(), projectId, tagId })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (isUniqueViolation(error, PROJECT_TAG_CONSTRAINT)) {
      throw conflict("This tag is already assigned to this project", { fields: ["tagId"] });
    }
    throw error;
  }
}

/** Takes the tag off the project (nothing to do when it was not on it). */
export async function unassignTag(db: Db, organizationId: string, projectId: string, tagId: string) {
  await requireProject(db, organizationId, projectId);
  await findTag(db, organizationId, tagId);
  await db.deleteFrom("projectTags").where("projectId", "=", projectId).where("tagId", "=", tagId).execute();
}

/**
 * Makes `tagIds` the project's tags, replacing the ones it had, in one transaction; any id that
 * is not one of the organization's tags is a 404 and changes nothing.
 */
export async function setProjectTags(
  db: Db,
  organizationId: string,
  projectId: string,
  tagIds: readonly string[],
): Promise<void> {
  await requireProject(db, organizationId, projectId);
  const wanted = [...new Set(tagIds)];
  await db.transaction().execute(async (trx) => {
    if (wanted.length > 0) {
      const known = await trx
        .selectFrom("tags")
        .select("tagId")
        .where("organizationId", "=", organizationId)
        .where("tagId", "in", wanted)
        .forShare()
        .execute();
      if (known.length !== wanted.length) throw notFound("Tag");
    }
    await trx.deleteFrom("projectTags").where("projectId", "=", projectId).execute();
    if (wanted.length > 0) {
      await trx
        .insertInto("projectTags")
        .values(wanted.map((tagId) => ({ id: newId(), projectId, tagId })))
        .execute();
    }
  });
}
