/**
 * dockerDiskUsage (Dokploy's router of the same name): what the caller's objects take on a
 * server's engine, and the engine's build cache (owners and admins only: it has no owner).
 * Logic and tenancy in docker-objects/index.ts.
 */
import { z } from "zod";
import {
  buildCacheItemSchema,
  diskUsageItemSchema,
  getBuildCache,
  getDiskUsage,
  optionalServerId,
  pruneBuildCache,
} from "../docker-objects/index.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";

export const dockerDiskUsageRouter = defineRouter("dockerDiskUsage", {
  getDiskUsage: query({
    summary:
      "Images, containers and volumes of the caller (and the build cache for owners and admins): counts and sizes",
    access: "member",
    input: z.object(optionalServerId).optional(),
    output: z.array(diskUsageItemSchema),
    handler: ({ ctx, caller, input }) => getDiskUsage(ctx, caller, input?.serverId),
  }),

  getBuildCache: query({
    summary: "The records of the engine's build cache (owners and admins; empty for members)",
    access: "member",
    input: z.object(optionalServerId).optional(),
    output: z.array(buildCacheItemSchema),
    handler: ({ ctx, caller, input }) => getBuildCache(ctx, caller, input?.serverId),
  }),

  pruneBuildCache: mutation({
    summary: "Prune the engine's build cache (owners and admins of the server's organization)",
    access: "member",
    input: z.object(optionalServerId).optional(),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await pruneBuildCache(ctx, caller, input?.serverId);
      return success;
    },
  }),
});
