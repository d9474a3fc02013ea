/**
 * patch (Dokploy's `patch` router, issue 41): files of an application's or a compose stack's
 * repository replaced, created or deleted at build time. Kept as rows of the service (Dokploy
 * keeps them in a patch repository of its own) and sent with every build: the agent applies the
 * enabled ones to the fresh clone before the build and logs each ("patch: replaced <path>").
 * Paths are checked at save (400 naming `filePath`); another organization's service or patch is
 * a 404.
 */
import { z } from "zod";
import { idSchema } from "../applications/schemas.ts";
import { badRequest } from "../errors.ts";
import {
  cleanRepositories,
  ensureRepository,
  repositoryFileForPatch,
  repositoryTree,
} from "../patches/browse.ts";
import {
  changePatch,
  createPatch,
  loadCallerPatch,
  loadPatchOwner,
  patchesOf,
  removePatch,
  savePatchOfPath,
} from "../patches/service.ts";
import { patchContentSchema, patchPathSchema, patchTypeSchema } from "../patches/validation.ts";
import { defineRouter, mutation, query } from "../procedure.ts";

const patchSchema = z.object({
  patchId: z.string(),
  type: patchTypeSchema,
  filePath: z.string(),
  enabled: z.boolean(),
  content: z.string(),
  createdAt: z.string(),
  updatedAt: z.string().nullable(),
  applicationId: z.string().nullable(),
  composeId: z.string().nullable(),
});
const patchIdInput = z.object({ patchId: idSchema });
const serviceKindSchema = z.enum(["application", "compose"]);
const serviceInput = z.object({ id: idSchema, type: serviceKindSchema });
// One level described: the entries below `children` have the same shape (a recursive schema
// would leave the OpenAPI document's $refs unresolvable).
const directoryEntrySchema = z.object({
  name: z.string(),
  path: z.string(),
  type: z.enum(["file", "directory"]),
  children: z.array(z.unknown()).optional(),
});

export const patchRouter = defineRouter("patch", {
  create: mutation({
    summary: "Add a patch: a file of the service's repository replaced, created or deleted at build time",
    access: "member",
    input: z.object({
      filePath: patchPathSchema,
      content: patchContentSchema,
      type: patchTypeSchema.optional(),
      enabled: z.boolean().optional(),
      applicationId: idSchema.optional(),
      composeId: idSchema.optional(),
    }),
    output: patchSchema,
    handler: async ({ ctx, caller, input }) => {
      // Both ids are looked up first: another organization's is a 404 whatever else is wrong.
      const owners = [
        ...(input.applicationId
          ? [await loadPatchOwner(ctx, caller, "application", input.applicationId)]
          : []),
        ...(input.composeId ? [await loadPatchOwner(ctx, caller, "compose", input.composeId)] : []),
      ];
      const [owner] = owners;
      if (!owner || owners.length > 1)
        throw badRequest("applicationId: give either applicationId or composeId", {
          fields: ["applicationId", "composeId"],
        });
      return createPatch(ctx, owner, {
        filePath: input.filePath,
        content: input.content,
        type: input.type ?? "update",
        // Dokploy creates every patch enabled whatever `enabled` says; here it is applied.
        enabled: input.enabled ?? true,
      });
    },
  }),

  one: query({
    summary: "One patch",
    access: "member",
    input: patchIdInput,
    output: patchSchema,
    handler: async ({ ctx, caller, input }) => loadCallerPatch(ctx, caller, input.patchId),
  }),

  byEntityId: query({
    summary: "The patches of an application or a compose stack, by path",
    access: "member",
    input: serviceInput,
    output: z.array(patchSchema),
    handler: async ({ ctx, caller, input }) =>
      patchesOf(ctx, await loadPatchOwner(ctx, caller, input.type, input.id)),
  }),

  update: mutation({
    summary: "Change a patch's path, content, type or whether it is applied",
    access: "member",
    input: patchIdInput.extend({
      filePath: patchPathSchema.optional(),
      content: patchContentSchema.optional(),
      type: patchTypeSchema.optional(),
      enabled: z.boolean().optional(),
    }),
    output: patchSchema,
    handler: async ({ ctx, caller, input }) => {
      const { patchId, ...changes } = input;
      const patch = await loadCallerPatch(ctx, caller, patchId);
      return changePatch(ctx, patch, changes);
    },
  }),

  delete: mutation({
    summary: "Remove a patch (the next build uses the repository's file)",
    access: "member",
    input: patchIdInput,
    output: patchSchema,
    handler: async ({ ctx, caller, input }) =>
      removePatch(ctx, await loadCallerPatch(ctx, caller, input.patchId)),
  }),

  toggleEnabled: mutation({
    summary: "Apply a patch at the next builds, or keep it without applying it",
    access: "member",
    input: patchIdInput.extend({ enabled: z.boolean() }),
    output: patchSchema,
    handler: async ({ ctx, caller, input }) =>
      changePatch(ctx, await loadCallerPatch(ctx, caller, input.patchId), { enabled: input.enabled }),
  }),

  saveFileAsPatch: mutation({
    summary: "Save a file's new content as the service's patch of that path (created or changed)",
    access: "member",
    input: serviceInput.extend({
      filePath: patchPathSchema,
      content: patchContentSchema,
      patchType: z.enum(["create", "update"]).default("update"),
    }),
    output: patchSchema,
    handler: async ({ ctx, caller, input }) => {
      const owner = await loadPatchOwner(ctx, caller, input.type, input.id);
      return savePatchOfPath(ctx, owner, {
        filePath: input.filePath,
        content: input.content,
        type: input.patchType,
      });
    },
  }),

  markFileForDeletion: mutation({
    summary: "Delete a file of the repository at build time (the path's patch becomes a delete)",
    access: "member",
    input: serviceInput.extend({ filePath: patchPathSchema }),
    output: patchSchema,
    handler: async ({ ctx, caller, input }) => {
      const owner = await loadPatchOwner(ctx, caller, input.type, input.id);
      return savePatchOfPath(ctx, owner, { filePath: input.filePath, content: "", type: "delete" });
    },
  }),

  ensureRepo: mutation({
    summary:
      "Check that the service's repository can be cloned; answers the handle readRepoDirectories takes",
    access: "member",
    input: serviceInput,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => ensureRepository(ctx, caller, input.type, input.id),
  }),

  readRepoDirectories: query({
    summary: "The files of the service's repository (its branch, freshly cloned) as a tree",
    access: "member",
    input: serviceInput.extend({ repoPath: z.string().max(200) }),
    output: z.array(directoryEntrySchema),
    handler: async ({ ctx, caller, input }) =>
      repositoryTree(ctx, caller, input.type, input.id, input.repoPath),
  }),

  readRepoFile: query({
    summary: "A file as the service's builds see it: its patch's content, else the repository's file",
    access: "member",
    input: serviceInput.extend({ filePath: patchPathSchema }),
    output: z.string(),
    handler: async ({ ctx, caller, input }) =>
      repositoryFileForPatch(ctx, caller, input.type, input.id, input.filePath),
  }),

  cleanPatchRepos: mutation({
    summary: "Remove kept patch repositories (none are kept: every read clones afresh)",
    access: "admin",
    input: z.object({ serverId: idSchema.optional() }),
    output: z.boolean(),
    handler: async ({ ctx, caller, input }) => cleanRepositories(ctx, caller, input.serverId),
  }),
});
