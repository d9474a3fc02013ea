/**
 * project.allForPermissions, project.homeStats and overview.services, .domains and .backups: the
 * organization's project trees (the same cached tree project.all answers) reshaped, the overview's
 * domains and backup runs being those of the services the trees show. allForPermissions lists every project, environment
 * and service by id and name, for an administrator choosing a member's grants; homeStats counts
 * what the caller's grants show, a service's status in three groups as Dokploy does (done is
 * running, error, anything else idle).
 */
import { z } from "zod";
import type { Caller, ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import { grantsOf, seesProject, visibleProject } from "./permissions.ts";
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
        libsql: environment.libsql,
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

/** The counts of what the caller's grants show (project.homeStats). */
export async function callerHomeStats(
  ctx: ServiceContext,
  caller: Caller,
): Promise<z.infer<typeof homeStatsSchema>> {
  const grants = await grantsOf(ctx.db, caller);
  const trees = await ctx.projectTrees.get(ctx.db, caller.organizationId);
  return homeStatsOf(
    trees.data
      .filter((project) => seesProject(grants, project.projectId))
      .map((project) => visibleProject(grants, project)),
  );
}

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

/** Every service of the projects given (already filtered by the caller's grants), flat. */
function flatServices(projects: readonly ProjectTree[]): OverviewService[] {
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
  return services;
}

/**
 * overview.services: every service the projects given show (already filtered by the caller's
 * grants), flat, with its project, environment, server name and latest deployment's time.
 */
export async function overviewServices(
  db: Db,
  organizationId: string,
  projects: readonly ProjectTree[],
): Promise<OverviewService[]> {
  const services = flatServices(projects);
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

const iso = (value: unknown) => new Date(value as string).toISOString();

export const overviewDomainSchema = z.object({
  domainId: z.string(),
  host: z.string(),
  path: z.string(),
  port: z.number().int(),
  customEntrypoint: z.string().nullable(),
  https: z.boolean(),
  certificateType: z.enum(["letsencrypt", "custom", "none"]),
  createdAt: z.string(),
  enabled: z.boolean(),
  domainType: z.enum(["application", "compose", "preview"]),
  /** The application (a preview's too) or compose stack the domain routes to. */
  serviceOwnerId: z.string(),
  serviceOwnerType: z.enum(["application", "compose"]),
  serviceName: z.string(),
  projectId: z.string(),
  projectName: z.string(),
  environmentId: z.string(),
  environmentName: z.string(),
});

/**
 * overview.domains: the domains of the applications (their previews' too) and compose stacks
 * the projects given show (already filtered by the caller's grants), oldest first.
 */
export async function overviewDomains(
  db: Db,
  projects: readonly ProjectTree[],
): Promise<z.infer<typeof overviewDomainSchema>[]> {
  const owners = new Map(
    flatServices(projects)
      .filter((service) => service.type === "application" || service.type === "compose")
      .map((service) => [service.id, service]),
  );
  const idsOf = (type: string) => [...owners.values()].filter((s) => s.type === type).map((s) => s.id);
  const applicationIds = idsOf("application");
  const composeIds = idsOf("compose");
  if (applicationIds.length === 0 && composeIds.length === 0) return [];
  const rows = await db
    .selectFrom("domains")
    .leftJoin("previewDeployments", "previewDeployments.previewDeploymentId", "domains.previewDeploymentId")
    .select([
      "domains.domainId",
      "domains.host",
      "domains.path",
      "domains.port",
      "domains.customEntrypoint",
      "domains.https",
      "domains.certificateType",
      "domains.createdAt",
      "domains.enabled",
      "domains.domainType",
      "domains.applicationId",
      "domains.composeId",
      "previewDeployments.applicationId as previewApplicationId",
    ])
    .where((eb) =>
      eb.or([
        ...(applicationIds.length > 0
          ? [
              eb("domains.applicationId", "in", applicationIds),
              eb("previewDeployments.applicationId", "in", applicationIds),
            ]
          : []),
        ...(composeIds.length > 0 ? [eb("domains.composeId", "in", composeIds)] : []),
      ]),
    )
    .orderBy("domains.createdAt", "asc")
    .orderBy("domains.domainId", "asc")
    .execute();
  return rows.flatMap((row) => {
    const owner = owners.get(row.applicationId ?? row.composeId ?? row.previewApplicationId ?? "");
    if (!owner) return [];
    return [
      {
        domainId: row.domainId,
        host: row.host,
        path: row.path,
        port: row.port,
        customEntrypoint: row.customEntrypoint,
        https: row.https,
        certificateType: row.certificateType,
        createdAt: iso(row.createdAt),
        enabled: row.enabled,
        domainType: row.domainType,
        serviceOwnerId: owner.id,
        serviceOwnerType: owner.type as "application" | "compose",
        serviceName: owner.name,
        projectId: owner.projectId,
        projectName: owner.projectName,
        environmentId: owner.environmentId,
        environmentName: owner.environmentName,
      },
    ];
  });
}

/** The newest runs overview.backups answers at most (Dokploy's bound). */
export const OVERVIEW_BACKUP_RUNS = 500;

export const overviewBackupSchema = z.object({
  deploymentId: z.string(),
  kind: z.enum(["backup", "volumeBackup"]),
  status: z.enum(["idle", "running", "done", "error"]),
  createdAt: z.string(),
  destinationId: z.string(),
  destinationName: z.string(),
  /** A database backup's kind of database (`web-server`: the control plane's own); null for a volume backup. */
  databaseType: z.string().nullable(),
  /** A volume backup's kind of service; null for a database backup. */
  serviceType: z.string().nullable(),
  backupType: z.enum(["database", "compose"]).nullable(),
  serviceName: z.string(),
  serviceOwnerId: z.string().nullable(),
  serviceOwnerType: z.string(),
  serverId: z.string().nullable(),
  projectId: z.string().nullable(),
  environmentId: z.string().nullable(),
});

/**
 * overview.backups: the newest runs (deployments of kind backup and volumeBackup) of the
 * organization's database and volume backups whose service the projects given show (already
 * filtered by the caller's grants), and of its web-server backups when `withWebServer` (instance
 * administrators), newest first.
 */
export async function overviewBackups(
  db: Db,
  organizationId: string,
  projects: readonly ProjectTree[],
  withWebServer: boolean,
): Promise<z.infer<typeof overviewBackupSchema>[]> {
  const owners = new Map(flatServices(projects).map((service) => [service.id, service]));
  const ids = [...owners.keys()];
  const destinations = await db
    .selectFrom("destinations")
    .select(["destinationId", "name"])
    .where("organizationId", "=", organizationId)
    .execute();
  if (destinations.length === 0 || (ids.length === 0 && !withWebServer)) return [];
  const destinationNames = new Map(destinations.map((d) => [d.destinationId, d.name]));
  const rows = await db
    .selectFrom("deployments")
    .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
    .leftJoin("backups", "backups.backupId", "backupRuns.backupId")
    .leftJoin("volumeBackups", "volumeBackups.volumeBackupId", "backupRuns.volumeBackupId")
    .select([
      "deployments.deploymentId",
      "deployments.kind",
      "deployments.status",
      "deployments.createdAt",
      "backups.backupId",
      "backups.databaseType",
      "backups.backupType",
      "backups.databaseId as backupDatabaseId",
      "backups.destinationId as backupDestinationId",
      "volumeBackups.volumeBackupId",
      "volumeBackups.serviceType",
      "volumeBackups.serviceName",
      "volumeBackups.applicationId",
      "volumeBackups.databaseId",
      "volumeBackups.composeId",
      "volumeBackups.destinationId as volumeDestinationId",
    ])
    .where("deployments.kind", "in", ["backup", "volumeBackup"])
    .where((eb) =>
      eb.or([
        eb.and([
          eb("backups.destinationId", "in", [...destinationNames.keys()]),
          eb.or([
            ...(ids.length > 0 ? [eb("backups.databaseId", "in", ids)] : []),
            ...(withWebServer ? [eb("backups.databaseType", "=", "web-server")] : []),
          ]),
        ]),
        ...(ids.length > 0
          ? [
              eb.and([
                eb("volumeBackups.organizationId", "=", organizationId),
                eb.or([
                  eb("volumeBackups.applicationId", "in", ids),
                  eb("volumeBackups.databaseId", "in", ids),
                  eb("volumeBackups.composeId", "in", ids),
                ]),
              ]),
            ]
          : []),
      ]),
    )
    .orderBy("deployments.createdAt", "desc")
    .orderBy("deployments.deploymentId", "desc")
    .limit(OVERVIEW_BACKUP_RUNS)
    .execute();
  return rows.flatMap((row) => {
    const volume = row.volumeBackupId !== null;
    if (!volume && row.backupId === null) return [];
    const ownerId = volume ? (row.applicationId ?? row.databaseId ?? row.composeId) : row.backupDatabaseId;
    const owner = ownerId ? owners.get(ownerId) : undefined;
    const destinationId = (volume ? row.volumeDestinationId : row.backupDestinationId) ?? "";
    return [
      {
        deploymentId: row.deploymentId,
        kind: volume ? ("volumeBackup" as const) : ("backup" as const),
        status: row.status,
        createdAt: iso(row.createdAt),
        destinationId,
        destinationName: destinationNames.get(destinationId) ?? "Unknown",
        databaseType: volume ? null : row.databaseType,
        serviceType: volume ? row.serviceType : null,
        backupType: volume ? null : row.backupType,
        serviceName: owner?.name ?? (volume ? (row.serviceName ?? "Unknown") : "Control plane"),
        serviceOwnerId: owner?.id ?? null,
        serviceOwnerType: owner?.type ?? (volume ? (row.serviceType ?? "unknown") : "web-server"),
        serverId: owner?.serverId ?? null,
        projectId: owner?.projectId ?? null,
        environmentId: owner?.environmentId ?? null,
      },
    ];
  });
}
