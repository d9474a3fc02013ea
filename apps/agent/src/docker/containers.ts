/**
 * Container commands against the Docker Engine: list (with name and label filters), inspect and
 * restart. Every id, name and label reaching Docker is checked against the name pattern first.
 */
import type {
  Container,
  ContainerConfig,
  ContainerScope,
  ListContainersCommand,
  RestartContainerResult,
} from "@platform/agent-protocol";
import { assertValidName } from "@platform/names";
import { isInContainerScope } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";

export const SWARM_SERVICE_LABEL = "com.docker.swarm.service.name";
export const STACK_NAMESPACE_LABEL = "com.docker.stack.namespace";
export const COMPOSE_PROJECT_LABEL = "com.docker.compose.project";

/** Docker `label` filters for a list command, after validating every name in it. */
export function labelFilters(filter: ListContainersCommand): string[] {
  const labels: Record<string, string> = { ...(filter.labels ?? {}) };
  if (filter.swarmServiceName) labels[SWARM_SERVICE_LABEL] = filter.swarmServiceName;
  if (filter.stackNamespace) labels[STACK_NAMESPACE_LABEL] = filter.stackNamespace;
  if (filter.composeProject) labels[COMPOSE_PROJECT_LABEL] = filter.composeProject;
  return Object.entries(labels).map(([key, value]) => {
    assertValidName(key, "label key");
    return value === "" ? key : `${key}=${assertValidName(value, `value of label ${key}`)}`;
  });
}

function toContainer(info: Docker.ContainerInfo): Container {
  return {
    id: info.Id,
    names: (info.Names ?? []).map((name) => name.replace(/^\//, "")),
    image: info.Image ?? "",
    imageId: info.ImageID ?? "",
    command: info.Command ?? "",
    createdUnix: info.Created ?? 0,
    state: info.State ?? "",
    status: info.Status ?? "",
    labels: info.Labels ?? {},
    ports: (info.Ports ?? []).map((port) => ({
      ip: port.IP ?? "",
      privatePort: port.PrivatePort ?? 0,
      publicPort: port.PublicPort ?? 0,
      type: port.Type ?? "",
    })),
    networks: Object.keys(info.NetworkSettings?.Networks ?? {}),
  };
}

export async function listContainers(docker: Docker, filter: ListContainersCommand): Promise<Container[]> {
  const nameMatch = filter.nameMatch ? assertValidName(filter.nameMatch, "name filter") : "";
  const labels = labelFilters(filter);
  const infos = await docker.listContainers({
    all: filter.all ?? false,
    filters: labels.length > 0 ? { label: labels } : {},
  });
  return infos
    .map(toContainer)
    .filter((container) => !nameMatch || container.names.some((name) => name.includes(nameMatch)));
}

/** The command's scope, required: without one the agent would not know whose containers it may touch. */
function requireScope(scope: ContainerScope | undefined): ContainerScope {
  if (!scope?.organizationId) throw new CommandError("INVALID_ARGUMENT", "scope: organizationId is required");
  return scope;
}

/**
 * The container's inspect data when it is inside `scope`. One outside it (another organization's,
 * the platform's own, an unmanaged one without includeUnmanaged) is answered as missing, so that a
 * command cannot tell it from a container that does not exist.
 */
export async function inspectInScope(docker: Docker, containerId: string, scope: ContainerScope | undefined) {
  const id = assertValidName(containerId, "container id");
  const expected = requireScope(scope);
  const info = await docker.getContainer(id).inspect();
  const name = info.Name.replace(/^\//, "");
  if (!isInContainerScope(info.Config?.Labels ?? {}, [name], expected))
    // The engine's own words for a missing container: the two answers cannot be told apart.
    throw new CommandError("NOT_FOUND", `No such container: ${id}`);
  return { info, name };
}

export async function inspectContainer(
  docker: Docker,
  containerId: string,
  scope: ContainerScope | undefined,
): Promise<ContainerConfig> {
  const { info, name } = await inspectInScope(docker, containerId, scope);
  return { id: info.Id, name, inspectJson: JSON.stringify(info) };
}

export async function restartContainer(
  docker: Docker,
  containerId: string,
  scope: ContainerScope | undefined,
  stopTimeoutSeconds = 0,
): Promise<RestartContainerResult> {
  const { info: checked } = await inspectInScope(docker, containerId, scope);
  // By the full id that was checked, never by a name that could now be another container's.
  const container = docker.getContainer(checked.Id);
  await container.restart(stopTimeoutSeconds > 0 ? { t: stopTimeoutSeconds } : {});
  const info = await container.inspect();
  return { id: info.Id, startedAt: info.State.StartedAt };
}
