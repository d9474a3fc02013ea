import { rm } from "node:fs/promises";
import path from "node:path";
import {
  DEPLOYMENT_ID_LABEL,
  type DeployServiceCommand,
  type DeployServiceResult,
  type RegistryAuth,
  type ResourceOwner,
  type ServiceAction,
  type ServiceActionCommand,
  type ServiceSpec,
  type SwarmSettings,
} from "@platform/agent-protocol";
import { isExistingAppName, isValidName } from "@platform/names";
import {
  INTERNAL_LABEL,
  isCompleteOwner,
  isLegacyOwnedBy,
  isOwnedBy,
  MANAGED_LABEL,
  ORGANIZATION_LABEL,
  ownershipLabels,
} from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus } from "../docker/engine.ts";
import { endpointMode, ipvsAvailable } from "../docker/ipvs.ts";
import { followProgress } from "../docker/progress.ts";
import { inspectService, updateService, withForceUpdate } from "../docker/swarm.ts";
import { ORPHAN_VXLAN_ERROR, removeOrphanVxlanLinks } from "../docker/vxlan.ts";
import { PLATFORM_NETWORK as PLATFORM_NETWORK_NAME } from "../validate/engine-facts.ts";
import { cancelled, sleep } from "./jobs.ts";
import type { LogStream } from "./log-stream.ts";
import { serviceFilesOf, writeServiceFiles } from "./service-files.ts";
import { isJobMode, modeKind, parseSwarmSettings } from "./swarm-settings.ts";
import {
  checkAppName,
  checkExistingAppName,
  checkImageName,
  hasControlCharacters,
  invalid,
} from "./validate.ts";

const SECOND_NS = 1_000_000_000;
const POLL_MS = 500;
/**
 * How long a task of the new spec may stay unschedulable ("no suitable node (host-mode port
 * already in use on 1 node)") before the deployment fails with that reason: long enough for the
 * old task of a rolling update to free its host port, much shorter than the whole wait.
 */
const UNSCHEDULABLE_GRACE_MS = 15_000;

/** The command's owner, required: without one the agent would not know whose service it touches. */
export function requireOwner(owner: ResourceOwner | undefined): ResourceOwner {
  if (!isCompleteOwner(owner)) throw invalid("owner", "organizationId and resource are required");
  return owner;
}

/**
 * Refuses to act on an existing service whose ownership labels do not name `owner`: a service
 * made by hand, by another organization or by the platform itself is never taken over.
 */
export function checkServiceOwner(
  service: { Spec: { Labels?: Record<string, string> } },
  name: string,
  owner: ResourceOwner,
): void {
  const labels = service.Spec.Labels;
  if (!isOwnedBy(labels, owner) && !isLegacyOwnedBy(labels, owner)) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `service ${name} exists and does not belong to this ${owner.resource.split(":")[0] || "resource"}: choose another appName`,
    );
  }
}

export function checkServiceSpec(spec: ServiceSpec): void {
  checkAppName("spec.name", spec.name);
  parseSwarmSettings(spec.swarmSettingsJson);
  if (!spec.image) throw invalid("spec.image", "is required");
  checkImageName("spec.image", spec.image);
  for (const entry of spec.env ?? []) {
    const key = entry.split("=", 1)[0] ?? "";
    if (!entry.includes("=") || !/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key)) {
      throw invalid(
        "spec.env",
        `entry for ${JSON.stringify(key.slice(0, 50))} must be KEY=VALUE with a valid key`,
      );
    }
  }
  for (const port of spec.ports ?? []) {
    const valid = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535;
    if (!valid(port.targetPort) || (port.publishedPort !== 0 && !valid(port.publishedPort))) {
      throw invalid("spec.ports", "ports must be between 1 and 65535");
    }
    if (port.protocol !== "tcp" && port.protocol !== "udp")
      throw invalid("spec.ports", "protocol must be tcp or udp");
    if (port.publishMode !== "host" && port.publishMode !== "ingress") {
      throw invalid("spec.ports", "publishMode must be host or ingress");
    }
  }
  for (const mount of spec.mounts ?? []) {
    if (mount.type !== "bind" && mount.type !== "volume" && mount.type !== "file")
      throw invalid("spec.mounts", "type must be bind, volume or file");
    if (!mount.target.startsWith("/") || hasControlCharacters(mount.target) || mount.target.includes(",")) {
      throw invalid("spec.mounts", "target must be an absolute container path");
    }
    if (mount.type === "bind" && !mount.source.startsWith("/"))
      throw invalid("spec.mounts", "bind source must be absolute");
  }
  serviceFilesOf(spec);
  for (const network of spec.networks ?? []) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(network))
      throw invalid("spec.networks", `${network} is not a network name`);
  }
}

