/**
 * Validate facts read from the Docker Engine: its version, whether this node is an active Swarm
 * member, and whether the overlay network "platform-network" exists. An unreachable engine
 * reads as "no" for each.
 */
import { stat } from "node:fs/promises";
import type { ToolStatus } from "@platform/agent-protocol";
import type Docker from "dockerode";
import { withTimeout } from "../docker/engine.ts";

export const PLATFORM_NETWORK = "platform-network";
const ENGINE_TIMEOUT_MS = 5000;

export async function dockerStatus(docker: Docker): Promise<ToolStatus> {
  try {
    const version = await withTimeout(docker.version(), ENGINE_TIMEOUT_MS, "docker version");
    return { enabled: true, version: version.Version };
  } catch {
    return { enabled: false };
  }
}

/** Swarm LocalNodeState ("inactive", "active", ...), or "" when the engine is unreachable. */
export async function swarmState(docker: Docker): Promise<string> {
  try {
    const info = await withTimeout(docker.info(), ENGINE_TIMEOUT_MS, "docker info");
    return String(info?.Swarm?.LocalNodeState ?? "");
  } catch {
    return "";
  }
}

export async function isSwarmInstalled(docker: Docker): Promise<boolean> {
  return (await swarmState(docker)) === "active";
}

/** Whether the overlay network `name` (default platform-network) exists. */
export async function isPlatformNetworkInstalled(docker: Docker, name = PLATFORM_NETWORK): Promise<boolean> {
  try {
    const networks = await withTimeout(
      docker.listNetworks({ filters: { name: [name] } }),
      ENGINE_TIMEOUT_MS,
      "docker network ls",
    );
    return networks.some((network) => network.Name === name && network.Driver === "overlay");
  } catch {
    return false;
  }
}

export async function isMainDirectoryInstalled(mainDirectory: string): Promise<boolean> {
  try {
    return (await stat(mainDirectory)).isDirectory();
  } catch {
    return false;
  }
}
