/**
 * project (spec 4.5): projects of the caller's organization, each created with a default
 * "production" environment. Another organization's project is a 404. Services inside
 * environments are reached only through projects/workload-kinds.ts.
 */
import { z } from "zod";
import { notFound } from "../errors.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { createProject } from "../projects/create.ts";
import { duplicateEnvironmentFor } from "../projects/duplicate.ts";
import { completeOnboarding, onboardingStatusOf, onboardingStatusSchema } from "../projects/onboarding.ts";
import {
  callerHomeStats,
  homeStatsSchema,
  projectsForPermissions,
  projectsForPermissionsSchema,
} from "../projects/overview.ts";
import {
  grantCreated,
  grantsOf,
  requireCanCreateProjects,
  requireCanDeleteProjects,
  requireProjectAccess,
  seesProject,
  visibleProject,
} from "../projects/permissions.ts";
import {
  deleteProject,
  findProject,
  listEnvironments,
  searchProjects,
  updateProject,
} from "../projects/repository.ts";
import {
  descriptionSchema,
  environmentDetailSchema,
  environmentSchema,
  envSchema,
  nameSchema,
  patchOf,
  projectDetailSchema,
  projectSchema,
  projectTreesSchema,
} from "../projects/schemas.ts";
import { serviceKinds, teardownServices } from "../projects/workload-kinds.ts";

const idSchema = z.string().min(1);

export const projectRouter = defineRouter("project", {
  create: mutation({
    summary: "Create a project with its default environment",
    access: "member",
    input: z.object({ name: nameSchema, description: descriptionSchema, env: envSchema.optional() }),
    output: z.object({ project: projectSchema, environment: environmentSchema }),
    handler: async ({ ctx, caller, input }) => {
      requireCanCreateProjects(caller);
      const created = await createProject(ctx.db, {
        organizationId: caller.organizationId,
        name: input.name,
        description: input.description ?? null,
        env: input.env ?? "",
      });
      await grantCreated(ctx.db, caller, "projects", created.project.projectId);
      await grantCreated(ctx.db, caller, "environments", created.environment.environmentId);
      return created;
    },
  }),

  one: query({
    summary: "A project with its environments and their services",
    access: "member",
    input: z.object({ projectId: idSchema }),
    output: projectDetailSchema,
    handler: async ({ ctx, caller, input }) => {
      const grants = await grantsOf(ctx.db, caller);
      const trees = await ctx.projectTrees.get(ctx.db, caller.organizationId);
      const detail = trees.data.find((project) => project.projectId === input.projectId);
      if (!detail || !seesProject(grants, detail.projectId)) throw notFound("Project");
      return visibleProject(grants, detail);
    },
  }),

  all: query({
    summary: "Every project of the organization with environments and service summaries",
    access: "member",
    input: noInput,
    output: projectTreesSchema,
    handler: async ({ ctx, caller }) => {
      const grants = await grantsOf(ctx.db, caller);
      const projects = await ctx.projectTrees.get(ctx.db, caller.organizationId);
      if (grants.projects === null && grants.environments === null && grants.services === null) {
        return projects;
      }
      return projects.data
        .filter((project) => seesProject(grants, project.projectId))
        .map((project) => visibleProject(grants, project));
    },
  }),

  allForPermissions: query({
    summary:
      "Every project of the organization with its environments and services by id and name, newest first (to choose a member's grants)",
    access: "admin",
    input: noInput,
    output: projectsForPermissionsSchema,
    handler: async ({ ctx, caller }) =>
      projectsForPermissions((await ctx.projectTrees.get(ctx.db, caller.organizationId)).data),
  }),

  homeStats: query({
    summary:
      "How many projects, environments and services the caller sees, and their services by status (done counts as running)",
    access: "member",
    input: noInput,
    output: homeStatsSchema,
    handler: ({ ctx, caller }) => callerHomeStats(ctx, caller),
  }),

  onboardingStatus: query({
    summary:
      "The getting started steps the caller has taken (a project, a service, a running service) and whether they dismissed them",
    access: "member",
    input: noInput,
    output: onboardingStatusSchema,
    handler: async ({ ctx, caller }) =>
      onboardingStatusOf(ctx.db, caller, await callerHomeStats(ctx, caller)),
  }),

  completeOnboarding: mutation({
    summary: "Dismiss the getting started steps for the caller in this organization",
    access: "member",
    input: noInput,
    output: successSchema,
    handler: async ({ ctx, caller }) => {
      await completeOnboarding(ctx.db, caller);
      return success;
    },
  }),

  update: mutation({
    summary: "Change a project's name, description or variables",
    access: "member",
    input: z.object({
      projectId: idSchema,
      name: nameSchema.optional(),
      description: descriptionSchema,
      env: envSchema.optional(),
    }),
    output: projectSchema,
    handler: async ({ ctx, caller, input }) => {
      await requireProjectAccess(ctx.db, caller, input.projectId);
      const project = await updateProject(ctx.db, caller.organizationId, input.projectId, patchOf(input));
      if (!project) throw notFound("Project");
      return project;
    },
  }),

  remove: mutation({
    summary: "Delete a project with all its environments and services (irreversible)",
    access: "member",
    input: z.object({ projectId: idSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      requireCanDeleteProjects(caller);
      const project = await findProject(ctx.db, caller.organizationId, input.projectId);
      if (!project) throw notFound("Project");
      await requireProjectAccess(ctx.db, caller, project.projectId);
      const environments = await listEnvironments(ctx.db, [project.projectId]);
      // Workloads stop before their rows go; the environments cascade with the project.
      await teardownServices(
        ctx,
        environments.map((e) => e.environmentId),
      );
      await deleteProject(ctx.db, caller.organizationId, project.projectId);
      return success;
    },
  }),

  duplicate: mutation({
    summary: "Copy an environment into a new project, or into a new environment of the same project",
    access: "member",
    input: z.object({
      sourceEnvironmentId: idSchema,
      name: nameSchema,
      description: descriptionSchema,
      includeServices: z.boolean().default(true),
      selectedServices: z.array(z.object({ id: idSchema, type: z.enum(serviceKinds) })).optional(),
      duplicateInSameProject: z.boolean().default(false),
    }),
    output: environmentDetailSchema,
    handler: ({ ctx, caller, input }) => duplicateEnvironmentFor(ctx, caller, input),
  }),

  search: query({
    summary: "Search projects by name and description",
    access: "member",
    input: z
      .object({
        q: z.string().max(200).optional(),
        name: z.string().max(200).optional(),
        description: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(100).default(20),
        offset: z.number().int().min(0).default(0),
      })
      .prefault({}),
    output: z.object({ items: z.array(projectSchema), total: z.number().int() }),
    handler: async ({ ctx, caller, input }) =>
      searchProjects(ctx.db, caller.organizationId, {
        ...input,
        projectIds: (await grantsOf(ctx.db, caller)).projects,
      }),
  }),
});