function hasHostPort(spec: ServiceSpec): boolean {
  return (spec.ports ?? []).some((port) => port.publishMode === "host" && port.publishedPort > 0);
}

function monitorNs(spec: ServiceSpec): number {
  const health = spec.healthCheck;
  if (!health) return 5 * SECOND_NS;
  const interval = health.intervalNs || 30 * SECOND_NS;
  const retries = health.retries || 3;
  // Long enough for the health check to fail `retries` times after the task started.
  return Math.min(120 * SECOND_NS, Math.max(5 * SECOND_NS, interval * retries + (health.timeoutNs || 0)));
}

/**
 * The networks' ids with the service's aliases on each. Besides the platform network, a service
 * joins only a network carrying its organization's ownership labels (one the platform made for
 * that organization): joining another tenant's network would put the service beside its services.
 */
async function networkIds(
  docker: Docker,
  names: string[],
  owner: ResourceOwner,
  platformNetwork: string,
  aliases: Record<string, string[]> = {},
): Promise<{ Target: string; Aliases?: string[] }[]> {
  const targets: { Target: string; Aliases?: string[] }[] = [];
  for (const name of names) {
    let network: { Id: string; Name?: string; Labels?: Record<string, string> | null };
    try {
      network = (await docker.getNetwork(name).inspect()) as typeof network;
    } catch (error) {
      if (engineStatus(error) === 404 && name === platformNetwork) throw missingPlatformNetwork(name);
      if (engineStatus(error) === 404) throw invalid("spec.networks", `network ${name} does not exist`);
      throw error;
    }
    const labels = network.Labels ?? {};
    const organizations =
      network.Name === platformNetwork ||
      (labels[MANAGED_LABEL] === "true" &&
        labels[INTERNAL_LABEL] === undefined &&
        labels[ORGANIZATION_LABEL] === owner.organizationId);
    if (!organizations) {
      throw new CommandError(
        "FAILED_PRECONDITION",
        `network ${name} does not belong to this organization: the service does not join it`,
      );
    }
    targets.push({ Target: network.Id, ...(aliases[name]?.length ? { Aliases: aliases[name] } : {}) });
  }
  return targets;
}

