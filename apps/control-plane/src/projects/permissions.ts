/**
 * What a member may see and do (spec 2.10 permission flags and Dokploy's user.assignPermissions),
 * in one place. Owners and administrators may do everything. A member's grants are read from
 * their membership row:
 * - accessedProjects / accessedEnvironments / accessedServices: the projects, environments and
 *   services they see and act on. NULL means not restricted (what members had before these
 *   lists existed); a list, even empty, restricts. A service is seen only inside a seen
 *   environment, an environment only inside a seen project. Hidden objects answer 404, as
 *   another organization's do.
 * - accessedServers / accessedGitProviders: the remote servers (by serverId; this machine is
 *   always reachable) and git providers (by gitProviderId) they use. NULL is not restricted. A
 *   server not listed is missing from the server lists and a 404 to any procedure naming it as
 *   serverId or buildServerId (the dispatcher asks requireServerAccess); a provider not listed is
 *   missing from the provider lists and a 404 wherever it is named (git-providers/repository.ts),
 *   except to its creator.
 * - canCreateProjects / canCreateEnvironments / canCreateServices, canDeleteProjects /
 *   canDeleteEnvironments / canDeleteServices. Deleting a project deletes its environments and
 *   services, so canDeleteProjects also allows deleting environments and services.
 * - canAccessToDocker / canAccessToTraefikFiles / canAccessToAPI / canAccessToSSHKeys /
 *   canAccessToGitProviders: docker.*, the applications' Traefik files, API keys, sshKey.* and Git
 *   providers (requireFeature).
 * What a member creates is added to their lists when they are restricted, as Dokploy does.
 */

import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { Caller, Feature } from "../context.ts";
import type { Db } from "../db/database.ts";
import { ownedBy, withOwner } from "../db/owned.ts";
import type { Member } from "../db/schema.ts";
import { forbidden, notFound } from "../errors.ts";
import {
  existingEnvironmentIds,
  existingGitProviderIds,
  existingProjectIds,
  existingServerIds,
  existingServiceIds,
} from "./repository.ts";
import {
  loadServiceSummaries,
  type ServiceKind,
  serviceFields,
  serviceIdKey,
  serviceKinds,
} from "./workload-kinds.ts";

export const privileged = (caller: Pick<Caller, "role">) =>
  caller.role === "owner" || caller.role === "admin";

const FEATURE_FLAGS: Record<Feature, string> = {
  docker: "canAccessToDocker",
  traefikFiles: "canAccessToTraefikFiles",
  api: "canAccessToAPI",
  sshKeys: "canAccessToSSHKeys",
  gitProviders: "canAccessToGitProviders",
};

/** A member reaches a feature only with its canAccessTo* flag; owners and administrators always. */
export function requireFeature(caller: Caller, feature: Feature): void {
  if (privileged(caller) || caller.features[feature]) return;
  const flag = FEATURE_FLAGS[feature];
  throw forbidden(
    `You do not have permission for this (${flag}); an administrator grants it with user.assignPermissions`,
  );
}

export interface Grants {
  projects: ReadonlySet<string> | null;
  environments: ReadonlySet<string> | null;
  services: ReadonlySet<string> | null;
  canCreateServices: boolean;
  canDeleteServices: boolean;
  canCreateEnvironments: boolean;
  canDeleteEnvironments: boolean;
}

const UNRESTRICTED: Grants = {
  projects: null,
  environments: null,
  services: null,
  canCreateServices: true,
  canDeleteServices: true,
  canCreateEnvironments: true,
  canDeleteEnvironments: true,
};

const asSet = (list: string[] | null) => (list === null ? null : new Set(list));

/** The caller's grants (everything for owners and administrators). */
export async function grantsOf(db: Db, caller: Caller): Promise<Grants> {
  if (privileged(caller)) return UNRESTRICTED;
  const member = await db
    .selectFrom("members")
    .selectAll()
    .where("organizationId", "=", caller.organizationId)
    .where("userId", "=", caller.userId)
    .executeTakeFirst();
  if (!member) throw notFound("Organization");
  return {
    projects: asSet(member.accessedProjects),
    environments: asSet(member.accessedEnvironments),
    services: asSet(member.accessedServices),
    canCreateServices: member.canCreateServices,
    canDeleteServices: member.canDeleteServices || member.canDeleteProjects,
    canCreateEnvironments: member.canCreateEnvironments,
    canDeleteEnvironments: member.canDeleteEnvironments || member.canDeleteProjects,
  };
}

