/**
 * Swarm views of this engine (swarm.getNodeApps, swarm.getContainerStats): its Swarm services and
 * one stats sample of each running container, each limited to the caller's scope
 * (isInContainerScope: the organization's, the unmanaged ones when the scope includes them, the
 * platform's own never). What is out of scope is neither listed nor sampled.
 */
import type {
  AllContainerStatsCommand,
  AllContainerStatsList,
  ContainerStatsSample,
  ListSwarmServicesCommand,
  SwarmService,
  SwarmServiceList,
} from "@platform/agent-protocol";
import { isInContainerScope } from "@platform/ownership";
import type Docker from "dockerode";
import { cpuPercent, type DockerStats, memoryUsage } from "./stats.ts";
import { requireScope } from "./volumes.ts";

/** Samples taken at once: each waits about a second for the engine's CPU delta. */
const STATS_PARALLELISM = 8;

interface ServiceInfo {
  ID: string;
  Spec?: {
    Name?: string;
    Labels?: Record<string, string>;
    TaskTemplate?: { ContainerSpec?: { Image?: string } };
    Mode?: Record<string, unknown>;
  };
  Endpoint?: { Ports?: { PublishedPort?: number; TargetPort?: number; Protocol?: string }[] };
  ServiceStatus?: { RunningTasks?: number; DesiredTasks?: number };
}

/** The Swarm mode as `docker service ls` names it. */
function modeOf(mode: Record<string, unknown> | undefined): string {
  if (!mode) return "";
  if ("Replicated" in mode) return "replicated";
  if ("Global" in mode) return "global";
  if ("ReplicatedJob" in mode) return "replicated-job";
  if ("GlobalJob" in mode) return "global-job";
  return "";
}

function toSwarmService(info: ServiceInfo): SwarmService {
  const ports = (info.Endpoint?.Ports ?? [])
    .filter((port) => port.PublishedPort)
    .map((port) => `*:${port.PublishedPort}->${port.TargetPort}/${port.Protocol ?? "tcp"}`);
  return {
    id: info.ID,
    name: info.Spec?.Name ?? "",
    image: (info.Spec?.TaskTemplate?.ContainerSpec?.Image ?? "").split("@")[0] ?? "",
    mode: modeOf(info.Spec?.Mode),
    runningTasks: info.ServiceStatus?.RunningTasks ?? 0,
    desiredTasks: info.ServiceStatus?.DesiredTasks ?? 0,
    ports: ports.join(", "),
    labels: info.Spec?.Labels ?? {},
  };
}

export async function listSwarmServices(
  docker: Docker,
  command: ListSwarmServicesCommand,
): Promise<SwarmServiceList> {
  const scope = requireScope(command.scope);
  const infos = (await docker.listServices({ status: true } as object)) as ServiceInfo[];
  const services = infos
    .filter((info) => isInContainerScope(info.Spec?.Labels ?? {}, [info.Spec?.Name ?? ""], scope))
    .map(toSwarmService)
    .sort((a, b) => a.name.localeCompare(b.name));
  return { services };
}

interface BlkioEntry {
  op?: string;
  value?: number;
}

/** Bytes read and written, as `docker stats` sums them (cgroup v1 and v2 name the ops alike). */
function blockIo(
  stats: DockerStats & { blkio_stats?: { io_service_bytes_recursive?: BlkioEntry[] | null } },
) {
  let read = 0;
  let write = 0;
  for (const entry of stats.blkio_stats?.io_service_bytes_recursive ?? []) {
    const op = (entry.op ?? "").toLowerCase();
    if (op === "read") read += entry.value ?? 0;
    else if (op === "write") write += entry.value ?? 0;
  }
  return { read, write };
}

async function sample(docker: Docker, info: Docker.ContainerInfo): Promise<ContainerStatsSample | null> {
  let stats: DockerStats;
  try {
    stats = (await docker.getContainer(info.Id).stats({ stream: false })) as unknown as DockerStats;
  } catch {
    // Gone (or stopped) since it was listed.
    return null;
  }
  const networks = Object.values(stats.networks ?? {});
  const io = blockIo(stats);
  return {
    id: info.Id,
    name: (info.Names[0] ?? "").replace(/^\//, ""),
    cpuPercent: cpuPercent(stats),
    memoryUsageBytes: memoryUsage(stats),
    memoryLimitBytes: stats.memory_stats.limit ?? 0,
    networkRxBytes: networks.reduce((sum, network) => sum + network.rx_bytes, 0),
    networkTxBytes: networks.reduce((sum, network) => sum + network.tx_bytes, 0),
    blockReadBytes: io.read,
    blockWriteBytes: io.write,
    labels: info.Labels ?? {},
  };
}

export async function allContainerStats(
  docker: Docker,
  command: AllContainerStatsCommand,
): Promise<AllContainerStatsList> {
  const scope = requireScope(command.scope);
  const infos = (await docker.listContainers({ filters: { status: ["running"] } })).filter((info) =>
    isInContainerScope(
      info.Labels ?? {},
      info.Names.map((name) => name.replace(/^\//, "")),
      scope,
    ),
  );
  const samples: ContainerStatsSample[] = [];
  for (let start = 0; start < infos.length; start += STATS_PARALLELISM) {
    const batch = await Promise.all(
      infos.slice(start, start + STATS_PARALLELISM).map((info) => sample(docker, info)),
    );
    for (const entry of batch) if (entry) samples.push(entry);
  }
  samples.sort((a, b) => a.name.localeCompare(b.name));
  return { containers: samples };
}
