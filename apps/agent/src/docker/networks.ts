/**
 * Organization networks (network.*): created, inspected and removed within the caller's scope.
 * A network is the organization's when it is labelled platform.organization=<its id> AND its
 * name carries the organization's prefix (organizationNetworkName); anything else (another
 * organization's network, an unlabelled one, the platform's own, the engine's ingress/bridge)
 * is answered NOT_FOUND in the engine's words, as a network that does not exist. A create may
 * only name a network inside the caller's namespace, so a tenant can never make, shadow or
 * remove platform-network or ingress whatever the control plane sends.
 */
import type {
  ContainerScope,
  CreateNetworkCommand,
  EngineNetworkList,
  ImportNetworkCommand,
  InspectNetworkCommand,
  ListEngineNetworksCommand,
  NetworkConfig,
  NetworkRemoved,
  RemoveNetworkCommand,
} from "@platform/agent-protocol";
import {
  MANAGED_LABEL,
  networkOwnership,
  ORGANIZATION_LABEL,
  organizationNetworkPrefix,
} from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus } from "./engine.ts";
import { requireScope } from "./volumes.ts";

/** Docker's network names, and Swarm's 63-character limit. */
export const NETWORK_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;
const DRIVERS = new Set(["overlay", "bridge"]);

function notFound(name: string): CommandError {
  return new CommandError("NOT_FOUND", `network ${name} not found`);
}

/** The name, when it is a valid name inside the scope's namespace; INVALID_ARGUMENT otherwise. */
function checkNetworkName(name: string, scope: ContainerScope): string {
  if (!name || !NETWORK_NAME_PATTERN.test(name)) {
    throw new CommandError("INVALID_ARGUMENT", "name: must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ (at most 63)");
  }
  if (!name.startsWith(organizationNetworkPrefix(scope.organizationId))) {
    throw new CommandError("INVALID_ARGUMENT", "name: must be inside the organization's namespace");
  }
  return name;
}

/**
 * The network's inspect data when it is the scope's organization's (or, with includeUnmanaged,
 * an unlabelled one: networkOwnership); NOT_FOUND otherwise.
 */
async function inspectInScope(docker: Docker, rawName: string, rawScope: ContainerScope | undefined) {
  const scope = requireScope(rawScope);
  const name = rawName ?? "";
  // Outside the namespace (and no unmanaged scope): as unknown as a missing network, never looked up.
  if (
    !NETWORK_NAME_PATTERN.test(name) ||
    (!scope.includeUnmanaged && !name.startsWith(organizationNetworkPrefix(scope.organizationId)))
  ) {
    throw notFound(name);
  }
  let info: Docker.NetworkInspectInfo;
  try {
    info = (await docker.getNetwork(name).inspect()) as Docker.NetworkInspectInfo;
  } catch (error) {
    if (engineStatus(error) === 404) throw notFound(name);
    throw error;
  }
  // By name, Docker also answers a network whose id starts with `name`: the name must match.
  if (
    info.Name !== name ||
    info.Ingress ||
    !DRIVERS.has(info.Driver) ||
    networkOwnership({ name: info.Name, labels: info.Labels as Record<string, string> }, scope) === null
  ) {
    throw notFound(name);
  }
  return info;
}

