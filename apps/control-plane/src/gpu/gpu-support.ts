/**
 * settings.checkGPUStatus and settings.setupGPU: a server's NVIDIA GPU support as its agent finds
 * it (nvidia-smi, nvidia-container-runtime, the engine's runtimes and Swarm resources), answered
 * with Dokploy's field names, and the engine configured for it. The agent writes daemon.json but
 * does not restart the engine (docs/decisions.md): the answer says when a restart is required.
 */
import type { GpuStatus } from "@platform/agent-protocol";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";

/** Dokploy's GPUInfo: the optional fields are left out when unknown (no driver). */
export const gpuStatusSchema = z.object({
  driverInstalled: z.boolean(),
  driverVersion: z.string().optional(),
  gpuModel: z.string().optional(),
  runtimeInstalled: z.boolean(),
  runtimeConfigured: z.boolean(),
  cudaSupport: z.boolean(),
  cudaVersion: z.string().optional(),
  memoryInfo: z.string().optional(),
  availableGPUs: z.number().int(),
  swarmEnabled: z.boolean(),
  gpuResources: z.number().int(),
});

export const gpuSetupSchema = z.object({
  success: z.literal(true),
  /** daemon.json or nvidia-container-runtime's config.toml were written by this call. */
  changed: z.boolean(),
  /** The engine reads daemon.json when it starts: GPU support takes effect after its restart. */
  restartRequired: z.boolean(),
  message: z.string(),
  status: gpuStatusSchema,
});

const known = (value: string) => (value === "" ? undefined : value);

function gpuStatusView(status: GpuStatus): z.infer<typeof gpuStatusSchema> {
  return {
    driverInstalled: status.driverInstalled,
    driverVersion: known(status.driverVersion),
    gpuModel: known(status.gpuModel),
    runtimeInstalled: status.runtimeInstalled,
    runtimeConfigured: status.runtimeConfigured,
    cudaSupport: status.cudaSupport,
    cudaVersion: known(status.cudaVersion),
    memoryInfo: known(status.memoryInfo),
    availableGPUs: status.availableGpus,
    swarmEnabled: status.swarmEnabled,
    gpuResources: status.gpuResources,
  };
}

/** The GPU support of the server `serverId` (an agent's id, already checked to be the caller's). */
export async function checkGpuStatus(ctx: ServiceContext, serverId: string) {
  const status = await callAgent(serverId, () => ctx.agents.client.checkGpu(serverId), ctx.logger);
  return gpuStatusView(status);
}

/**
 * Configures the server's engine for its GPUs; the agent refuses (409, nothing changed) without
 * the driver, without nvidia-container-runtime or off Swarm.
 */
export async function setupGpuSupport(ctx: ServiceContext, serverId: string) {
  // Reading daemon.json and nvidia-smi twice can take longer than the default command timeout.
  const setUp = await callAgent(serverId, () => ctx.agents.client.setupGpu(serverId, 60_000), ctx.logger);
  const status = setUp.status;
  if (!status) throw new Error("the agent answered setupGpu without a status");
  const message = setUp.restartRequired
    ? `GPU support is written to ${setUp.daemonConfigPath}; restart the server's Docker Engine (systemctl restart docker) for the nvidia runtime and the GPU resource to take effect`
    : "GPU support is already configured and in effect";
  return {
    success: true as const,
    changed: setUp.changed,
    restartRequired: setUp.restartRequired,
    message,
    status: gpuStatusView(status),
  };
}
