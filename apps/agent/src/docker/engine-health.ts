/**
 * The server's own maintenance commands: its health (docker.getServerHealth: the engine as it
 * answers now, beside the metrics store's system samples of the last hours) and the restart or
 * roll of the control plane's Swarm service on this machine (settings.reloadServer,
 * settings.updateServer).
 */
import { hostname } from "node:os";
import type {
  ControlPlaneRestarted,
  RestartControlPlaneCommand,
  ServerHealth,
  ServerHealthCommand,
  SystemMetricsRecord,
} from "@platform/agent-protocol";
import { isImageReference } from "@platform/names";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus } from "./engine.ts";
import { inspectService, retryOutOfSequence, updateService, withForceUpdate } from "./swarm.ts";

export const MAX_HEALTH_HOURS = 720;

const percent = (value: string | undefined) => {
  const number = Number.parseFloat(value ?? "");
  return Number.isFinite(number) ? number : 0;
};

/** The engine now and the system samples of the last `sinceHours` hours. */
export async function serverHealth(
  docker: Docker,
  command: ServerHealthCommand,
  samples: { enabled: boolean; since: (since: Date) => Promise<SystemMetricsRecord[]> },
  now = new Date(),
): Promise<ServerHealth> {
  const hours = command.sinceHours;
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_HEALTH_HOURS) {
    throw new CommandError("INVALID_ARGUMENT", `sinceHours must be 1 to ${MAX_HEALTH_HOURS}`);
  }
  const since = new Date(now.getTime() - hours * 3_600_000);
  const health: ServerHealth = {
    engineReachable: false,
    engineVersion: "",
    containersRunning: 0,
    containersStopped: 0,
    containersUnhealthy: 0,
    swarmState: "",
    monitoringEnabled: samples.enabled,
    samples: 0,
    since: since.toISOString(),
    latestSampleAt: "",
    cpuAverage: 0,
    cpuMax: 0,
    memoryAverage: 0,
    memoryMax: 0,
    diskUsed: 0,
    engineError: "",
  };
  try {
    const [version, info, containers] = await Promise.all([
      docker.version(),
      docker.info() as Promise<{ Swarm?: { LocalNodeState?: string } }>,
      docker.listContainers({ all: true }),
    ]);
    health.engineReachable = true;
    health.engineVersion = version.Version ?? "";
    health.swarmState = info.Swarm?.LocalNodeState ?? "";
    for (const container of containers) {
      if (container.State === "running") {
        health.containersRunning++;
        if (/\(unhealthy\)/.test(container.Status ?? "")) health.containersUnhealthy++;
      } else {
        health.containersStopped++;
      }
    }
  } catch (error) {
    health.engineError = engineMessage(error);
  }
  const records = await samples.since(since);
  if (records.length > 0) {
    const cpu = records.map((record) => percent(record.cpu));
    const memory = records.map((record) => percent(record.memUsed));
    const average = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const newest = records[records.length - 1]!;
    health.samples = records.length;
    health.latestSampleAt = newest.timestamp;
    health.cpuAverage = average(cpu);
    health.cpuMax = Math.max(...cpu);
    health.memoryAverage = average(memory);
    health.memoryMax = Math.max(...memory);
    health.diskUsed = percent(newest.diskUsed);
  }
  return health;
}

/** The Swarm service the container this process runs in belongs to; undefined: none. */
async function ownServiceName(docker: Docker): Promise<string | undefined> {
  try {
    const container = (await docker.getContainer(hostname()).inspect()) as {
      Config?: { Labels?: Record<string, string> };
    };
    return container.Config?.Labels?.["com.docker.swarm.service.name"];
  } catch (error) {
    if (engineStatus(error) === 404) return undefined;
    throw error;
  }
}

/** The image reference with its tag (and digest) replaced by `tag`. */
export function retagged(image: string, tag: string): string {
  const withoutDigest = image.split("@")[0]!;
  const slash = withoutDigest.lastIndexOf("/");
  const colon = withoutDigest.lastIndexOf(":");
  const repository = colon > slash ? withoutDigest.slice(0, colon) : withoutDigest;
  return `${repository}:${tag}`;
}

/**
 * `docker service update --force` of the control plane's service (service_name, else the one
 * this process runs in), on its image's repository with `tag` when one is given. Found false when
 * there is no such service: the control plane does not run as a Swarm service here.
 */
export async function restartControlPlane(
  docker: Docker,
  command: RestartControlPlaneCommand,
): Promise<ControlPlaneRestarted> {
  if (command.tag !== "" && !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(command.tag)) {
    throw new CommandError("INVALID_ARGUMENT", `invalid image tag: ${command.tag}`);
  }
  const name = command.serviceName || (await ownServiceName(docker));
  if (!name) return { found: false, image: "" };
  type Info = {
    ID: string;
    Version: { Index: number };
    Spec: Docker.ServiceSpec & {
      TaskTemplate?: { ContainerSpec?: { Image?: string }; ForceUpdate?: number };
    };
  };
  let image = "";
  const found = await retryOutOfSequence(async () => {
    const info = await inspectService<Info>(docker, name);
    if (!info) return false;
    const spec = withForceUpdate(info.Spec);
    const containerSpec = { ...(spec.TaskTemplate?.ContainerSpec ?? {}) };
    if (command.tag !== "") {
      const current = containerSpec.Image ?? "";
      const next = retagged(current, command.tag);
      if (!isImageReference(next)) throw new CommandError("FAILED", `cannot retag image ${current}`);
      containerSpec.Image = next;
    }
    image = containerSpec.Image ?? "";
    await updateService(docker, info.ID, info.Version.Index, {
      ...spec,
      TaskTemplate: { ...spec.TaskTemplate, ContainerSpec: containerSpec },
    });
    return true;
  });
  return { found, image: found ? image : "" };
}
