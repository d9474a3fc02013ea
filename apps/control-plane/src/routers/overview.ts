/**
 * overview (Dokploy's): the organization at a glance. services lists every service the caller's
 * grants show, flat, read from the cached project trees (project.all's); domains and backups
 * (run history) are those of the services the same trees show.
 */

import { z } from "zod";
import type { Caller, ServiceContext } from "../context.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { defineRouter, noInput, query } from "../procedure.ts";
import {
  overviewBackupSchema,
  overviewBackups,
  overviewDomainSchema,
  overviewDomains,
  overviewServiceSchema,
  overviewServices,
} from "../projects/overview.ts";
import { grantsOf, seesProject, visibleProject } from "../projects/permissions.ts";

/** The caller's projects as the cached trees hold them, filtered by the caller's grants. */
async function visibleProjects(ctx: ServiceContext, caller: Caller) {
  const grants = await grantsOf(ctx.db, caller);
  const trees = await ctx.projectTrees.get(ctx.db, caller.organizationId);
  return trees.data
    .filter((project) => seesProject(grants, project.projectId))
    .map((project) => visibleProject(grants, project));
}

export const overviewRouter = defineRouter("overview", {
  services: query({
    summary:
      "Every service the caller sees, flat, with its project, environment, server and latest deployment",
    access: "member",
    input: noInput,
    output: z.array(overviewServiceSchema),
    handler: async ({ ctx, caller }) =>
      overviewServices(ctx.db, caller.organizationId, await visibleProjects(ctx, caller)),
  }),

  domains: query({
    summary:
      "Every domain of the applications (their previews too) and compose stacks the caller sees, with its service, project and environment",
    access: "member",
    input: noInput,
    output: z.array(overviewDomainSchema),
    handler: async ({ ctx, caller }) => overviewDomains(ctx.db, await visibleProjects(ctx, caller)),
  }),

  backups: query({
    summary:
      "The newest 500 runs of the backups and volume backups of the services the caller sees (and of the control plane's own backup, for instance administrators), newest first",
    access: "member",
    input: noInput,
    output: z.array(overviewBackupSchema),
    handler: async ({ ctx, caller }) =>
      overviewBackups(
        ctx.db,
        caller.organizationId,
        await visibleProjects(ctx, caller),
        await isInstanceAdmin(ctx.db, caller),
      ),
  }),
});
