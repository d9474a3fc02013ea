/**
 * gitProvider (spec 2.12, 4.12): every provider connection of the organization, and removal,
 * which disconnects the applications that used it (their repository fields cleared, status error
 * with a message naming the removed provider) in the same transaction.
 */
import { z } from "zod";
import { forbidden, notFound } from "../errors.ts";
import {
  baseView,
  gitProviderSchema,
  gitProviderViewSchema,
  providerView,
} from "../git-providers/procedures.ts";
import {
  findProviderById,
  listProviders,
  removeProvider,
  setProviderShared,
} from "../git-providers/repository.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { requireFeature } from "../projects/permissions.ts";

export const gitProviderRouter = defineRouter("gitProvider", {
  getAll: query({
    summary:
      "The organization's Git providers the caller may see (shared ones and their own) with their kind's fields (never their secrets)",
    access: "member",
    input: noInput,
    output: z.array(gitProviderViewSchema.extend({ isOwner: z.boolean() })),
    handler: async ({ ctx, caller }) => {
      requireFeature(caller, "gitProviders");
      return (await listProviders(ctx.db, caller.organizationId, { viewer: caller })).map((provider) => ({
        ...providerView(ctx, provider),
        isOwner: provider.row.userId === caller.userId,
      }));
    },
  }),
  toggleShare: mutation({
    summary:
      "Share a Git provider with the organization, or keep it to its creator (and owners and administrators); only its creator may",
    access: "member",
    input: z.object({
      gitProviderId: z.string().trim().min(1).max(100),
      sharedWithOrganization: z.boolean(),
    }),
    output: gitProviderSchema,
    handler: async ({ ctx, caller, input }) => {
      requireFeature(caller, "gitProviders");
      const provider = await findProviderById(ctx.db, caller.organizationId, input.gitProviderId, caller);
      if (!provider) throw notFound("Git provider");
      if (provider.userId !== caller.userId)
        throw forbidden("Only the member who created this provider can share it");
      const row = await setProviderShared(ctx.db, provider.gitProviderId, input.sharedWithOrganization);
      return baseView({ row, settings: {} });
    },
  }),
  allForPermissions: query({
    summary:
      "The organization's Git providers by id, name and kind, newest first (to choose a member's grants)",
    access: "admin",
    input: noInput,
    output: z.array(z.object({ gitProviderId: z.string(), name: z.string(), providerType: z.string() })),
    handler: async ({ ctx, caller }) =>
      (await listProviders(ctx.db, caller.organizationId)).map(({ row }) => ({
        gitProviderId: row.gitProviderId,
        name: row.name,
        providerType: row.providerType,
      })),
  }),

  remove: mutation({
    summary: "Delete a Git provider; its applications are disconnected and say so in their status",
    access: "member",
    input: z.object({ gitProviderId: z.string().trim().min(1).max(100) }),
    output: successSchema,
    handler: async ({ ctx, caller, input, logger }) => {
      requireFeature(caller, "gitProviders");
      if (!(await findProviderById(ctx.db, caller.organizationId, input.gitProviderId, caller))) {
        throw notFound("Git provider");
      }
      const disconnected = await removeProvider(ctx.db, caller.organizationId, input.gitProviderId);
      if (!disconnected) throw notFound("Git provider");
      if (disconnected.length > 0) {
        logger.info(
          { gitProviderId: input.gitProviderId, applicationIds: disconnected },
          "git provider removed; applications disconnected",
        );
      }
      return success;
    },
  }),
});
