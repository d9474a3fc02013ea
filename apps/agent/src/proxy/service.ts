/**
 * The proxy's Swarm service: one Traefik task pinned to this node (its files are here), on the
 * platform network, reading /etc/traefik/traefik.yml from the mounted proxy directory, with its
 * entry points published in host mode (the ingress routing mesh is not used).
 */
import { INTERNAL_LABEL } from "@platform/ownership";
import {
  PROXY_SERVICE_LABEL,
  PROXY_SERVICE_LABEL_VALUE,
  STATIC_CONFIG_PATH,
  TRAEFIK_CONTAINER_DIRECTORY,
} from "@platform/traefik-config/paths.ts";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { DEFAULT_DOCKER_SOCKET, engineStatus } from "../docker/engine.ts";
import { inspectService } from "../docker/swarm.ts";
import { PLATFORM_NETWORK } from "../validate/engine-facts.ts";

/** The ports of Traefik's entry points inside its container (see @platform/traefik-config). */
export const HTTP_TARGET_PORT = 80;
export const HTTPS_TARGET_PORT = 443;
export const DASHBOARD_TARGET_PORT = 8080;

export interface ProxyServiceSettings {
  serviceName: string;
  image: string;
  /** Absolute path of the proxy's directory on the server (mounted at /etc/traefik). */
  proxyDirectory: string;
  /** The Swarm node the task is pinned to (this server). */
  nodeId: string;
  /** The overlay network the proxy shares with the applications. */
  platformNetwork: string;
  /** The engine's socket on the server (the agent's): mounted at /var/run/docker.sock. */
  dockerSocket: string;
  httpPort: number;
  httpsPort: number;
  /** Published only when set. */
  dashboardPort?: number;
  /** Ports published beside the entry points (settings.updateTraefikPorts), in host mode too. */
  additionalPorts?: ProxyExtraPort[];
  /** The container's environment (settings.writeTraefikEnv), KEY=VALUE entries. */
  env?: string[];
  forceUpdate: number;
}

export interface ProxyExtraPort {
  TargetPort: number;
  PublishedPort: number;
  Protocol: "tcp" | "udp" | "sctp";
}

export const ENTRY_POINT_TARGETS = new Set([HTTP_TARGET_PORT, HTTPS_TARGET_PORT, DASHBOARD_TARGET_PORT]);

/** The published ports of a proxy spec that are not its entry points' (kept across updates). */
export function extraPortsOf(spec: Docker.ServiceSpec): ProxyExtraPort[] {
  return (spec.EndpointSpec?.Ports ?? [])
    .filter((port) => !ENTRY_POINT_TARGETS.has(port.TargetPort ?? 0))
    .map((port) => ({
      TargetPort: port.TargetPort ?? 0,
      PublishedPort: port.PublishedPort ?? 0,
      Protocol: (port.Protocol ?? "tcp") as ProxyExtraPort["Protocol"],
    }));
}

/** The container environment of a proxy spec (kept across updates). */
export function envOf(spec: Docker.ServiceSpec): string[] {
  return (spec.TaskTemplate as Docker.ContainerTaskSpec | undefined)?.ContainerSpec?.Env ?? [];
}

