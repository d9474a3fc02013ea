/** server.validate: the engine facts and the tool probes, gathered in parallel. */
import type { ValidateServerResult } from "@platform/agent-protocol";
import type Docker from "dockerode";
import {
  dockerStatus,
  isMainDirectoryInstalled,
  isPlatformNetworkInstalled,
  isSwarmInstalled,
} from "./engine-facts.ts";
import { composeStatus, type ToolProbeOptions, toolStatus } from "./tools.ts";

export interface ValidateOptions extends ToolProbeOptions {
  mainDirectory: string;
  /** The overlay network of the applications and the proxy (default platform-network). */
  platformNetwork?: string;
}

export async function validateServer(
  docker: Docker,
  options: ValidateOptions,
): Promise<ValidateServerResult> {
  const [engine, rclone, nixpacks, buildpacks, railpack, network, swarm, mainDirectory, buildx, compose] =
    await Promise.all([
      dockerStatus(docker),
      toolStatus("rclone", options),
      toolStatus("nixpacks", options),
      toolStatus("pack", options),
      toolStatus("railpack", options),
      isPlatformNetworkInstalled(docker, options.platformNetwork),
      isSwarmInstalled(docker),
      isMainDirectoryInstalled(options.mainDirectory),
      toolStatus("docker", options, ["buildx", "version"]),
      composeStatus(options),
    ]);
  return {
    docker: engine,
    rclone,
    nixpacks,
    buildpacks,
    railpack,
    isPlatformNetworkInstalled: network,
    isSwarmInstalled: swarm,
    isMainDirectoryInstalled: mainDirectory,
    buildx,
    compose,
  };
}
