/**
 * overview (Dokploy's): the organization at a glance. services lists every service the caller's
 * grants show, flat, read from the cached project trees (project.all's).
 */

import { z } from "zod";
import { defineRouter, noInput, query } from "../procedure.ts";
import { overviewServiceSchema, overviewServices } from "../projects/overview.ts";
import { grantsOf, seesProject, visibleProject } from "../projects/permissions.ts";

export const overviewRouter = defineRouter("overview", {
  services: query({
    summary:
      "Every service the caller sees, flat, with its project, environment, server and latest deployment",
    access: "member",
    input: noInput,
    output: z.array(overviewServiceSchema),
    handler: async ({ ctx, caller }) => {
      const grants = await grantsOf(ctx.db, caller);
      const trees = await ctx.projectTrees.get(ctx.db, caller.organizationId);
      const projects = trees.data
        .filter((project) => seesProject(grants, project.projectId))
        .map((project) => visibleProject(grants, project));
      return overviewServices(ctx.db, caller.organizationId, projects);
    },
  }),
});