export function swarmSpec(
  spec: ServiceSpec,
  networks: { Target: string }[],
  fileMounts: { Type: string; Source: string; Target: string; ReadOnly: boolean }[],
  forceUpdate: number,
  owner: ResourceOwner,
  ipvs = ipvsAvailable(),
): Record<string, unknown> {
  const order = hasHostPort(spec) ? "stop-first" : "start-first";
  const health = spec.healthCheck;
  const resources: Record<string, Record<string, number>> = { Limits: {}, Reservations: {} };
  if (spec.memoryLimitBytes) (resources.Limits as Record<string, number>).MemoryBytes = spec.memoryLimitBytes;
  if (spec.nanoCpusLimit) (resources.Limits as Record<string, number>).NanoCPUs = spec.nanoCpusLimit;
  if (spec.memoryReservationBytes)
    (resources.Reservations as Record<string, number>).MemoryBytes = spec.memoryReservationBytes;
  if (spec.nanoCpusReservation)
    (resources.Reservations as Record<string, number>).NanoCPUs = spec.nanoCpusReservation;
  const restart = spec.restartPolicy;
  const user = parseSwarmSettings(spec.swarmSettingsJson);
  const mode = endpointMode(user.EndpointMode, spec.ports ?? [], ipvs);
  const job = isJobMode(modeKind(user));
  return {
    Name: spec.name,
    Labels: { ...(spec.labels ?? {}), ...ownershipLabels(owner) },
    TaskTemplate: {
      ContainerSpec: {
        Image: spec.image,
        Env: spec.env ?? [],
        ...(spec.command?.length ? { Command: spec.command } : {}),
        ...(spec.args?.length ? { Args: spec.args } : {}),
        Labels: {
          ...ownershipLabels(owner),
          "platform.service": spec.name,
          // Tasks name their deployment: observeServices tells whose update rolled back.
          ...(spec.labels?.[DEPLOYMENT_ID_LABEL]
            ? { [DEPLOYMENT_ID_LABEL]: spec.labels[DEPLOYMENT_ID_LABEL] }
            : {}),
        },
        ...(health?.test.length
          ? {
              HealthCheck: {
                Test: health.test,
                Interval: health.intervalNs || undefined,
                Timeout: health.timeoutNs || undefined,
                StartPeriod: health.startPeriodNs || undefined,
                Retries: health.retries || undefined,
              },
            }
          : {}),
        ...(user.StopGracePeriod !== undefined ? { StopGracePeriod: user.StopGracePeriod } : {}),
        ...(user.Ulimits ? { Ulimits: user.Ulimits } : {}),
        Mounts: [
          ...(spec.mounts ?? [])
            .filter((mount) => mount.type !== "file")
            .map((mount) => ({
              Type: mount.type,
              Source: mount.source,
              Target: mount.target,
              ReadOnly: Boolean(mount.readOnly),
              // A named volume Swarm creates for the service is labelled like the service.
              ...(mount.type === "volume" ? { VolumeOptions: { Labels: ownershipLabels(owner) } } : {}),
            })),
          ...fileMounts,
        ],
      },
      Resources: resources,
      RestartPolicy: restart
        ? {
            Condition: restart.condition,
            Delay: restart.delayNs || undefined,
            MaxAttempts: restart.maxAttempts || undefined,
            Window: restart.windowNs || undefined,
          }
        : // A job's task that finished is done: Swarm refuses "any" for jobs.
          { Condition: job ? "on-failure" : "any", Delay: 5 * SECOND_NS },
      Networks: networks,
      ForceUpdate: forceUpdate,
      ...(user.Placement ? { Placement: user.Placement } : {}),
    },
    Mode: user.Mode ?? { Replicated: { Replicas: spec.replicas } },
    // Jobs have no rolling update: each deploy runs them again.
    ...(job ? {} : rollingConfigs(spec, user, order)),
    EndpointSpec: {
      ...(mode ? { Mode: mode } : {}),
      Ports: (spec.ports ?? []).map((port) => ({
        Protocol: port.protocol,
        TargetPort: port.targetPort,
        ...(port.publishedPort ? { PublishedPort: port.publishedPort } : {}),
        PublishMode: port.publishMode,
      })),
    },
  };
}

/**
 * The update and rollback configurations of a service that is not a job: the user's settings go
 * over the platform's defaults; two tasks cannot bind one host port, so a host-mode port keeps
 * stop-first whatever the user asked.
 */