export async function createNetwork(docker: Docker, command: CreateNetworkCommand): Promise<NetworkConfig> {
  const scope = requireScope(command.scope);
  const name = checkNetworkName(command.name, scope);
  const driver = command.driver || "overlay";
  if (!DRIVERS.has(driver)) throw new CommandError("INVALID_ARGUMENT", "driver: must be overlay or bridge");
  for (const key of Object.keys(command.labels ?? {})) {
    if (key.startsWith("platform.")) throw new CommandError("INVALID_ARGUMENT", `labels: ${key} is reserved`);
  }
  const existing = await docker.listNetworks({ filters: { name: [name] } });
  if (existing.some((network) => network.Name === name)) {
    throw new CommandError("FAILED_PRECONDITION", `network with name ${name} already exists`);
  }
  let created: Docker.Network;
  try {
    created = await docker.createNetwork({
      Name: name,
      Driver: driver,
      // Services of the organization (Swarm) and its one-off containers may join it.
      Attachable: driver === "overlay",
      Internal: command.internal,
      EnableIPv6: command.enableIpv6,
      CheckDuplicate: true,
      ...(command.mtu ? { Options: { "com.docker.network.driver.mtu": String(command.mtu) } } : {}),
      Labels: {
        ...(command.labels ?? {}),
        [MANAGED_LABEL]: "true",
        [ORGANIZATION_LABEL]: scope.organizationId,
      },
    });
  } catch (error) {
    if (engineStatus(error) === 409) {
      throw new CommandError("FAILED_PRECONDITION", `network with name ${name} already exists`);
    }
    if (engineStatus(error) === 503 || engineStatus(error) === 400) {
      throw new CommandError("FAILED_PRECONDITION", `cannot create the network: ${engineMessage(error)}`);
    }
    throw error;
  }
  // A Swarm network inspected the moment it is created may come back from the cluster's store
  // before this node has it, with an empty Driver (seen here); it is complete a moment later.
  let info = await created.inspect();
  for (let attempt = 0; !info.Driver && attempt < 50; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    info = await created.inspect();
  }
  return { inspectJson: JSON.stringify(info), networkId: String(info.Id ?? "") };
}

export async function inspectNetwork(docker: Docker, command: InspectNetworkCommand): Promise<NetworkConfig> {
  const info = await inspectInScope(docker, command.name, command.scope);
  return { inspectJson: JSON.stringify(info), networkId: info.Id };
}

/** Names of the Swarm services attached to the network (a network's Containers are per node). */
async function servicesUsing(docker: Docker, networkId: string): Promise<string[]> {
  try {
    const services = await docker.listServices();
    return services
      .filter((service) =>
        (service.Spec?.TaskTemplate?.Networks ?? service.Spec?.Networks ?? []).some(
          (attachment: { Target?: string }) => attachment.Target === networkId,
        ),
      )
      .map((service) => service.Spec?.Name ?? service.ID ?? "");
  } catch {
    return [];
  }
}

export async function removeNetwork(docker: Docker, command: RemoveNetworkCommand): Promise<NetworkRemoved> {
  const info = await inspectInScope(docker, command.name, command.scope);
  const users = [
    ...(await servicesUsing(docker, info.Id)),
    // An overlay's own load-balancer endpoint (`lb-<name>`) is no user.
    ...Object.entries(info.Containers ?? {})
      .filter(([id]) => !id.startsWith("lb-"))
      .map(([, container]) => container.Name),
  ];
  if (users.length > 0) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `the network ${info.Name} is in use by ${[...new Set(users)].join(", ")}`,
    );
  }
  try {
    await docker.getNetwork(info.Id).remove();
  } catch (error) {
    if (engineStatus(error) === 404) throw notFound(info.Name);
    if (engineStatus(error) === 403 || engineStatus(error) === 409) {
      throw new CommandError(
        "FAILED_PRECONDITION",
        `the network ${info.Name} is in use: ${engineMessage(error)}`,
      );
    }
    throw error;
  }
  return {};
}

/** The engine's networks the scope may record (network.networksToSync, resync): networkOwnership. */
export async function listEngineNetworks(
  docker: Docker,
  command: ListEngineNetworksCommand,
): Promise<EngineNetworkList> {
  const scope = requireScope(command.scope);
  const all = (await docker.listNetworks()) as Docker.NetworkInspectInfo[];
  const networks = all.flatMap((info) => {
    if (info.Ingress || !DRIVERS.has(info.Driver)) return [];
    const ownership = networkOwnership(
      { name: info.Name, labels: info.Labels as Record<string, string> },
      scope,
    );
    if (ownership === null) return [];
    return [
      {
        name: info.Name,
        networkId: info.Id,
        driver: info.Driver,
        internal: info.Internal ?? false,
        attachable: info.Attachable ?? false,
        subnets: (info.IPAM?.Config ?? []).flatMap((config) => (config.Subnet ? [config.Subnet] : [])),
        labelled: ownership === "labelled",
      },
    ];
  });
  return { networks };
}

/** network.import: the network's inspect data when the scope may record it; NOT_FOUND otherwise. */
export async function importNetwork(docker: Docker, command: ImportNetworkCommand): Promise<NetworkConfig> {
  const info = await inspectInScope(docker, command.name, command.scope);
  return { inspectJson: JSON.stringify(info), networkId: info.Id };
}