const allows = (list: ReadonlySet<string> | null, id: string) => list === null || list.has(id);

export const seesProject = (grants: Grants, projectId: string) => allows(grants.projects, projectId);

export const seesEnvironment = (grants: Grants, environment: { environmentId: string; projectId: string }) =>
  seesProject(grants, environment.projectId) && allows(grants.environments, environment.environmentId);

export const seesService = (
  grants: Grants,
  service: { serviceId: string; environmentId: string; projectId: string },
) => seesEnvironment(grants, service) && allows(grants.services, service.serviceId);

/**
 * The ids of the organization's services (every kind) the caller may see, for reads that meet
 * services by something other than their id (docker.* meets containers by their resource
 * label); null when the caller sees every service of the organization.
 */
export async function visibleServiceIds(db: Db, caller: Caller): Promise<ReadonlySet<string> | null> {
  const grants = await grantsOf(db, caller);
  if (grants.projects === null && grants.environments === null && grants.services === null) return null;
  const environments = (
    await ownedBy(db.selectFrom("environments"), "environments", caller.organizationId)
      .select(["environments.environmentId", "environments.projectId"])
      .execute()
  ).filter((environment) => seesEnvironment(grants, environment));
  const summaries = await loadServiceSummaries(
    db,
    environments.map((environment) => environment.environmentId),
  );
  const visible = new Set<string>();
  for (const services of summaries.values()) {
    for (const kind of serviceKinds) {
      for (const service of services[serviceFields[kind]] as Record<string, unknown>[]) {
        const id = service[serviceIdKey(kind)] as string;
        if (allows(grants.services, id)) visible.add(id);
      }
    }
  }
  return visible;
}

/** An environment's service lists with only the services the grants show. */
export function visibleServices<E extends { environmentId: string; projectId: string }>(
  grants: Grants,
  environment: E,
): E {
  if (grants.services === null) return environment;
  const shown: Record<string, unknown> = { ...environment };
  for (const [kind, field] of Object.entries(serviceFields) as [ServiceKind, string][]) {
    const list = (environment as Record<string, unknown>)[field];
    if (!Array.isArray(list)) continue;
    const idKey = serviceIdKey(kind);
    shown[field] = list.filter((service: Record<string, string>) => allows(grants.services, service[idKey]!));
  }
  return shown as E;
}

/** A project's environments (and their services) as the grants show them. */
export function visibleProject<P extends { environments: { environmentId: string; projectId: string }[] }>(
  grants: Grants,
  project: P,
): P {
  // The hot path (owners, administrators, unrestricted members) copies nothing.
  if (grants.environments === null && grants.services === null) return project;
  return {
    ...project,
    environments: project.environments
      .filter((environment) => seesEnvironment(grants, environment))
      .map((environment) => visibleServices(grants, environment)),
  };
}

export async function requireProjectAccess(db: Db, caller: Caller, projectId: string): Promise<Grants> {
  const grants = await grantsOf(db, caller);
  if (!seesProject(grants, projectId)) throw notFound("Project");
  return grants;
}

export async function requireEnvironmentAccess(
  db: Db,
  caller: Caller,
  environment: { environmentId: string; projectId: string },
): Promise<Grants> {
  const grants = await grantsOf(db, caller);
  if (!seesEnvironment(grants, environment)) throw notFound("Environment");
  return grants;
}

/** Throws 404 `what` when the caller may not see the service. */
export async function requireServiceAccess(
  db: Db,
  caller: Caller,
  service: { serviceId: string; environmentId: string; projectId: string },
  what = "Application",
): Promise<Grants> {
  const grants = await grantsOf(db, caller);
  if (!seesService(grants, service)) throw notFound(what);
  return grants;
}