function rollingConfigs(spec: ServiceSpec, user: SwarmSettings, order: "stop-first" | "start-first") {
  return {
    UpdateConfig: {
      Parallelism: 1,
      Delay: 0,
      FailureAction: "rollback",
      Monitor: monitorNs(spec),
      MaxFailureRatio: 0,
      ...user.UpdateConfig,
      Order: order === "stop-first" ? order : (user.UpdateConfig?.Order ?? order),
    },
    RollbackConfig: {
      Parallelism: 1,
      Delay: 0,
      FailureAction: "pause",
      Monitor: monitorNs(spec),
      MaxFailureRatio: 0,
      ...user.RollbackConfig,
      Order: order === "stop-first" ? order : (user.RollbackConfig?.Order ?? order),
    },
  };
}

/** The engine's X-Registry-Auth for `auth`; undefined without a server address. */
export function authConfig(auth: RegistryAuth | undefined) {
  if (!auth?.serverAddress) return undefined;
  return { username: auth.username, password: auth.password, serveraddress: auth.serverAddress };
}

async function pullImage(
  docker: Docker,
  image: string,
  auth: RegistryAuth,
  log: LogStream,
  signal: AbortSignal,
) {
  log.line(`pulling ${image} from ${auth.serverAddress}`);
  try {
    const stream = await docker.pull(image, { authconfig: authConfig(auth), abortSignal: signal } as object);
    await followProgress(docker, stream);
  } catch (error) {
    if (signal.aborted) throw cancelled();
    throw new CommandError("FAILED", `pulling ${image} failed: ${log.mask(engineMessage(error))}`);
  }
  log.line(`pulled ${image}`);
}

interface SwarmTask {
  ID: string;
  Slot?: number;
  CreatedAt?: string;
  DesiredState?: string;
  Spec?: { ForceUpdate?: number; ContainerSpec?: { Image?: string } };
  Status?: { State?: string; Message?: string; Err?: string; Timestamp?: string };
}

interface SwarmService {
  ID: string;
  Version: { Index: number };
  Spec: Record<string, unknown> & {
    Labels?: Record<string, string>;
    TaskTemplate?: { ForceUpdate?: number };
    Mode?: { Replicated?: { Replicas?: number } };
  };
  UpdateStatus?: { State?: string; StartedAt?: string; CompletedAt?: string; Message?: string };
}

export function findService(docker: Docker, name: string): Promise<SwarmService | undefined> {
  return inspectService<SwarmService>(docker, name);
}

/**
 * The platform's overlay network is made by the installer or the server's setup, not by a deploy
 * (PLATFORM_LOCAL_PROXY=false skips none of it, but a machine set up by hand may lack it): the
 * deploy is refused with the command that fixes it.
 */
function missingPlatformNetwork(name: string): CommandError {
  return new CommandError(
    "FAILED",
    `the network ${name} does not exist on this server: create it with \`docker network create --driver overlay --attachable ${name}\` (deploy/install.sh and the server's setup do), then deploy again`,
  );
}

