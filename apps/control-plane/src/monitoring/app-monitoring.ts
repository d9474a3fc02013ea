/**
 * application.readAppMonitoring: the newest sample of the containers of an application's
 * service, summed over its replicas, in the shape the spec gives (cpu, memory, network,
 * containers). The sample comes from the agent's metrics store when monitoring collects the
 * service (only containers carrying the application's organization label), otherwise it is
 * taken now from Docker.
 */
import type {
  AgentClient,
  ContainerMetricsRecord,
  ContainerStats,
  ResourceOwner,
} from "@platform/agent-protocol";
import { z } from "zod";
import { nanoCpus } from "../applications/validation.ts";

export const appMonitoringSchema = z.object({
  cpu: z.object({
    /** Percent of one core used by all replicas together (200 = two cores busy). */
    usage: z.number(),
    /** The application's cpuLimit in the same unit (cores × 100), null when unlimited. */
    limit: z.number().nullable(),
  }),
  memory: z.object({
    /** Bytes in use by all replicas (without the page cache). */
    usage: z.number(),
    /** Sum of the replicas' limits in bytes (the host's memory for an unlimited replica). */
    limit: z.number(),
    percentage: z.number(),
  }),
  network: z.object({ rx: z.number(), tx: z.number() }),
  containers: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      status: z.string(),
      /** Seconds since the container started. */
      uptime: z.number(),
    }),
  ),
});

export type AppMonitoring = z.infer<typeof appMonitoringSchema>;

const round2 = (value: number) => Math.round(value * 100) / 100;

export function summarizeAppMonitoring(
  stats: ContainerStats[],
  cpuLimit: string | null,
  nowUnixMs: number,
): AppMonitoring {
  const sum = (pick: (container: ContainerStats) => number) =>
    stats.reduce((total, container) => total + pick(container), 0);
  const memoryUsage = sum((c) => c.memoryUsageBytes);
  const memoryLimit = sum((c) => c.memoryLimitBytes);
  const cores = cpuLimit ? nanoCpus(cpuLimit) / 1e9 : null;
  return {
    cpu: { usage: round2(sum((c) => c.cpuPercent)), limit: cores === null ? null : round2(cores * 100) },
    memory: {
      usage: memoryUsage,
      limit: memoryLimit,
      percentage: memoryLimit > 0 ? round2((memoryUsage / memoryLimit) * 100) : 0,
    },
    network: { rx: sum((c) => c.networkRxBytes), tx: sum((c) => c.networkTxBytes) },
    containers: stats.map((c) => ({
      id: c.id.slice(0, 12),
      name: c.name,
      status: c.status,
      uptime: c.startedAtUnixMs > 0 ? Math.max(0, Math.floor((nowUnixMs - c.startedAtUnixMs) / 1000)) : 0,
    })),
  };
}

/** The newest stored sample of each container of `appName`, or a live one when none is stored. */
export async function readAppContainerStats(
  client: AgentClient,
  serverId: string,
  appName: string,
  owner: ResourceOwner,
): Promise<ContainerStats[]> {
  const { organizationId } = owner;
  const stored = await client.readContainerMetrics(serverId, { appName, limit: 200, organizationId }, 15_000);
  const records = JSON.parse(stored.recordsJson) as ContainerMetricsRecord[];
  const newest = records.at(-1)?.timestamp;
  if (!stored.monitoringEnabled || !newest) return client.containerStats(serverId, appName, owner, 15_000);
  return records
    .filter((record) => record.timestamp === newest)
    .map((record) => ({
      id: record.containerId,
      name: record.containerName,
      status: "running",
      startedAtUnixMs: Date.parse(record.containerCreated) || 0,
      cpuPercent: record.cpu,
      memoryUsageBytes: record.memory.used,
      memoryLimitBytes: record.memory.total,
      networkRxBytes: record.network.input,
      networkTxBytes: record.network.output,
    }));
}