/** The remote servers a member may use; null when not restricted (owners, administrators). */
export async function grantedServerIds(db: Db, caller: Caller): Promise<ReadonlySet<string> | null> {
  if (privileged(caller)) return null;
  const member = await db
    .selectFrom("members")
    .select("accessedServers")
    .where("organizationId", "=", caller.organizationId)
    .where("userId", "=", caller.userId)
    .executeTakeFirst();
  return asSet(member?.accessedServers ?? null);
}

/** The servers of a list the caller may use. */
export async function onlyGrantedServers<S extends { serverId: string }>(
  db: Db,
  caller: Caller,
  servers: S[],
): Promise<S[]> {
  const granted = await grantedServerIds(db, caller);
  return granted === null ? servers : servers.filter((server) => granted.has(server.serverId));
}

/** 404 Server when a member restricted to other servers names this one (this machine: never). */
export async function requireServerAccess(db: Db, caller: Caller, serverId: string): Promise<void> {
  if (serverId === LOCAL_SERVER_ID) return;
  const granted = await grantedServerIds(db, caller);
  if (granted !== null && !granted.has(serverId)) throw notFound("Server");
}

/** project.create and project.duplicate into a new project. */
export function requireCanCreateProjects(caller: Caller): void {
  if (!privileged(caller) && !caller.canCreateProjects) {
    throw forbidden("You do not have permission to create projects (canCreateProjects)");
  }
}

/** project.remove (it deletes every environment and service of the project). */
export function requireCanDeleteProjects(
  caller: Caller,
  what: "projects" | "environments" | "services" = "projects",
): void {
  if (!privileged(caller) && !caller.canDeleteProjects) {
    throw forbidden(`You do not have permission to delete ${what} (canDeleteProjects)`);
  }
}

export function requireCanCreateServices(grants: Grants): void {
  if (!grants.canCreateServices) {
    throw forbidden("You do not have permission to create services (canCreateServices)");
  }
}

/** application.delete and clearing deployments: canDeleteServices or canDeleteProjects. */
export function requireCanDeleteServices(grants: Grants): void {
  if (!grants.canDeleteServices) {
    throw forbidden("You do not have permission to delete services (canDeleteServices or canDeleteProjects)");
  }
}

export function requireCanCreateEnvironments(grants: Grants): void {
  if (!grants.canCreateEnvironments) {
    throw forbidden("You do not have permission to create environments (canCreateEnvironments)");
  }
}

/** environment.remove: canDeleteEnvironments or canDeleteProjects. */
export function requireCanDeleteEnvironments(grants: Grants): void {
  if (!grants.canDeleteEnvironments) {
    throw forbidden(
      "You do not have permission to delete environments (canDeleteEnvironments or canDeleteProjects)",
    );
  }
}

const LIST_COLUMNS = {
  projects: "accessedProjects",
  environments: "accessedEnvironments",
  services: "accessedServices",
} as const satisfies Record<string, keyof Member>;

/**
 * Adds what a restricted member just created to their list, so they keep seeing it (Dokploy
 * does the same). Unrestricted members and administrators need nothing.
 */
export async function grantCreated(
  db: Db,
  caller: Caller,
  what: keyof typeof LIST_COLUMNS,
  id: string,
): Promise<void> {
  if (privileged(caller)) return;
  const column = LIST_COLUMNS[what];
  const member = await db
    .selectFrom("members")
    .select(column)
    .where("organizationId", "=", caller.organizationId)
    .where("userId", "=", caller.userId)
    .executeTakeFirst();
  const list = member?.[column] as string[] | null | undefined;
  if (!list || list.includes(id)) return;
  await db
    .updateTable("members")
    .set({ [column]: [...list, id] })
    .where("organizationId", "=", caller.organizationId)
    .where("userId", "=", caller.userId)
    .execute();
}

/** user.assignPermissions' Dokploy fields (absent: unchanged; a list null: not restricted). */
export interface GrantChanges {
  accessedProjects?: string[] | null | undefined;
  accessedEnvironments?: string[] | null | undefined;
  accessedServices?: string[] | null | undefined;
  accessedServers?: string[] | null | undefined;
  accessedGitProviders?: string[] | null | undefined;
  canCreateServices?: boolean | undefined;
  canDeleteServices?: boolean | undefined;
  canCreateEnvironments?: boolean | undefined;
  canDeleteEnvironments?: boolean | undefined;
  canAccessToDocker?: boolean | undefined;
  canAccessToTraefikFiles?: boolean | undefined;
  canAccessToAPI?: boolean | undefined;
  canAccessToSSHKeys?: boolean | undefined;
  canAccessToGitProviders?: boolean | undefined;
}