export async function deployService(
  docker: Docker,
  mainDirectory: string,
  command: DeployServiceCommand & { spec: ServiceSpec },
  log: LogStream,
  signal: AbortSignal,
  /** The network Traefik serves from: `platform-network`, or the one the agent was configured with. */
  platformNetwork = PLATFORM_NETWORK_NAME,
): Promise<DeployServiceResult> {
  const { spec } = command;
  checkServiceSpec(spec);
  const owner = requireOwner(command.owner);
  const waitMs = (command.waitSeconds || 120) * 1000;

  let existing = await findService(docker, spec.name);
  if (existing) checkServiceOwner(existing, spec.name, owner);
  const mode = modeKind(parseSwarmSettings(spec.swarmSettingsJson));
  const runningMode = existing
    ? (Object.keys(existing.Spec.Mode ?? { Replicated: {} })[0] ?? "Replicated")
    : mode;
  if (existing && runningMode !== mode) {
    // Swarm cannot change a service's mode in place: the service is made again (volumes stay).
    log.line(
      `the mode changes from ${runningMode} to ${mode}: removing service ${spec.name} to create it again`,
    );
    await docker.getService(existing.ID).remove();
    existing = undefined;
  }
  await checkVolumeOwners(docker, spec, owner);
  const running = (
    existing?.Spec.TaskTemplate as { ContainerSpec?: { Mounts?: { Source?: string }[] } } | undefined
  )?.ContainerSpec?.Mounts;
  const fileMounts = await writeServiceFiles(
    mainDirectory,
    spec.name,
    owner,
    serviceFilesOf(spec),
    (running ?? []).map((mount) => mount.Source ?? ""),
    (containerPath) => log.line(`wrote ${containerPath} (mounted read-only)`),
  );

  if (command.registryAuth?.serverAddress)
    await pullImage(docker, spec.image, command.registryAuth, log, signal);
  const networks = await networkIds(
    docker,
    spec.networks ?? [],
    owner,
    platformNetwork,
    parseSwarmSettings(spec.swarmSettingsJson).NetworkAliases,
  );
  const auth = authConfig(command.registryAuth);
  // Creates or updates the service, then waits until its tasks of the new spec run.
  const applyAndConverge = async (current: typeof existing) => {
    let serviceId: string;
    // Tasks of the new spec carry this counter (a rollback restores the previous one).
    let forceUpdate = 0;
    const startedAt = Date.now();
    try {
      if (current) {
        forceUpdate = (current.Spec.TaskTemplate?.ForceUpdate ?? 0) + 1;
        const body = swarmSpec(spec, networks, fileMounts, forceUpdate, owner);
        log.line(
          `updating service ${spec.name} to ${spec.image} (${hasHostPort(spec) ? "stop-first" : "start-first"})`,
        );
        await updateService(docker, current.ID, current.Version.Index, body, auth);
        serviceId = current.ID;
      } else {
        log.line(`creating service ${spec.name} with ${spec.image}`);
        const created = await docker.createService({
          ...swarmSpec(spec, networks, fileMounts, 0, owner),
          ...(auth ? { authconfig: auth } : {}),
        } as never);
        serviceId = created.id as string;
      }
    } catch (error) {
      if (error instanceof CommandError) throw error;
      throw new CommandError("FAILED", `the engine refused the service: ${log.mask(engineMessage(error))}`);
    }
    const runningTasks = await waitForConvergence(
      docker,
      serviceId,
      spec,
      forceUpdate,
      !current,
      startedAt,
      waitMs,
      log,
      signal,
    );
    return { serviceId, runningTasks };
  };

  let outcome: { serviceId: string; runningTasks: number };
  try {
    outcome = await applyAndConverge(existing);
  } catch (error) {
    if (!(error instanceof CommandError) || !ORPHAN_VXLAN_ERROR.test(error.message)) throw error;
    // The periodic sweep (or another agent's, on a shared host) may have removed it meanwhile:
    // deploying again is right either way.
    const removed = await removeOrphanVxlanLinks();
    log.line(
      removed.length > 0
        ? `the engine had left the VXLAN link(s) ${removed.join(", ")} behind in the host's network namespace (a Docker bug, moby/libnetwork#1765): removed them, deploying again`
        : "the engine had left a VXLAN link behind in the host's network namespace (a Docker bug, moby/libnetwork#1765), removed meanwhile: deploying again",
    );
    outcome = await applyAndConverge(await findService(docker, spec.name));
  }
  log.line(`service ${spec.name} runs ${outcome.runningTasks} task(s) of the new version`);
  return { serviceId: outcome.serviceId, created: !existing, runningTasks: outcome.runningTasks };
}

/** Labels of a named volume; undefined when there is none of that name. */
async function volumeLabels(docker: Docker, name: string): Promise<Record<string, string> | undefined> {
  try {
    const volume = (await docker.getVolume(name).inspect()) as { Labels?: Record<string, string> | null };
    return volume.Labels ?? {};
  } catch (error) {
    if (engineStatus(error) === 404) return undefined;
    throw error;
  }
}

