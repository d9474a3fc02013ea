/**
 * Nests environments and their services under projects. The tree of project.one / project.all
 * is read in ONE query: Postgres builds it with JSON aggregation (projects, then their
 * environments, then each service kind's summaries through the kind's `summaryJson`), and the
 * driver hands back a single parsed value, without kysely's per-row key and date transforms.
 * A kind registered without `summaryJson` adds one batched query of its own (listSummaries).
 * Every object is built with its fields listed, never with spreads (they dominated the CPU
 * profile of project.all).
 */
import { sql } from "kysely";
import { type Db, isoTimestamp } from "../db/database.ts";
import type { ProjectTagWithTag } from "../tags/index.ts";
import { listProjectTags } from "../tags/index.ts";
import { type Environment, listEnvironments, type Project } from "./repository.ts";
import {
  type EnvironmentServices,
  emptyServices,
  loadServiceSummaries,
  type ServiceKind,
  serviceFields,
  serviceKindHooks,
  serviceKinds,
} from "./workload-kinds.ts";

export type EnvironmentWithServices = Environment & EnvironmentServices;
export type ProjectDetail = Project & {
  environments: EnvironmentWithServices[];
  projectTags: ProjectTagWithTag[];
};

/** An environment row and its services as one object, fields listed. */
function environmentWithServices(e: Environment, s: EnvironmentServices): EnvironmentWithServices {
  return {
    environmentId: e.environmentId,
    projectId: e.projectId,
    name: e.name,
    description: e.description,
    env: e.env,
    isDefault: e.isDefault,
    createdAt: e.createdAt,
    applications: s.applications,
    postgres: s.postgres,
    mysql: s.mysql,
    mariadb: s.mariadb,
    mongo: s.mongo,
    redis: s.redis,
    libsql: s.libsql,
    compose: s.compose,
  };
}

/** Adds each environment's services (one query per registered kind). */
export async function withServices(db: Db, environments: Environment[]): Promise<EnvironmentWithServices[]> {
  const summaries = await loadServiceSummaries(
    db,
    environments.map((e) => e.environmentId),
  );
  return environments.map((e) =>
    environmentWithServices(e, summaries.get(e.environmentId) ?? emptyServices()),
  );
}

/**
 * The organization's projects (newest first), or only `projectId`, each with its environments
 * (per project the default first, then by age) and their services: one query when every
 * registered service kind gives its summaryJson.
 */
export async function loadProjectTrees(
  db: Db,
  organizationId: string,
  projectId?: string,
): Promise<ProjectDetail[]> {
  const kindsWithoutSql: ServiceKind[] = [];
  const serviceColumns = serviceKinds.map((kind) => {
    const hooks = serviceKindHooks[kind];
    if (hooks && !hooks.summaryJson) kindsWithoutSql.push(kind);
    const list = hooks?.summaryJson ? hooks.summaryJson(sql.ref("e.environment_id")) : sql`'[]'::json`;
    return sql`${sql.lit(serviceFields[kind])}, ${list}`;
  });
  const onlyProject = projectId === undefined ? sql`` : sql`and p.project_id = ${projectId}`;
  const { rows } = await sql<{ tree: ProjectDetail[] }>`
    select coalesce(json_agg(json_build_object(
      'projectId', p.project_id,
      'organizationId', p.organization_id,
      'name', p.name,
      'description', p.description,
      'env', p.env,
      'createdAt', ${isoTimestamp(sql.ref("p.created_at"))},
      'environments', coalesce((
        select json_agg(json_build_object(
          'environmentId', e.environment_id,
          'projectId', e.project_id,
          'name', e.name,
          'description', e.description,
          'env', e.env,
          'isDefault', e.is_default,
          'createdAt', ${isoTimestamp(sql.ref("e.created_at"))},
          ${sql.join(serviceColumns)}
        ) order by e.is_default desc, e.created_at asc, e.name asc)
        from environments e where e.project_id = p.project_id
      ), '[]'::json),
      'projectTags', coalesce((
        select json_agg(json_build_object(
          'id', pt.id,
          'projectId', pt.project_id,
          'tagId', pt.tag_id,
          'tag', json_build_object(
            'tagId', t.tag_id,
            'name', t.name,
            'color', t.color,
            'createdAt', ${isoTimestamp(sql.ref("t.created_at"))},
            'organizationId', t.organization_id
          )
        ) order by t.name asc)
        from project_tags pt join tags t on t.tag_id = pt.tag_id where pt.project_id = p.project_id
      ), '[]'::json)
    ) order by p.created_at desc, p.project_id desc), '[]'::json) as tree
    from projects p
    where p.organization_id = ${organizationId} ${onlyProject}
  `.execute(db.withoutPlugins());
  const projects = rows[0]?.tree ?? [];
  if (kindsWithoutSql.length > 0) await addServicesOfKinds(db, projects, kindsWithoutSql);
  return projects;
}

/** Fills the lists of `kinds` (registered without summaryJson) with one listSummaries per kind. */
async function addServicesOfKinds(db: Db, projects: ProjectDetail[], kinds: ServiceKind[]): Promise<void> {
  const environments = new Map<string, EnvironmentWithServices>();
  for (const project of projects) {
    for (const environment of project.environments) environments.set(environment.environmentId, environment);
  }
  if (environments.size === 0) return;
  const ids = [...environments.keys()];
  await Promise.all(
    kinds.map(async (kind) => {
      for (const row of (await serviceKindHooks[kind]?.listSummaries(db, ids)) ?? []) {
        const list = environments.get(row.environmentId)?.[serviceFields[kind]] as unknown[] | undefined;
        list?.push(row);
      }
    }),
  );
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
  const tags = await listProjectTags(
    db,
    projects.map((p) => p.projectId),
  );
  return projects.map((p) => ({
    projectId: p.projectId,
    organizationId: p.organizationId,
    name: p.name,
    description: p.description,
    env: p.env,
    createdAt: p.createdAt,
    environments: byProject.get(p.projectId) ?? [],
    projectTags: tags.filter((t) => t.projectId === p.projectId),
  }));
}
