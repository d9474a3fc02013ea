/** Projects and environments as the API shows and accepts them (spec 2.8, 4.5). */
import { z } from "zod";
import { displayNameSchema } from "../display-name.ts";
import { envSchema } from "../env-vars.ts";
import { projectTagWithTagSchema } from "../tags/index.ts";
import type { ProjectPatch } from "./repository.ts";
import { environmentServicesShape } from "./workload-kinds.ts";

export const DEFAULT_ENVIRONMENT = { name: "production", description: "Production environment" } as const;

/** Names of projects, environments and services: the one display-name rule. */
export const nameSchema = displayNameSchema;
/** Descriptions: at most 1000 characters; null clears one on update. */
export const descriptionSchema = z.string().trim().max(1000).nullish();
export { envSchema };

export const projectSchema = z.object({
  projectId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  env: z.string(),
  createdAt: z.string(),
});

export const environmentSchema = z.object({
  environmentId: z.string(),
  projectId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  env: z.string(),
  isDefault: z.boolean(),
  createdAt: z.string(),
});

/** An environment with its services, as nested in a project. */
export const environmentWithServicesSchema = environmentSchema.extend(environmentServicesShape);

/** project.one / project.all: a project with its environments and their services. */
export const projectDetailSchema = projectSchema.extend({
  environments: z.array(environmentWithServicesSchema),
  /** The project's tags, each assignment with its tag, by tag name (Dokploy's projectTags). */
  projectTags: z.array(projectTagWithTagSchema),
});

/** project.all: every project of the organization with its environments and services. */
export const projectTreesSchema = z.array(projectDetailSchema);
export type ProjectTrees = z.output<typeof projectTreesSchema>;

/** environment.one / environment.byProjectId: an environment with its project and services. */
export const environmentDetailSchema = environmentWithServicesSchema.extend({ project: projectSchema });

export type ProjectView = z.input<typeof projectSchema>;
export type EnvironmentView = z.input<typeof environmentSchema>;

/** The update of an update input: only the fields that were sent; a null description clears it. */
export function patchOf(input: {
  name?: string | undefined;
  description?: string | null | undefined;
  env?: string | undefined;
}): ProjectPatch {
  const patch: ProjectPatch = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.description !== undefined) patch.description = input.description;
  if (input.env !== undefined) patch.env = input.env;
  return patch;
}