/**
 * Refuses to mount a named volume that exists and is not the owner's: Swarm would mount another
 * tenant's (or a hand-made) volume of that name as it is. A missing one is created by Swarm
 * with the owner's labels (swarmSpec's VolumeOptions).
 */
async function checkVolumeOwners(docker: Docker, spec: ServiceSpec, owner: ResourceOwner): Promise<void> {
  for (const mount of spec.mounts ?? []) {
    if (mount.type !== "volume") continue;
    if (!isValidName(mount.source)) throw invalid("spec.mounts", `${mount.source} is not a volume name`);
    const labels = await volumeLabels(docker, mount.source);
    if (labels !== undefined && !isOwnedBy(labels, owner)) {
      throw new CommandError(
        "FAILED_PRECONDITION",
        `volume ${mount.source} exists and does not belong to this ${owner.resource.split(":")[0] || "resource"}: it is not mounted`,
      );
    }
  }
}

/** How long a removal waits for the service's containers to go before deleting its volumes. */
const CONTAINERS_GONE_WAIT_MS = 60_000;

/**
 * Deletes the named volumes carrying the owner's labels, once no container of the service is
 * left (a volume in use cannot be deleted). Missing ones are fine; others are kept.
 */
async function removeOwnedVolumes(
  docker: Docker,
  serviceName: string,
  volumes: readonly string[],
  owner: ResourceOwner,
): Promise<{ volumesRemoved: string[]; volumesKept: string[] }> {
  const volumesRemoved: string[] = [];
  const volumesKept: string[] = [];
  if (volumes.length === 0) return { volumesRemoved, volumesKept };
  const deadline = Date.now() + CONTAINERS_GONE_WAIT_MS;
  for (;;) {
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`com.docker.swarm.service.name=${serviceName}`] },
    });
    if (left.length === 0) break;
    if (Date.now() > deadline) {
      throw new CommandError(
        "FAILED",
        `the containers of service ${serviceName} did not go within ${CONTAINERS_GONE_WAIT_MS / 1000} s: its volumes are kept`,
      );
    }
    await sleep(POLL_MS, new AbortController().signal);
  }
  for (const name of volumes) {
    if (!isValidName(name)) throw invalid("removeVolumes", `${name} is not a volume name`);
    const labels = await volumeLabels(docker, name);
    if (labels === undefined) continue;
    if (!isOwnedBy(labels, owner)) {
      volumesKept.push(name);
      continue;
    }
    // A stopped container of the service may hold it a moment longer: try again briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await docker.getVolume(name).remove();
        volumesRemoved.push(name);
        break;
      } catch (error) {
        if (engineStatus(error) === 404) break;
        if (engineStatus(error) !== 409 || attempt >= 20) {
          throw new CommandError("FAILED", `removing volume ${name} failed: ${engineMessage(error)}`);
        }
        await sleep(POLL_MS, new AbortController().signal);
      }
    }
  }
  return { volumesRemoved, volumesKept };
}

function describeTask(task: SwarmTask): string {
  const status = task.Status ?? {};
  const detail = status.Err || status.Message || "";
  return `task ${task.Slot ?? "?"} (${task.ID.slice(0, 12)}): ${status.State}${detail ? ` - ${detail}` : ""}`;
}

