/**
 * The container objects the docker.* procedures answer, in the shapes Dokploy users know
 * (containerId as the 12-character short id, name without the leading "/", state, status...).
 */
import type { Container, ContainerPort } from "@platform/agent-protocol";
import { isValidName, NAME_PATTERN, SERVER_ID_PATTERN } from "@platform/names";
import { z } from "zod";

export const containerIdSchema = z
  .string()
  .min(1)
  .max(256)
  .regex(NAME_PATTERN, `must match ${NAME_PATTERN.source}`)
  .refine(isValidName, "must not be made of dots only");
export const appNameSchema = containerIdSchema;
export const serverIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(SERVER_ID_PATTERN, `must match ${SERVER_ID_PATTERN.source}`);

export const containerSummarySchema = z.object({
  containerId: z.string(),
  name: z.string(),
  image: z.string(),
  ports: z.string(),
  state: z.string(),
  status: z.string(),
  serverId: z.string().nullable(),
});

export const appContainerSchema = z.object({
  containerId: z.string(),
  name: z.string(),
  state: z.string(),
  status: z.string(),
});

export const labelledContainerSchema = z.object({
  containerId: z.string(),
  name: z.string(),
  state: z.string(),
});

/** A container of a Swarm service or stack, with the node it runs on. */
export const taskContainerSchema = z.object({
  containerId: z.string(),
  name: z.string(),
  state: z.string(),
  node: z.string(),
  currentState: z.string(),
  error: z.string(),
});

const shortId = (container: Container) => container.id.slice(0, 12);
const nameOf = (container: Container) => container.names[0] ?? "";

/** Docker's `docker ps` rendering of published ports: "0.0.0.0:8080->80/tcp, 443/tcp". */
export function formatPorts(ports: ContainerPort[]): string {
  return ports
    .map((port) =>
      port.publicPort
        ? `${port.ip ? `${port.ip}:` : ""}${port.publicPort}->${port.privatePort}/${port.type}`
        : `${port.privatePort}/${port.type}`,
    )
    .join(", ");
}

export function toContainerSummary(container: Container, serverId: string | null) {
  return {
    containerId: shortId(container),
    name: nameOf(container),
    image: container.image,
    ports: formatPorts(container.ports),
    state: container.state,
    status: container.status,
    serverId,
  };
}

export function toAppContainer(container: Container) {
  return {
    containerId: shortId(container),
    name: nameOf(container),
    state: container.state,
    status: container.status,
  };
}

export function toLabelledContainer(container: Container) {
  return { containerId: shortId(container), name: nameOf(container), state: container.state };
}

export function toTaskContainer(container: Container, node: string) {
  return {
    containerId: shortId(container),
    name: nameOf(container),
    state: container.state,
    node,
    currentState: container.status,
    error: "",
  };
}
