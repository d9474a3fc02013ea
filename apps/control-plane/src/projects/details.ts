/**
 * Nests environments and their services under projects with a fixed number of queries,
 * whatever the number of projects: one for the environments of all projects, then one per
 * service kind for all environments (see services.ts).
 */
import type { Db } from "../db/database.ts";
import { type Environment, listEnvironments, type Project } from "./repository.ts";
import { type EnvironmentServices, emptyServices, loadServiceSummaries } from "./services.ts";

export type EnvironmentWithServices = Environment & EnvironmentServices;
export type ProjectDetail = Project & { environments: EnvironmentWithServices[] };

/** Adds each environment's services. */
export async function withServices(db: Db, environments: Environment[]): Promise<EnvironmentWithServices[]> {
  const summaries = await loadServiceSummaries(
    db,
    environments.map((e) => e.environmentId),
  );
  return environments.map((e) => ({ ...e, ...(summaries.get(e.environmentId) ?? emptyServices()) }));
}

/** Adds each project's environments with their services, keeping the projects' order. */
export async function withEnvironments(db: Db, projects: Project[]): Promise<ProjectDetail[]> {
  const environments = await withServices(
    db,
    await listEnvironments(
      db,
      projects.map((p) => p.projectId),
    ),
  );
  const byProject = new Map<string, EnvironmentWithServices[]>(projects.map((p) => [p.projectId, []]));
  for (const environment of environments) byProject.get(environment.projectId)?.push(environment);
  return projects.map((p) => ({ ...p, environments: byProject.get(p.projectId) ?? [] }));
}
