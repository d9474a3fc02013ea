/**
 * One container sample (spec 2.13 container record plus CPU, memory, network and block I/O)
 * of every running container whose service is monitored: `include` (when not empty) names the
 * only services collected, `exclude` removes services. A container's service is its Swarm
 * service (appName), else its compose project, else its own name. Docker's stats are read in
 * one-shot mode, 16 containers at a time.
 */
import type { ContainerMetricsRecord, MetricsConfig } from "@platform/agent-protocol";
import { ORGANIZATION_LABEL } from "@platform/ownership";
import type Docker from "dockerode";
import { COMPOSE_PROJECT_LABEL, SWARM_SERVICE_LABEL } from "../docker/containers.ts";
import { cpuPercent, type DockerStats, memoryUsage } from "../docker/stats.ts";

const STATS_CONCURRENCY = 16;

type ServiceFilter = NonNullable<MetricsConfig["containers"]["services"]>;

/** Whether `appName` is collected under the include/exclude lists. */
export function isServiceMonitored(appName: string, services: ServiceFilter | undefined): boolean {
  const include = services?.include ?? [];
  if (include.length > 0 && !include.includes(appName)) return false;
  return !(services?.exclude ?? []).includes(appName);
}

/** The service a container belongs to, as the metrics endpoints name it (`appName`). */
export function serviceNameOf(container: Docker.ContainerInfo): string {
  const labels = container.Labels ?? {};
  return (
    labels[SWARM_SERVICE_LABEL] ??
    labels[COMPOSE_PROJECT_LABEL] ??
    (container.Names[0] ?? container.Id).replace(/^\//, "")
  );
}

/** Running containers of the monitored services. */
export async function monitoredContainers(
  docker: Docker,
  services: ServiceFilter | undefined,
): Promise<Docker.ContainerInfo[]> {
  const running = await docker.listContainers({ filters: { status: ["running"] } });
  return running.filter((container) => isServiceMonitored(serviceNameOf(container), services));
}

interface BlockIoEntry {
  op: string;
  value: number;
}

function blockIo(
  stats: DockerStats & { blkio_stats?: { io_service_bytes_recursive?: BlockIoEntry[] | null } },
) {
  const entries = stats.blkio_stats?.io_service_bytes_recursive ?? [];
  const total = (op: string) =>
    entries.filter((entry) => entry.op.toLowerCase() === op).reduce((sum, entry) => sum + entry.value, 0);
  return { read: total("read"), write: total("write") };
}

/**
 * Samples the monitored containers. Docker's stats are asked for in one-shot mode (no wait for a
 * second reading inside the engine), so the CPU use is computed against this sampler's previous
 * reading of the same container (0 on its first sample).
 */
export class ContainerSampler {
  private previous = new Map<string, DockerStats["cpu_stats"]>();

  constructor(private readonly docker: Docker) {}

  /** One sample of each monitored running container, all stamped with `now`. */
  async sample(services: ServiceFilter | undefined, now = new Date()): Promise<ContainerMetricsRecord[]> {
    const containers = await monitoredContainers(this.docker, services);
    const records: ContainerMetricsRecord[] = [];
    const seen = new Map<string, DockerStats["cpu_stats"]>();
    for (let start = 0; start < containers.length; start += STATS_CONCURRENCY) {
      const batch = containers.slice(start, start + STATS_CONCURRENCY);
      const sampled = await Promise.all(batch.map((info) => this.sampleOne(info, now, seen)));
      for (const record of sampled) if (record) records.push(record);
    }
    this.previous = seen; // containers gone since the last round are forgotten
    return records;
  }

  private async sampleOne(
    info: Docker.ContainerInfo,
    now: Date,
    seen: Map<string, DockerStats["cpu_stats"]>,
  ): Promise<ContainerMetricsRecord | null> {
    let stats: DockerStats;
    try {
      stats = (await this.docker
        .getContainer(info.Id)
        .stats({ stream: false, "one-shot": true } as { stream: false })) as unknown as DockerStats;
    } catch {
      return null; // the container stopped between the listing and its stats
    }
    seen.set(info.Id, stats.cpu_stats);
    const previous = this.previous.get(info.Id);
    const withPrevious: DockerStats = previous ? { ...stats, precpu_stats: previous } : stats;
    return toRecord(info, withPrevious, now);
  }
}

function toRecord(info: Docker.ContainerInfo, stats: DockerStats, now: Date): ContainerMetricsRecord {
  const networks = Object.values(stats.networks ?? {});
  const used = memoryUsage(stats);
  const total = stats.memory_stats.limit ?? 0;
  const io = blockIo(stats);
  return {
    containerId: info.Id,
    containerName: (info.Names[0] ?? "").replace(/^\//, ""),
    containerImage: info.Image,
    containerLabels: JSON.stringify(info.Labels ?? {}),
    containerCommand: info.Command,
    containerCreated: new Date(info.Created * 1000).toISOString(),
    appName: serviceNameOf(info),
    organizationId: info.Labels?.[ORGANIZATION_LABEL] ?? "",
    timestamp: now.toISOString(),
    cpu: cpuPercent(stats),
    memory: {
      used,
      total,
      percentage: total > 0 ? Math.round((used / total) * 10_000) / 100 : 0,
      unit: "bytes",
    },
    network: {
      input: networks.reduce((sum, network) => sum + network.rx_bytes, 0),
      output: networks.reduce((sum, network) => sum + network.tx_bytes, 0),
      unit: "bytes",
    },
    blockIO: { ...io, unit: "bytes" },
  };
}
