/**
 * containerStats: one stats sample (Docker's non-streaming /containers/{id}/stats) of each running
 * container of a Swarm service, reduced to what application monitoring shows.
 */
import type { ContainerStats, ResourceOwner } from "@platform/agent-protocol";
import { assertValidName } from "@platform/names";
import { isCompleteOwner, isOwnedBy } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { SWARM_SERVICE_LABEL } from "./containers.ts";

/** The parts of Docker's stats answer used here (cgroup v1 and v2 both fill these). */
export interface DockerStats {
  cpu_stats: { cpu_usage: { total_usage: number }; system_cpu_usage?: number; online_cpus?: number };
  precpu_stats: { cpu_usage: { total_usage: number }; system_cpu_usage?: number };
  memory_stats: { usage?: number; limit?: number; stats?: Record<string, number> };
  networks?: Record<string, { rx_bytes: number; tx_bytes: number }>;
}

/** Percent of one core, as `docker stats` computes it. */
export function cpuPercent(stats: DockerStats): number {
  const cpuDelta = stats.cpu_stats.cpu_usage.total_usage - stats.precpu_stats.cpu_usage.total_usage;
  const systemDelta = (stats.cpu_stats.system_cpu_usage ?? 0) - (stats.precpu_stats.system_cpu_usage ?? 0);
  if (cpuDelta <= 0 || systemDelta <= 0) return 0;
  const cpus = stats.cpu_stats.online_cpus ?? 1;
  return Math.round((cpuDelta / systemDelta) * cpus * 100 * 100) / 100;
}

/** Memory in use without the page cache, as `docker stats` shows it. */
export function memoryUsage(stats: DockerStats): number {
  const usage = stats.memory_stats.usage ?? 0;
  const cache = stats.memory_stats.stats?.inactive_file ?? stats.memory_stats.stats?.total_inactive_file ?? 0;
  return Math.max(0, usage - cache);
}

/**
 * One sample per running container of the service. Every container must carry the owner's labels:
 * a service of that name run by someone else (or by hand) is refused, not sampled.
 */
export async function containerStats(
  docker: Docker,
  swarmServiceName: string,
  owner: ResourceOwner | undefined,
): Promise<ContainerStats[]> {
  const service = assertValidName(swarmServiceName, "service name");
  if (!isCompleteOwner(owner))
    throw new CommandError("INVALID_ARGUMENT", "owner: organizationId and resource are required");
  const containers = await docker.listContainers({
    filters: { label: [`${SWARM_SERVICE_LABEL}=${service}`], status: ["running"] },
  });
  if (containers.some((info) => !isOwnedBy(info.Labels, owner))) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `the containers of service ${service} do not belong to this ${owner.resource.split(":")[0] || "resource"}`,
    );
  }
  return Promise.all(
    containers.map(async (info) => {
      const container = docker.getContainer(info.Id);
      const [stats, inspect] = await Promise.all([
        container.stats({ stream: false }) as unknown as Promise<DockerStats>,
        container.inspect(),
      ]);
      const networks = Object.values(stats.networks ?? {});
      return {
        id: info.Id,
        name: (info.Names[0] ?? "").replace(/^\//, ""),
        status: info.Status,
        startedAtUnixMs: Date.parse(inspect.State.StartedAt) || 0,
        cpuPercent: cpuPercent(stats),
        memoryUsageBytes: memoryUsage(stats),
        memoryLimitBytes: stats.memory_stats.limit ?? 0,
        networkRxBytes: networks.reduce((sum, network) => sum + network.rx_bytes, 0),
        networkTxBytes: networks.reduce((sum, network) => sum + network.tx_bytes, 0),
      };
    }),
  );
}
