/**
 * environment: the environments of a project (spec 2.8). Names are unique within a project
 * (409 CONFLICT naming `name`). The default environment, made with the project, can be
 * neither renamed nor removed (400), as in Dokploy: it goes with its project.
 */
import { z } from "zod";
import { badRequest, notFound } from "../errors.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import { withServices } from "../projects/details.ts";
import { duplicateEnvironmentFor } from "../projects/duplicate.ts";
import {
  grantCreated,
  grantsOf,
  requireCanCreateEnvironments,
  requireCanDeleteEnvironments,
  requireEnvironmentAccess,
  requireProjectAccess,
  seesEnvironment,
  visibleServices,
} from "../projects/permissions.ts";
import {
  deleteEnvironment,
  findEnvironment,
  findEnvironmentWithProject,
  findProject,
  insertEnvironment,
  listEnvironments,
  searchEnvironments,
  uniqueEnvironmentName,
  updateEnvironment,
} from "../projects/repository.ts";
import {
  descriptionSchema,
  environmentDetailSchema,
  environmentSchema,
  envSchema,
  nameSchema,
  patchOf,
} from "../projects/schemas.ts";
import { teardownServices } from "../projects/workload-kinds.ts";

const idSchema = z.string().min(1);

export const environmentRouter = defineRouter("environment", {
  create: mutation({
    summary: "Add an environment to a project",
    access: "member",
    input: z.object({
      projectId: idSchema,
      name: nameSchema,
      description: descriptionSchema,
      env: envSchema.optional(),
    }),
    output: environmentSchema,
    handler: async ({ ctx, caller, input }) => {
      const project = await findProject(ctx.db, caller.organizationId, input.projectId);
      if (!project) throw notFound("Project");
      requireCanCreateEnvironments(await requireProjectAccess(ctx.db, caller, project.projectId));
      const environment = await uniqueEnvironmentName(input.name, () =>
        insertEnvironment(ctx.db, {
          projectId: project.projectId,
          name: input.name,
          description: input.description ?? null,
          env: input.env ?? "",
          isDefault: false,
        }),
      );
      await grantCreated(ctx.db, caller, "environments", environment.environmentId);
      return environment;
    },
  }),

  one: query({
    summary: "An environment with its project and services",
    access: "member",
    input: z.object({ environmentId: idSchema }),
    output: environmentDetailSchema,
    handler: async ({ ctx, caller, input }) => {
      const found = await findEnvironmentWithProject(ctx.db, caller.organizationId, input.environmentId);
      if (!found) throw notFound("Environment");
      const { environment, project } = found;
      const grants = await requireEnvironmentAccess(ctx.db, caller, environment);
      const [detail] = await withServices(ctx.db, [environment]);
      return { ...visibleServices(grants, detail!), project };
    },
  }),

  byProjectId: query({
    summary: "The environments of a project, default first",
    access: "member",
    input: z.object({ projectId: idSchema }),
    output: z.array(environmentDetailSchema),
    handler: async ({ ctx, caller, input }) => {
      const project = await findProject(ctx.db, caller.organizationId, input.projectId);
      if (!project) throw notFound("Project");
      const grants = await requireProjectAccess(ctx.db, caller, project.projectId);
      const environments = await withServices(
        ctx.db,
        (await listEnvironments(ctx.db, [project.projectId])).filter((environment) =>
          seesEnvironment(grants, environment),
        ),
      );
      return environments.map((environment) => ({ ...visibleServices(grants, environment), project }));
    },
  }),

  duplicate: mutation({
    summary:
      "Copy an environment, its variables and the services the caller sees, into a new environment of its project",
    access: "member",
    input: z.object({ environmentId: idSchema, name: nameSchema, description: descriptionSchema }),
    output: environmentDetailSchema,
    handler: ({ ctx, caller, input }) =>
      duplicateEnvironmentFor(ctx, caller, {
        sourceEnvironmentId: input.environmentId,
        name: input.name,
        description: input.description,
        includeServices: true,
        duplicateInSameProject: true,
      }),
  }),

  search: query({
    summary: "Search the organization's environments by name and description (a member: those granted)",
    access: "member",
    input: z
      .object({
        q: z.string().max(200).optional(),
        name: z.string().max(200).optional(),
        description: z.string().max(200).optional(),
        projectId: idSchema.optional(),
        limit: z.number().int().min(1).max(100).default(20),
        offset: z.number().int().min(0).default(0),
      })
      .prefault({}),
    output: z.object({ items: z.array(environmentSchema), total: z.number().int() }),
    handler: async ({ ctx, caller, input }) => {
      const grants = await grantsOf(ctx.db, caller);
      return searchEnvironments(ctx.db, caller.organizationId, {
        ...input,
        projectIds: grants.projects,
        environmentIds: grants.environments,
      });
    },
  }),

  update: mutation({
    summary: "Change an environment's name, description or variables",
    access: "member",
    input: z.object({
      environmentId: idSchema,
      name: nameSchema.optional(),
      description: descriptionSchema,
      env: envSchema.optional(),
    }),
    output: environmentSchema,
    handler: async ({ ctx, caller, input }) => {
      const current = await findEnvironment(ctx.db, caller.organizationId, input.environmentId);
      if (!current) throw notFound("Environment");
      await requireEnvironmentAccess(ctx.db, caller, current);
      if (current.isDefault && input.name !== undefined && input.name !== current.name) {
        throw badRequest("The default environment cannot be renamed", { fields: ["name"] });
      }
      const updated = await uniqueEnvironmentName(input.name, () =>
        updateEnvironment(ctx.db, current.environmentId, patchOf(input)),
      );
      if (!updated) throw notFound("Environment");
      return updated;
    },
  }),

  remove: mutation({
    summary: "Delete an environment and its services (irreversible); not the default one",
    access: "member",
    input: z.object({ environmentId: idSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const environment = await findEnvironment(ctx.db, caller.organizationId, input.environmentId);
      if (!environment) throw notFound("Environment");
      requireCanDeleteEnvironments(await requireEnvironmentAccess(ctx.db, caller, environment));
      if (environment.isDefault) {
        throw badRequest("The default environment cannot be removed; remove the project instead", {
          fields: ["environmentId"],
        });
      }
      await teardownServices(ctx, [environment.environmentId]);
      await deleteEnvironment(ctx.db, environment.environmentId);
      return success;
    },
  }),
});
