/**
 * project.allForPermissions, project.homeStats and overview.services: the organization's project trees (the same
 * cached tree project.all answers) reshaped. allForPermissions lists every project, environment
 * and service by id and name, for an administrator choosing a member's grants; homeStats counts
 * what the caller's grants show, a service's status in three groups as Dokploy does (done is
 * running, error, anything else idle).
 */
import { z } from "zod";
import type { Db } from "../db/database.ts";
import type { ProjectTrees } from "./schemas.ts";
import {
  environmentServicesShape,
  type ServiceKind,
  serviceFields,
  serviceIdKey,
  serviceKinds,
} from "./workload-kinds.ts";

type ProjectTree = ProjectTrees[number];

export const projectsForPermissionsSchema = z.array(
  z.object({
    projectId: z.string(),
    name: z.string(),
    environments: z.array(
      z.object({
        environmentId: z.string(),
        name: z.string(),
        isDefault: z.boolean(),
        ...environmentServicesShape,
      }),
    ),
  }),
);

/** Every project, newest first, with its environments and their services (ids, names, status). */
export function projectsForPermissions(
  projects: readonly ProjectTree[],
): z.input<typeof projectsForPermissionsSchema> {
  return [...projects]
    .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
    .map((project) => ({
      projectId: project.projectId,
      name: project.name,
      environments: project.environments.map((environment) => ({
        environmentId: environment.environmentId,
        name: environment.name,
        isDefault: environment.isDefault,
        applications: environment.applications,
        postgres: environment.postgres,
        mysql: environment.mysql,
        mariadb: environment.mariadb,
        mongo: environment.mongo,
        redis: environment.redis,
        compose: environment.compose,
      })),
    }));
}

export const homeStatsSchema = z.object({
  projects: z.number().int(),
  environments: z.number().int(),
  applications: z.number().int(),
  compose: z.number().int(),
  databases: z.number().int(),
  services: z.number().int(),
  status: z.object({ running: z.number().int(), error: z.number().int(), idle: z.number().int() }),
});

const databaseKinds: ServiceKind[] = serviceKinds.filter(
  (kind) => kind !== "application" && kind !== "compose",
);

/** The counts of the projects given (already filtered by the caller's grants). */
export function homeStatsOf(projects: readonly ProjectTree[]): z.infer<typeof homeStatsSchema> {
  const stats = {
    projects: projects.length,
    environments: 0,
    applications: 0,
    compose: 0,
    databases: 0,
    services: 0,
    status: { running: 0, error: 0, idle: 0 },
  };
  const count = (status: string) => {
    if (status === "done") stats.status.running++;
    else if (status === "error") stats.status.error++;
    else stats.status.idle++;
  };
  for (const project of projects) {
    for (const environment of project.environments) {
      stats.environments++;
      stats.applications += environment.applications.length;
      stats.compose += environment.compose.length;
      for (const application of environment.applications) count(application.applicationStatus);
      for (const stack of environment.compose) count(stack.composeStatus);
      for (const kind of databaseKinds) {
        const services = environment[serviceFields[kind] as "postgres"];
        stats.databases += services.length;
        for (const service of services) count(service.applicationStatus);
      }
    }
  }
  stats.services = stats.applications + stats.compose + stats.databases;
  return stats;
}

export const overviewServiceSchema = z.object({
  id: z.string(),
  type: z.enum(serviceKinds),
  name: z.string(),
  appName: z.string(),
  status: z.enum(["idle", "running", "done", "error"]),
  createdAt: z.string(),
  serverId: z.string().nullable(),
  serverName: z.string().nullable(),
  projectId: z.string(),
  projectName: z.string(),
  environmentId: z.string(),
  environmentName: z.string(),
  icon: z.string().nullable(),
  lastDeployAt: z.string().nullable(),
});

type OverviewService = z.infer<typeof overviewServiceSchema>;

/**
 * overview.services: every service the projects given show (already filtered by the caller's
 * grants), flat, with its project, environment, server name and latest deployment's time.
 */
export async function overviewServices(
  db: Db,
  organizationId: string,
  projects: readonly ProjectTree[],
): Promise<OverviewService[]> {
  const services: OverviewService[] = [];
  for (const project of projects) {
    for (const environment of project.environments) {
      for (const type of serviceKinds) {
        const list = environment[serviceFields[type] as "applications"] as unknown as Record<
          string,
          unknown
        >[];
        for (const service of list) {
          services.push({
            id: String(service[serviceIdKey(type)]),
            type,
            name: String(service.name),
            appName: String(service.appName),
            status: (type === "compose"
              ? service.composeStatus
              : service.applicationStatus) as OverviewService["status"],
            createdAt: String(service.createdAt),
            serverId: (service.serverId as string | null) ?? null,
            serverName: null,
            projectId: project.projectId,
            projectName: project.name,
            environmentId: environment.environmentId,
            environmentName: environment.name,
            icon: null,
            lastDeployAt: null,
          });
        }
      }
    }
  }
  if (services.length === 0) return services;
  const [servers, deployed] = await Promise.all([
    db
      .selectFrom("servers")
      .select(["serverId", "name"])
      .where("organizationId", "=", organizationId)
      .execute(),
    db
      .selectFrom("deployments")
      .select((eb) => ["targetId", eb.fn.max("createdAt").as("lastDeployAt")])
      .where(
        "targetId",
        "in",
        services.map((service) => service.id),
      )
      .groupBy("targetId")
      .execute(),
  ]);
  const serverNames = new Map(servers.map((server) => [server.serverId, server.name]));
  const lastDeploy = new Map(deployed.map((row) => [row.targetId, row.lastDeployAt]));
  for (const service of services) {
    service.serverName = service.serverId ? (serverNames.get(service.serverId) ?? null) : null;
    const last = lastDeploy.get(service.id);
    service.lastDeployAt = last ? new Date(last as string).toISOString() : null;
  }
  return services;
}