/**
 * The ids of `changes`' lists that are not projects, environments or services of the
 * organization, by field (services: applications and database services).
 */
export async function unknownGrantIds(
  db: Db,
  organizationId: string,
  changes: GrantChanges,
): Promise<{ field: keyof GrantChanges; ids: string[] }[]> {
  const checks = [
    ["accessedProjects", changes.accessedProjects, existingProjectIds],
    ["accessedEnvironments", changes.accessedEnvironments, existingEnvironmentIds],
    ["accessedServices", changes.accessedServices, existingServiceIds],
    ["accessedServers", changes.accessedServers, existingServerIds],
    ["accessedGitProviders", changes.accessedGitProviders, existingGitProviderIds],
  ] as const;
  const unknown: { field: keyof GrantChanges; ids: string[] }[] = [];
  for (const [field, ids, existing] of checks) {
    if (!ids || ids.length === 0) continue;
    const found = await existing(db, organizationId, [...new Set(ids)]);
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) unknown.push({ field, ids: missing });
  }
  return unknown;
}

/** Stores a member's grants (what user.assignPermissions sets). */
export async function setMemberGrants(
  db: Db,
  organizationId: string,
  userId: string,
  changes: GrantChanges,
): Promise<void> {
  const dedupe = (ids: string[] | null | undefined) => (ids ? [...new Set(ids)] : ids);
  const values = {
    accessedProjects: dedupe(changes.accessedProjects),
    accessedEnvironments: dedupe(changes.accessedEnvironments),
    accessedServices: dedupe(changes.accessedServices),
    accessedServers: dedupe(changes.accessedServers),
    accessedGitProviders: dedupe(changes.accessedGitProviders),
    canCreateServices: changes.canCreateServices,
    canDeleteServices: changes.canDeleteServices,
    canCreateEnvironments: changes.canCreateEnvironments,
    canDeleteEnvironments: changes.canDeleteEnvironments,
    canAccessToDocker: changes.canAccessToDocker,
    canAccessToTraefikFiles: changes.canAccessToTraefikFiles,
    canAccessToApi: changes.canAccessToAPI,
    canAccessToSshKeys: changes.canAccessToSSHKeys,
    canAccessToGitProviders: changes.canAccessToGitProviders,
  };
  const set = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
  if (Object.keys(set).length === 0) return;
  await db
    .updateTable("members")
    .set(set)
    .where("organizationId", "=", organizationId)
    .where("userId", "=", userId)
    .execute();
}

/** Where applications sit: their environment and project, in the shape seesService reads. */
function locateApplications(db: Db, applicationIds: string[]) {
  return withOwner(db.selectFrom("applications"), "applications.environmentId")
    .select([
      "applications.applicationId as serviceId",
      "environments.environmentId",
      "environments.projectId",
    ])
    .where("applications.applicationId", "in", applicationIds)
    .execute();
}

/**
 * The rows (deployments, queue jobs…) whose service (an application or a database) the caller
 * may see; each row says where its service sits.
 */
export async function onlyVisibleServices<
  Row extends { serviceId: string; environmentId: string; projectId: string },
>(db: Db, caller: Caller, rows: Row[]): Promise<Row[]> {
  if (privileged(caller) || rows.length === 0) return rows;
  const grants = await grantsOf(db, caller);
  return rows.filter((row) => seesService(grants, row));
}

/**
 * For procedures that reach an application through another object (its domains, credentials,
 * ports, deployments): 404 `what` when the caller may not see the application. The caller has
 * already checked the organization; null (no application) needs nothing.
 */
export async function requireApplicationAccess(
  db: Db,
  caller: Caller,
  applicationId: string | null,
  what = "Application",
): Promise<void> {
  if (privileged(caller) || !applicationId) return;
  const [located] = await locateApplications(db, [applicationId]);
  if (located) await requireServiceAccess(db, caller, located, what);
}