async function waitForConvergence(
  docker: Docker,
  serviceId: string,
  spec: ServiceSpec,
  forceUpdate: number,
  created: boolean,
  startedAt: number,
  waitMs: number,
  log: LogStream,
  signal: AbortSignal,
): Promise<number> {
  const seen = new Map<string, string>();
  const unschedulableSince = new Map<string, number>();
  let failure: string | undefined;
  let rollbackLogged = false;
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (signal.aborted) throw cancelled();
    const service = (await docker.getService(serviceId).inspect()) as SwarmService;
    const tasks = (await docker.listTasks({ filters: { service: [serviceId] } })) as SwarmTask[];
    for (const task of tasks) {
      const key = `${task.Status?.State}|${task.Status?.Err ?? ""}`;
      if (seen.get(task.ID) !== key) {
        seen.set(task.ID, key);
        log.line(describeTask(task));
      }
    }
    // Tasks of the new spec: same ForceUpdate counter and image.
    const current = tasks.filter(
      (task) =>
        (task.Spec?.ForceUpdate ?? 0) === forceUpdate && task.Spec?.ContainerSpec?.Image === spec.image,
    );
    const running = current.filter(
      (task) => task.DesiredState === "running" && task.Status?.State === "running",
    );
    const failed = current.find((task) => ["failed", "rejected"].includes(task.Status?.State ?? ""));
    const stuck = unschedulable(current, unschedulableSince);
    if (stuck) {
      throw new CommandError(
        "FAILED",
        `Swarm cannot place the service's task ${stuck.Slot ?? ""}: ${stuck.Status?.Err}${hostPortHint(stuck)}`,
      );
    }
    const mode = modeKind(parseSwarmSettings(spec.swarmSettingsJson));
    if (mode !== "Replicated") {
      // A global service is up once a task runs (one per eligible node); a job once its tasks ran.
      const done = current.filter(
        (task) => task.Status?.State === "running" || task.Status?.State === "complete",
      );
      if (done.length > 0 && (!isJobMode(mode) || !failed)) return done.length;
      if (failed) throw new CommandError("FAILED", `the service's task failed: ${failureReason(failed)}`);
    } else if (created) {
      if (running.length >= spec.replicas) return running.length;
      if (failed) throw new CommandError("FAILED", `the service's task failed: ${failureReason(failed)}`);
    } else {
      const update = service.UpdateStatus;
      const fresh = update?.StartedAt ? Date.parse(update.StartedAt) >= startedAt - 2000 : false;
      const state = fresh ? update?.State : undefined;
      if (failed) failure ??= failureReason(failed);
      if (state === "rollback_started" && !rollbackLogged) {
        rollbackLogged = true;
        log.line(`update failed, rolling back: ${update?.Message ?? ""}`);
      }
      // Answer once the rollback is over, so that the previous version serves again.
      if (state === "rollback_completed" || state === "rollback_paused" || state === "paused") {
        log.line(`update ${state.replace("_", " ")}: ${update?.Message ?? ""}`);
        const reason = failure ?? update?.Message ?? "the update failed";
        const previous =
          state === "rollback_completed"
            ? "the previous one was restored"
            : `the rollback did not complete (${update?.Message ?? state})`;
        throw new CommandError("FAILED", `the new version did not start, ${previous}: ${reason}`);
      }
      if (state === "completed" && running.length >= spec.replicas) return running.length;
      // An update Swarm had nothing to roll (a service scaled to 0 before) may get no fresh
      // UpdateStatus: then it is done once only tasks of the new spec are meant to run.
      const oldOnes = tasks.filter((task) => task.DesiredState === "running" && !current.includes(task));
      const quiet = !state && Date.now() - startedAt > 5000;
      if (quiet && oldOnes.length === 0 && running.length >= spec.replicas) return running.length;
    }
    if (Date.now() > deadline) {
      const reason = failure ? `: ${failure}` : failed ? `: ${failureReason(failed)}` : "";
      throw new CommandError(
        "FAILED",
        `the service did not run the new version within ${waitMs / 1000} s${reason}`,
      );
    }
    await sleep(POLL_MS, signal);
  }
}

/**
 * A task of the new spec the scheduler has refused to place (pending with "no suitable node …",
 * such as two replicas publishing one host-mode port on one node) for UNSCHEDULABLE_GRACE_MS:
 * waiting longer would not place it. `since` keeps when each task was first seen so.
 */
