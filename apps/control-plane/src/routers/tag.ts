/**
 * tag (Dokploy's router of the same name): the organization's tags and their assignment to
 * projects. Every member reads them; owners and admins create, rename, recolour and remove them;
 * a member assigns them to the projects it may see. Logic and tenancy in tags/index.ts.
 */
import { z } from "zod";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { requireProjectAccess } from "../projects/permissions.ts";
import {
  assignTag,
  createTag,
  findTag,
  listTags,
  projectTagSchema,
  removeTag,
  setProjectTags,
  tagColorSchema,
  tagIdSchema,
  tagNameSchema,
  tagSchema,
  unassignTag,
  updateTag,
} from "../tags/index.ts";

const tagIdInput = z.object({ tagId: tagIdSchema });
const projectIdSchema = z.string().min(1);
const assignmentInput = z.object({ projectId: projectIdSchema, tagId: tagIdSchema });

export const tagRouter = defineRouter("tag", {
  create: mutation({
    summary: "Create a tag of the organization",
    access: "admin",
    input: z.object({ name: tagNameSchema, color: tagColorSchema.optional() }),
    output: tagSchema,
    handler: ({ ctx, caller, input }) => createTag(ctx.db, caller.organizationId, input),
  }),

  all: query({
    summary: "The organization's tags by name",
    access: "member",
    input: noInput,
    output: z.array(tagSchema),
    handler: ({ ctx, caller }) => listTags(ctx.db, caller.organizationId),
  }),

  one: query({
    summary: "One tag of the organization",
    access: "member",
    input: tagIdInput,
    output: tagSchema,
    handler: ({ ctx, caller, input }) => findTag(ctx.db, caller.organizationId, input.tagId),
  }),

  update: mutation({
    summary: "Rename or recolour a tag",
    access: "admin",
    input: z.object({ tagId: tagIdSchema, name: tagNameSchema.optional(), color: tagColorSchema.optional() }),
    output: tagSchema,
    handler: ({ ctx, caller, input }) =>
      updateTag(ctx.db, caller.organizationId, input.tagId, { name: input.name, color: input.color }),
  }),

  remove: mutation({
    summary: "Delete a tag; it leaves every project it was on",
    access: "admin",
    input: tagIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeTag(ctx.db, caller.organizationId, input.tagId);
      return success;
    },
  }),

  assignToProject: mutation({
    summary: "Put a tag on a project",
    access: "member",
    input: assignmentInput,
    output: projectTagSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireProjectAccess(ctx.db, caller, input.projectId);
      return assignTag(ctx.db, caller.organizationId, input.projectId, input.tagId);
    },
  }),

  removeFromProject: mutation({
    summary: "Take a tag off a project",
    access: "member",
    input: assignmentInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireProjectAccess(ctx.db, caller, input.projectId);
      await unassignTag(ctx.db, caller.organizationId, input.projectId, input.tagId);
      return success;
    },
  }),

  bulkAssign: mutation({
    summary: "Make these tags the project's tags, replacing the ones it had",
    access: "member",
    input: z.object({ projectId: projectIdSchema, tagIds: z.array(tagIdSchema).max(100) }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireProjectAccess(ctx.db, caller, input.projectId);
      await setProjectTags(ctx.db, caller.organizationId, input.projectId, input.tagIds);
      return success;
    },
  }),
});