/** The service's full spec (create, and update in place). */
export function proxyServiceSpec(settings: ProxyServiceSettings): Docker.ServiceSpec {
  const published = [
    { TargetPort: HTTP_TARGET_PORT, PublishedPort: settings.httpPort },
    { TargetPort: HTTPS_TARGET_PORT, PublishedPort: settings.httpsPort },
    ...(settings.dashboardPort === undefined
      ? []
      : [{ TargetPort: DASHBOARD_TARGET_PORT, PublishedPort: settings.dashboardPort }]),
  ];
  return {
    Name: settings.serviceName,
    Labels: { [PROXY_SERVICE_LABEL]: PROXY_SERVICE_LABEL_VALUE, [INTERNAL_LABEL]: "true" },
    TaskTemplate: {
      ContainerSpec: {
        Image: settings.image,
        // The image's entrypoint runs `traefik` with these arguments (as the official image does).
        Args: [`--configFile=${STATIC_CONFIG_PATH}`],
        ...(settings.env && settings.env.length > 0 ? { Env: settings.env } : {}),
        Labels: { [PROXY_SERVICE_LABEL]: PROXY_SERVICE_LABEL_VALUE, [INTERNAL_LABEL]: "true" },
        Mounts: [
          { Type: "bind", Source: settings.proxyDirectory, Target: TRAEFIK_CONTAINER_DIRECTORY },
          { Type: "bind", Source: settings.dockerSocket, Target: DEFAULT_DOCKER_SOCKET, ReadOnly: true },
        ],
      },
      RestartPolicy: { Condition: "any" },
      Placement: { Constraints: [`node.id==${settings.nodeId}`] },
      Networks: [{ Target: settings.platformNetwork }],
      ForceUpdate: settings.forceUpdate,
    },
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: {
      Ports: [
        ...published.map((port) => ({ Protocol: "tcp" as const, PublishMode: "host" as const, ...port })),
        ...(settings.additionalPorts ?? []).map((port) => ({ PublishMode: "host" as const, ...port })),
      ],
    },
  };
}

export interface ExistingService {
  id: string;
  version: number;
  spec: Docker.ServiceSpec;
}

/** The service named `serviceName`, or undefined; FAILED when it is not the platform's proxy. */
export async function findProxyService(
  docker: Docker,
  serviceName: string,
): Promise<ExistingService | undefined> {
  const info = await inspectService<{ ID: string; Version: { Index: number }; Spec: Docker.ServiceSpec }>(
    docker,
    serviceName,
  );
  if (info === undefined) return undefined;
  const spec = info.Spec;
  if (spec.Labels?.[PROXY_SERVICE_LABEL] !== PROXY_SERVICE_LABEL_VALUE) {
    throw new CommandError(
      "FAILED",
      `a Swarm service named ${serviceName} exists but is not the platform's proxy (no label ${PROXY_SERVICE_LABEL}=${PROXY_SERVICE_LABEL_VALUE}); remove or rename it`,
    );
  }
  return { id: info.ID, version: info.Version.Index, spec };
}

/** This node's Swarm id; FAILED when it cannot run services (not an active Swarm manager). */
export async function swarmManagerNodeId(docker: Docker): Promise<string> {
  const info = await docker.info();
  const swarm = info.Swarm ?? {};
  if (swarm.LocalNodeState !== "active" || !swarm.ControlAvailable || !swarm.NodeID) {
    throw new CommandError(
      "FAILED",
      "this server is not an active Docker Swarm manager, so it cannot run the proxy's service",
    );
  }
  return swarm.NodeID as string;
}

/** FAILED when the platform's overlay network is missing (server.setup creates it). */
export async function requirePlatformNetwork(docker: Docker, name = PLATFORM_NETWORK): Promise<void> {
  try {
    await docker.getNetwork(name).inspect();
  } catch (error) {
    if (engineStatus(error) !== 404) throw error;
    throw new CommandError(
      "FAILED",
      `the network ${name} does not exist on this server: run the server's setup first`,
    );
  }
}

/**
 * The platform's overlay network, created as the installer creates it (overlay, attachable) when
 * the engine has none (PLATFORM_LOCAL_PROXY=false skipped it); an existing one is left as it is.
 * Needs an active Swarm manager, as its services do.
 */
export async function ensurePlatformNetwork(
  docker: Docker,
  name = PLATFORM_NETWORK,
): Promise<{ name: string; created: boolean }> {
  try {
    await docker.getNetwork(name).inspect();
    return { name, created: false };
  } catch (error) {
    if (engineStatus(error) !== 404) throw error;
  }
  await swarmManagerNodeId(docker);
  try {
    await docker.createNetwork({ Name: name, Driver: "overlay", Attachable: true, CheckDuplicate: true });
  } catch (error) {
    // Made meanwhile by another call: the same outcome.
    if (engineStatus(error) === 409) return { name, created: false };
    throw error;
  }
  return { name, created: true };
}
