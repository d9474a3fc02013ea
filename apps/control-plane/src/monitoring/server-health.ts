/**
 * docker.getServerHealth and settings.cleanMonitoring: a server's health from its agent (the
 * engine as it answers now, the metrics store's system samples of the last hours), and the
 * removal of every sample the agent stored.
 */
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";

export const MAX_SINCE_HOURS = 720;
export const DEFAULT_SINCE_HOURS = 24;

const rangeSchema = z.object({ average: z.number(), max: z.number() });

export const serverHealthSchema = z.object({
  /** null: this machine. */
  serverId: z.string().nullable(),
  /** unreachable: the engine did not answer; degraded: a container's health check fails. */
  status: z.enum(["healthy", "degraded", "unreachable"]),
  docker: z.object({
    reachable: z.boolean(),
    version: z.string().nullable(),
    error: z.string().nullable(),
    swarmState: z.string().nullable(),
    containers: z.object({
      running: z.number().int(),
      stopped: z.number().int(),
      unhealthy: z.number().int(),
    }),
  }),
  metrics: z.object({
    /** Whether the agent collects metrics (server.setupMonitoring). */
    monitoring: z.boolean(),
    sinceHours: z.number().int(),
    since: z.string(),
    samples: z.number().int(),
    latestSampleAt: z.string().nullable(),
    /** Percent of all cores / of the memory, over the window's samples; null without samples. */
    cpu: rangeSchema.nullable(),
    memory: rangeSchema.nullable(),
    /** Percent of the disk in the newest sample; null without samples. */
    diskUsed: z.number().nullable(),
  }),
});

export async function serverHealth(
  ctx: ServiceContext,
  serverId: string,
  sinceHours: number,
): Promise<z.infer<typeof serverHealthSchema>> {
  const health = await callAgent(
    serverId,
    () => ctx.agents.client.serverHealth(serverId, { sinceHours }),
    ctx.logger,
  );
  const sampled = health.samples > 0;
  return {
    serverId: serverId === LOCAL_SERVER_ID ? null : serverId,
    status: !health.engineReachable ? "unreachable" : health.containersUnhealthy > 0 ? "degraded" : "healthy",
    docker: {
      reachable: health.engineReachable,
      version: health.engineVersion || null,
      error: health.engineError || null,
      swarmState: health.swarmState || null,
      containers: {
        running: health.containersRunning,
        stopped: health.containersStopped,
        unhealthy: health.containersUnhealthy,
      },
    },
    metrics: {
      monitoring: health.monitoringEnabled,
      sinceHours,
      since: health.since,
      samples: health.samples,
      latestSampleAt: health.latestSampleAt || null,
      cpu: sampled ? { average: health.cpuAverage, max: health.cpuMax } : null,
      memory: sampled ? { average: health.memoryAverage, max: health.memoryMax } : null,
      diskUsed: sampled ? health.diskUsed : null,
    },
  };
}

export const monitoringCleanedSchema = z.object({
  success: z.literal(true),
  filesRemoved: z.number().int(),
  bytesRemoved: z.number().int(),
});

/** Deletes every metrics sample the server's agent stored; collection goes on. */
export async function cleanMonitoring(ctx: ServiceContext, serverId: string) {
  const cleaned = await callAgent(serverId, () => ctx.agents.client.cleanMonitoring(serverId), ctx.logger);
  return { success: true as const, filesRemoved: cleaned.filesRemoved, bytesRemoved: cleaned.bytesRemoved };
}