function unschedulable(current: SwarmTask[], since: Map<string, number>): SwarmTask | undefined {
  const now = Date.now();
  for (const task of current) {
    const refused =
      task.DesiredState === "running" &&
      task.Status?.State === "pending" &&
      /no suitable node/i.test(task.Status?.Err ?? "");
    if (!refused) {
      since.delete(task.ID);
      continue;
    }
    const first = since.get(task.ID) ?? now;
    since.set(task.ID, first);
    if (now - first >= UNSCHEDULABLE_GRACE_MS) return task;
  }
  return undefined;
}

/** What to change when the refusal is a host-mode port: each node publishes it once. */
function hostPortHint(task: SwarmTask): string {
  return /host-mode port/i.test(task.Status?.Err ?? "")
    ? " (a host-mode port is published once per node: use at most as many replicas as nodes, or publish the port in ingress mode)"
    : "";
}

function failureReason(task: SwarmTask): string {
  // Whole: the engine puts the cause last ("... port is already allocated"); the control plane
  // shortens errorMessage between words (deployments/error-message.ts), the log keeps all.
  return task.Status?.Err || task.Status?.Message || task.Status?.State || "unknown error";
}

const SERVICE_ACTIONS: ReadonlySet<string> = new Set<ServiceAction>(["START", "STOP", "RELOAD", "REMOVE"]);

export interface ServiceActionOutcome {
  found: boolean;
  volumesRemoved?: string[];
  volumesKept?: string[];
}

export async function serviceAction(
  docker: Docker,
  mainDirectory: string,
  name: string,
  action: ServiceActionCommand["action"],
  replicas: number | undefined,
  commandOwner: ResourceOwner | undefined,
  removeVolumes: readonly string[] = [],
): Promise<ServiceActionOutcome> {
  // An action left out (ACTION_UNSPECIFIED) or unknown to this agent would otherwise be taken
  // for a reload below.
  if (!SERVICE_ACTIONS.has(action)) throw invalid("action", "must be START, STOP, RELOAD or REMOVE");
  // A name valid under the older appName rule may name a service deployed then: it is acted on
  // (and torn down) like any other, under the same ownership check. One valid under neither was
  // never deployed: nothing to remove (and never a path).
  if (action === "REMOVE" && !isExistingAppName(name)) return { found: false };
  checkExistingAppName("serviceName", name);
  const owner = requireOwner(commandOwner);
  if (action !== "REMOVE" && removeVolumes.length > 0)
    throw invalid("removeVolumes", "only a REMOVE deletes volumes");
  const service = await findService(docker, name);
  if (service) checkServiceOwner(service, name, owner);
  if (!service) {
    if (action !== "REMOVE") return { found: false };
    await rm(path.join(mainDirectory, "applications", name), { recursive: true, force: true });
    return { found: false, ...(await removeOwnedVolumes(docker, name, removeVolumes, owner)) };
  }
  const handle = docker.getService(service.ID);
  try {
    if (action === "REMOVE") {
      await handle.remove();
      await rm(path.join(mainDirectory, "applications", name), { recursive: true, force: true });
      return { found: true, ...(await removeOwnedVolumes(docker, name, removeVolumes, owner)) };
    }
    let spec = structuredClone(service.Spec) as SwarmService["Spec"];
    if (action === "START" || action === "STOP") {
      if (spec.Mode && !spec.Mode.Replicated) {
        throw new CommandError(
          "FAILED_PRECONDITION",
          `service ${name} runs in ${Object.keys(spec.Mode)[0]} mode: only a replicated service can be stopped or started (deploy or delete it instead)`,
        );
      }
      spec.Mode = { Replicated: { Replicas: action === "STOP" ? 0 : (replicas ?? 1) || 1 } };
    } else {
      spec = withForceUpdate(spec);
    }
    await updateService(docker, service.ID, service.Version.Index, spec);
    return { found: true };
  } catch (error) {
    if (error instanceof CommandError) throw error;
    if (engineStatus(error) === 404) return { found: false };
    throw new CommandError(
      "FAILED",
      `${action.toLowerCase()} of service ${name} failed: ${engineMessage(error)}`,
    );
  }
}
