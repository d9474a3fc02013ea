/**
 * Ownership labels: every Docker object an agent creates for a tenant (Swarm services, their
 * containers, built images, volumes) carries these labels, and an agent acts on an existing
 * object only when they name the owner the command carries. An object with the same name but
 * other or no labels (made by hand, by another organization, or the platform's own) is never
 * taken over: the agent answers FAILED_PRECONDITION.
 *
 * @example
 *   ownershipLabels({ organizationId: "org1", resource: "application:app1" })
 *   // { "platform.managed": "true", "platform.organization": "org1", "platform.resource": "application:app1" }
 */
import { createHash } from "node:crypto";
import type { ContainerScope, ResourceOwner } from "@platform/agent-protocol";

/** Every object the platform manages (tenant or its own). */
export const MANAGED_LABEL = "platform.managed";
/** The id of the organization that owns the object. */
export const ORGANIZATION_LABEL = "platform.organization";
/** The owning resource as `<kind>:<id>`, e.g. `application:<applicationId>`. */
export const RESOURCE_LABEL = "platform.resource";
/** Objects of the platform itself (its proxy, its agent, its control plane): never a tenant's. */
export const INTERNAL_LABEL = "platform.internal";

/** The role of one of the platform's own objects (`platform.role=proxy` on the proxy service). */
export const ROLE_LABEL = "platform.role";

export type ResourceKind =
  | "application"
  | "database"
  | "compose"
  | "certificate"
  | "preview"
  | "forward-auth";

export function resourceLabel(kind: ResourceKind, id: string): string {
  return `${kind}:${id}`;
}

/** The owner of an application's objects. */
export function applicationOwner(organizationId: string, applicationId: string): ResourceOwner {
  return { organizationId, resource: resourceLabel("application", applicationId) };
}

/** The owner of a database service's objects (its service, containers and data volume). */
export function databaseOwner(organizationId: string, databaseId: string): ResourceOwner {
  return { organizationId, resource: resourceLabel("database", databaseId) };
}

/** The owner of a compose stack's objects (its services, networks and volumes). */
export function composeOwner(organizationId: string, composeId: string): ResourceOwner {
  return { organizationId, resource: resourceLabel("compose", composeId) };
}

/** The owner of a preview deployment's objects (its service, image and Traefik file). */
export function previewOwner(organizationId: string, previewDeploymentId: string): ResourceOwner {
  return { organizationId, resource: resourceLabel("preview", previewDeploymentId) };
}

/** The holder of a stored certificate's proxy files (the certificates router). */
export function certificateOwner(organizationId: string, certificateId: string): ResourceOwner {
  return { organizationId, resource: resourceLabel("certificate", certificateId) };
}

/** The owner of a server's forward-auth service (the forwardAuth router): its service and Traefik file. */
export function forwardAuthOwner(organizationId: string, forwardAuthSettingsId: string): ResourceOwner {
  return { organizationId, resource: resourceLabel("forward-auth", forwardAuthSettingsId) };
}

export function ownershipLabels(owner: ResourceOwner): Record<string, string> {
  return {
    [MANAGED_LABEL]: "true",
    [ORGANIZATION_LABEL]: owner.organizationId,
    [RESOURCE_LABEL]: owner.resource,
  };
}

/** True when `labels` (of an existing object) name exactly this owner. */
export function isOwnedBy(labels: Record<string, string> | undefined, owner: ResourceOwner): boolean {
  return (
    labels?.[MANAGED_LABEL] === "true" &&
    labels[INTERNAL_LABEL] === undefined &&
    labels[ORGANIZATION_LABEL] === owner.organizationId &&
    labels[RESOURCE_LABEL] === owner.resource
  );
}

/**
 * True for a service deployed before ownership labels existed: managed, no organization label,
 * and `platform.applicationId` naming the owner's application. Its next update relabels it.
 */
export function isLegacyOwnedBy(labels: Record<string, string> | undefined, owner: ResourceOwner): boolean {
  return (
    labels?.[MANAGED_LABEL] === "true" &&
    labels[ORGANIZATION_LABEL] === undefined &&
    labels[INTERNAL_LABEL] === undefined &&
    labels["platform.applicationId"] !== undefined &&
    resourceLabel("application", labels["platform.applicationId"]) === owner.resource
  );
}

/** True when an owner is complete (both fields set): commands without one are refused. */
export function isCompleteOwner(owner: ResourceOwner | undefined): owner is ResourceOwner {
  return Boolean(owner?.organizationId && owner.resource);
}

/** The platform's own objects: labelled internal, or named with the reserved prefix. */
export function isPlatformInternal(
  labels: Record<string, string> | undefined,
  names: string[] = [],
): boolean {
  if (labels?.[INTERNAL_LABEL] !== undefined || labels?.[ROLE_LABEL] !== undefined) return true;
  return names.some((name) => name.replace(/^\//, "").toLowerCase().startsWith("platform-"));
}

/**
 * True when a container with these labels and names is inside `scope`: labelled for the scope's
 * organization, or without an organization label when the scope includes unmanaged containers;
 * never one of the platform's own.
 */
export function isInContainerScope(
  labels: Record<string, string> | undefined,
  names: string[],
  scope: ContainerScope,
): boolean {
  if (isPlatformInternal(labels, names)) return false;
  const organization = labels?.[ORGANIZATION_LABEL];
  if (organization !== undefined) return organization === scope.organizationId;
  return scope.includeUnmanaged;
}

/**
 * The engine's name of an organization's network `name` (network.*): `o<12 hex of the
 * organization id's SHA-256>-<name>`, at most 63 characters (Swarm's limit) for a name of at
 * most 48. Two organizations' networks of the same name never collide, and no tenant name can
 * become the platform's (platform-*) or the engine's own (ingress, bridge, host, none).
 */
export function organizationNetworkPrefix(organizationId: string): string {
  return `o${createHash("sha256").update(organizationId).digest("hex").slice(0, 12)}-`;
}

export function organizationNetworkName(organizationId: string, name: string): string {
  return `${organizationNetworkPrefix(organizationId)}${name}`;
}

/** Networks the engine (or Dokploy's install) keeps: never an organization's. */
export const ENGINE_NETWORKS = ["bridge", "host", "none", "ingress", "docker_gwbridge", "dokploy-network"];

/**
 * Whose an engine network is, for `scope` (network.import, resync, inspect, remove): "labelled"
 * when it carries the scope organization's label and its namespaced name (one the platform made
 * for it); "unlabelled" when it carries no platform label and no organization's name prefix and
 * the scope includes unmanaged resources (the instance's owner on its own machine: Dokploy
 * imports any such network); null otherwise (another organization's, a stack's own network,
 * the platform's, the engine's).
 */
export function networkOwnership(
  network: { name: string; labels: Record<string, string> | undefined },
  scope: { organizationId: string; includeUnmanaged: boolean },
): "labelled" | "unlabelled" | null {
  const labels = network.labels ?? {};
  if (ENGINE_NETWORKS.includes(network.name) || isPlatformInternal(labels, [network.name])) return null;
  if (labels[ORGANIZATION_LABEL] !== undefined) {
    return labels[ORGANIZATION_LABEL] === scope.organizationId &&
      labels[MANAGED_LABEL] === "true" &&
      network.name.startsWith(organizationNetworkPrefix(scope.organizationId))
      ? "labelled"
      : null;
  }
  const platformLabelled = Object.keys(labels).some((key) => key.startsWith("platform."));
  if (platformLabelled || /^o[0-9a-f]{12}-/.test(network.name)) return null;
  return scope.includeUnmanaged ? "unlabelled" : null;
}
