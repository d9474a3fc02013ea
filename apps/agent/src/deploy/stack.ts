/**
 * Compose stacks on this server. A stack is deployed from its converted file (the control
 * plane's getConvertedCompose, every service, network and volume labelled with its owner) with
 * the real tools: `docker stack deploy --prune --with-registry-auth` for `stack`, Compose for
 * `docker-compose` (`docker compose` where the CLI has it, else the `docker-compose` command).
 * Its services are found by the labels those tools put on them (com.docker.stack.namespace,
 * com.docker.compose.project), and every action touches only those that carry the owner's
 * labels: a same-named object of someone else is reported, never changed.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  composeUpArgs,
  type DeployStackCommand,
  type DeployStackResult,
  type KeepStackRollbackImagesCommand,
  type RegistryAuth,
  type ResourceOwner,
  ROLLBACK_IMAGE_REPOSITORY_PREFIX,
  STACK_FILE_NAME,
  type StackAction,
  type StackActionCommand,
  type StackActionResult,
  type StackRollbackImage,
  type StackRollbackImagesKept,
  type StackService,
  stackDeployArgs,
} from "@platform/agent-protocol";
import { isOwnedBy } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus } from "../docker/engine.ts";
import { type ComposeCommand, findComposeCommand } from "../validate/tools.ts";
import type { DockerCli } from "./build.ts";
import { cloneRepository } from "./git.ts";
import { sleep, throwIfCancelled } from "./jobs.ts";
import type { LogStream } from "./log-stream.ts";
import { applySourcePatches } from "./patches.ts";
import { processFailure, runOrFail, runProcess } from "./process.ts";
import { imageIdOf, tagRollbackImage } from "./rollback-images.ts";
import { requireOwner } from "./service.ts";
import { writeFilesVersion } from "./service-files.ts";
import { checkAppName, checkRelativePath, invalid, resolveInside } from "./validate.ts";

const STACK_LABEL = "com.docker.stack.namespace";
const COMPOSE_PROJECT_LABEL = "com.docker.compose.project";
/** The replicas a stopped stack service had (STOP stores them, START puts them back). */
const STOPPED_REPLICAS_LABEL = "platform.stoppedReplicas";
const DEFAULT_WAIT_SECONDS = 300;
const COMPOSE_UP_ATTEMPTS = 3;

/**
 * Whether `compose up` failed on Docker's race on attachable swarm networks: a container that
 * joins one (the platform network) as the node's last other container on it leaves is refused
 * with "network <swarm id> not found" although the network exists (moby/moby#25503). Running
 * `up` again attaches it; anything else is a real failure.
 */
export function lostOverlayAttachment(tail: readonly string[]): boolean {
  return tail.some((line) => /\bnetwork [a-z0-9]{25} not found\b/.test(line));
}
const POLL_MS = 1000;
/** How long REMOVE waits for the stack's tasks to exit before giving up on its volumes. */
const REMOVE_WAIT_MS = 120_000;

/** The directory of a stack's files on the server (versions of its converted file and file mounts). */
export function stackDirectory(mainDirectory: string, appName: string): string {
  return path.join(mainDirectory, "compose", appName);
}

function checkComposeType(value: string): "stack" | "docker-compose" {
  if (value !== "stack" && value !== "docker-compose")
    throw invalid("composeType", "must be `stack` or `docker-compose`");
  return value;
}

type SwarmService = {
  ID: string;
  Version: { Index: number };
  Spec: {
    Name: string;
    Labels?: Record<string, string>;
    Mode?: { Replicated?: { Replicas?: number }; Global?: object };
  } & Record<string, unknown>;
};

type Task = {
  ServiceID: string;
  DesiredState: string;
  Status?: { State?: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
};

async function stackServices(docker: Docker, appName: string): Promise<SwarmService[]> {
  return (await docker.listServices({
    filters: { label: [`${STACK_LABEL}=${appName}`] },
  })) as unknown as SwarmService[];
}

/** The stack's services split into the owner's and the names of others' (never touched). */
function splitOwned<T extends { labels: Record<string, string> | undefined; name: string }>(
  objects: T[],
  owner: ResourceOwner,
) {
  const owned = objects.filter((object) => isOwnedBy(object.labels, owner));
  const kept = objects.filter((object) => !isOwnedBy(object.labels, owner)).map((object) => object.name);
  return { owned, kept };
}

/** What Docker shows of the stack's services: running tasks of each, against the desired count. */
async function describeSwarmStack(docker: Docker, services: SwarmService[]): Promise<StackService[]> {
  if (services.length === 0) return [];
  const tasks = (await docker.listTasks({
    filters: { service: services.map((service) => service.ID) },
  })) as Task[];
  return services.map((service) => {
    const own = tasks.filter((task) => task.ServiceID === service.ID);
    const running = own.filter((task) => task.DesiredState === "running" && task.Status?.State === "running");
    const failed = own.find((task) => task.Status?.Err);
    const desired = service.Spec.Mode?.Global
      ? Math.max(running.length, 1)
      : (service.Spec.Mode?.Replicated?.Replicas ?? 1);
    return {
      name: service.Spec.Name,
      runningTasks: running.length,
      desiredTasks: desired,
      error: failed?.Status?.Err ?? "",
    };
  });
}

type ContainerInfo = {
  Id: string;
  Names: string[];
  State: string;
  Labels: Record<string, string>;
  Mounts?: { Source?: string }[];
};

async function composeContainers(docker: Docker, appName: string): Promise<ContainerInfo[]> {
  return (await docker.listContainers({
    all: true,
    filters: { label: [`${COMPOSE_PROJECT_LABEL}=${appName}`] },
  })) as ContainerInfo[];
}

function describeContainers(containers: ContainerInfo[]): StackService[] {
  return containers.map((container) => ({
    name: (container.Names[0] ?? container.Id).replace(/^\//, ""),
    runningTasks: container.State === "running" ? 1 : 0,
    desiredTasks: 1,
    error: "",
  }));
}

/**
 * The server's Compose command, probed once per docker CLI and kept while found: docker-compose
 * v1 takes seconds to start, and every deploy of the stack would wait for the probe again.
 */
const foundCompose = new Map<string, ComposeCommand>();
async function composeCommandOf(cli: DockerCli): Promise<ComposeCommand | undefined> {
  const known = foundCompose.get(cli.command);
  if (known) return known;
  const found = await findComposeCommand(cli.command, { searchPath: cli.env.PATH });
  if (found) foundCompose.set(cli.command, found);
  return found;
}

/**
 * Writes the stack's file mounts and its file with the one writer (service-files.ts) into a
 * version directory of the stack: the file in `<version>/code/`, the mounts in `<version>/files/`,
 * so that the `../files/<x>` sources of the file (Dokploy's layout) are resolved by Compose and
 * `docker stack deploy` from the file's directory. The versions the running services bind stay.
 */
async function writeStackFiles(
  docker: Docker,
  mainDirectory: string,
  command: DeployStackCommand,
  owner: ResourceOwner,
  composeType: "stack" | "docker-compose",
  log: LogStream,
  signal: AbortSignal,
): Promise<{ directory: string; file: string }> {
  const running =
    composeType === "stack"
      ? (await stackServices(docker, command.appName)).flatMap(
          (service) =>
            (
              service.Spec as {
                TaskTemplate?: { ContainerSpec?: { Mounts?: { Source?: string }[] } };
              }
            ).TaskTemplate?.ContainerSpec?.Mounts?.map((mount) => mount.Source ?? "") ?? [],
        )
      : (await composeContainers(docker, command.appName)).flatMap(
          (container) => container.Mounts?.map((mount) => mount.Source ?? "") ?? [],
        );
  const { directory: version } = await writeFilesVersion(
    path.join(stackDirectory(mainDirectory, command.appName), "files"),
    owner,
    (command.files ?? []).map((file) => ({
      hostPath: `files/${file.filePath}`,
      containerPath: file.filePath,
      content: file.content,
    })),
    running.filter(Boolean),
  );
  const directory = path.join(version, "code");
  if (command.git) {
    // The repository's own files (build contexts, env files) sit around the converted file.
    await cloneRepository(command.git, directory, log, signal);
    await applySourcePatches(directory, command.patches ?? [], log);
    const relative = checkRelativePath("composePath", command.composePath) || "docker-compose.yml";
    const file = await resolveInside("composePath", directory, directory, relative);
    // The repository's file (or a symlink inside the clone) is replaced, never written through.
    await rm(file, { force: true });
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, command.composeFile, { mode: 0o600, flag: "wx" });
    return { directory: path.dirname(file), file };
  }
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const file = path.join(directory, STACK_FILE_NAME);
  await writeFile(file, command.composeFile, { mode: 0o600 });
  return { directory, file };
}

/**
 * docker-compose v1 builds by running `docker build` from PATH: the agent's own docker CLI must be
 * the one it finds, since DOCKER_BUILDKIT was chosen for that CLI (another, newer one without
 * buildx refuses DOCKER_BUILDKIT=1).
 */
function composeEnv(cli: DockerCli, compose: ComposeCommand, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (compose.command === cli.command || !path.isAbsolute(cli.command)) return env;
  return { ...env, PATH: [path.dirname(cli.command), env.PATH].filter(Boolean).join(path.delimiter) };
}

/** A DOCKER_CONFIG of its own, logged in to the command's registries (removed afterwards). */
async function withRegistryLogins<T>(
  cli: DockerCli,
  registries: RegistryAuth[],
  log: LogStream,
  signal: AbortSignal,
  work: (env: NodeJS.ProcessEnv) => Promise<T>,
): Promise<T> {
  const configDir = await mkdtemp(path.join(tmpdir(), "platform-stack-"));
  const env = { ...cli.env, DOCKER_CONFIG: configDir };
  try {
    for (const registry of registries) {
      if (!registry.serverAddress) continue;
      await runOrFail(
        cli.command,
        ["login", "--username", registry.username, "--password-stdin", registry.serverAddress],
        { env, signal, log, input: registry.password },
        `login to ${registry.serverAddress}`,
      );
    }
    return await work(env);
  } finally {
    await rm(configDir, { recursive: true, force: true });
  }
}

export async function deployStack(
  docker: Docker,
  cli: DockerCli,
  mainDirectory: string,
  command: DeployStackCommand,
  log: LogStream,
  signal: AbortSignal,
): Promise<DeployStackResult> {
  checkAppName("appName", command.appName);
  const composeType = checkComposeType(command.composeType);
  const owner = requireOwner(command.owner);
  if (!command.composeFile?.trim()) throw invalid("composeFile", "is required");
  const { appName } = command;

  // Objects of the stack's name that are not the owner's: never taken over.
  const existing =
    composeType === "stack"
      ? (await stackServices(docker, appName)).map((service) => ({
          name: service.Spec.Name,
          labels: service.Spec.Labels,
        }))
      : (await composeContainers(docker, appName)).map((container) => ({
          name: container.Names[0] ?? container.Id,
          labels: container.Labels,
        }));
  const { kept } = splitOwned(existing, owner);
  if (kept.length > 0) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `the stack ${appName} has objects that do not belong to this compose service (${kept.join(", ")}): choose another appName`,
    );
  }

  const { directory, file } = await writeStackFiles(
    docker,
    mainDirectory,
    command,
    owner,
    composeType,
    log,
    signal,
  );
  throwIfCancelled(signal);

  await withRegistryLogins(cli, command.registryAuth ?? [], log, signal, async (env) => {
    if (composeType === "stack") {
      log.line(`docker stack deploy --prune --with-registry-auth -c docker-compose.yml ${appName}`);
      await runOrFail(
        cli.command,
        stackDeployArgs(file, appName),
        { cwd: directory, env, signal, log },
        "docker stack deploy",
      );
      return;
    }
    const compose = await composeCommandOf(cli);
    if (!compose) {
      throw new CommandError(
        "FAILED_PRECONDITION",
        "neither `docker compose` nor `docker-compose` is installed on this server: use composeType `stack`",
      );
    }
    const args = [...compose.args, ...composeUpArgs(appName, file)];
    const options = { cwd: directory, env: composeEnv(cli, compose, env), signal, log };
    for (let attempt = 1; ; attempt++) {
      log.line(`${[compose.command === cli.command ? "docker" : compose.command, ...args].join(" ")}`);
      const result = await runProcess(compose.command, args, options);
      if (result.exitCode === 0) break;
      if (attempt < COMPOSE_UP_ATTEMPTS && lostOverlayAttachment(result.tail)) {
        log.line(
          "Docker lost this server's attachment to a swarm network as another container left it; starting again",
        );
        continue;
      }
      throw processFailure("compose up", result, log);
    }
  });

  const deadline = Date.now() + (command.waitSeconds || DEFAULT_WAIT_SECONDS) * 1000;
  let lastState = "";
  for (;;) {
    throwIfCancelled(signal);
    const services =
      composeType === "stack"
        ? await describeSwarmStack(docker, await stackServices(docker, appName))
        : describeContainers(await composeContainers(docker, appName));
    const state = services.map(
      (service) => `${service.name} ${service.runningTasks}/${service.desiredTasks}`,
    );
    if (state.join(", ") !== lastState) {
      lastState = state.join(", ");
      log.line(`tasks: ${lastState || "none yet"}`);
    }
    if (services.length > 0 && services.every((service) => service.runningTasks >= service.desiredTasks)) {
      return { services };
    }
    if (Date.now() > deadline) {
      const failing = services.find((service) => service.error);
      throw new CommandError(
        "FAILED",
        `the stack's tasks did not all run within ${command.waitSeconds || DEFAULT_WAIT_SECONDS} s: ${lastState}${failing ? ` (${failing.name}: ${failing.error})` : ""}`,
      );
    }
    await sleep(POLL_MS, signal);
  }
}

async function updateReplicas(docker: Docker, service: SwarmService, replicas: number, stopped?: number) {
  const spec = structuredClone(service.Spec);
  if (!spec.Mode?.Replicated) return;
  spec.Mode = { Replicated: { Replicas: replicas } };
  const labels = { ...(spec.Labels ?? {}) };
  if (stopped === undefined) delete labels[STOPPED_REPLICAS_LABEL];
  else labels[STOPPED_REPLICAS_LABEL] = String(stopped);
  spec.Labels = labels;
  await docker.getService(service.ID).update({ ...spec, version: service.Version.Index });
}

/** Removes the owner's volumes of the stack, retrying while its last containers exit. */
async function removeStackVolumes(
  docker: Docker,
  label: string,
  owner: ResourceOwner,
): Promise<{ removed: string[]; kept: string[] }> {
  const { Volumes } = (await docker.listVolumes({ filters: { label: [label] } })) as {
    Volumes: { Name: string; Labels: Record<string, string> | null }[];
  };
  const { owned, kept } = splitOwned(
    (Volumes ?? []).map((volume) => ({ name: volume.Name, labels: volume.Labels ?? undefined })),
    owner,
  );
  const removed: string[] = [];
  const deadline = Date.now() + REMOVE_WAIT_MS;
  for (const volume of owned) {
    for (;;) {
      try {
        await docker.getVolume(volume.name).remove();
        removed.push(volume.name);
        break;
      } catch (error) {
        if (engineStatus(error) === 404) break;
        // In use by a container that is still exiting: try again.
        if (engineStatus(error) !== 409 || Date.now() > deadline) {
          throw new CommandError("FAILED", `removing volume ${volume.name} failed: ${engineMessage(error)}`);
        }
        await sleep(POLL_MS, new AbortController().signal);
      }
    }
  }
  return { removed, kept };
}

/** Waits until none of `exists` is left (tasks exiting), up to REMOVE_WAIT_MS. */
async function waitGone(what: string, left: () => Promise<number>): Promise<void> {
  const deadline = Date.now() + REMOVE_WAIT_MS;
  while ((await left()) > 0) {
    if (Date.now() > deadline)
      throw new CommandError("FAILED", `${what} did not go within ${REMOVE_WAIT_MS / 1000} s`);
    await sleep(POLL_MS, new AbortController().signal);
  }
}

const STACK_ACTIONS: ReadonlySet<string> = new Set<StackAction>(["START", "STOP", "REMOVE", "STATUS"]);

export async function stackAction(
  docker: Docker,
  mainDirectory: string,
  command: StackActionCommand,
): Promise<StackActionResult> {
  checkAppName("appName", command.appName);
  const composeType = checkComposeType(command.composeType);
  const owner = requireOwner(command.owner);
  const { appName, action } = command;
  // An action left out (ACTION_UNSPECIFIED) or unknown to this agent would otherwise fall
  // through to the removal of the stack.
  if (!STACK_ACTIONS.has(action)) throw invalid("action", "must be START, STOP, REMOVE or STATUS");
  if (action !== "REMOVE" && command.removeVolumes)
    throw invalid("removeVolumes", "only a REMOVE deletes volumes");
  try {
    if (composeType === "stack")
      return await swarmStackAction(docker, mainDirectory, appName, action, owner, command);
    return await composeProjectAction(docker, mainDirectory, appName, action, owner, command);
  } catch (error) {
    if (error instanceof CommandError) throw error;
    throw new CommandError(
      "FAILED",
      `${action.toLowerCase()} of stack ${appName} failed: ${engineMessage(error)}`,
    );
  }
}

async function swarmStackAction(
  docker: Docker,
  mainDirectory: string,
  appName: string,
  action: StackActionCommand["action"],
  owner: ResourceOwner,
  command: StackActionCommand,
): Promise<StackActionResult> {
  const all = await stackServices(docker, appName);
  const { owned: ownedRefs, kept } = splitOwned(
    all.map((service) => ({ name: service.Spec.Name, labels: service.Spec.Labels, service })),
    owner,
  );
  const owned = ownedRefs.map((ref) => ref.service);
  const found = owned.length > 0;
  if (action === "STATUS") {
    return { found, services: await describeSwarmStack(docker, owned), volumesRemoved: [], kept };
  }
  if (action === "STOP") {
    for (const service of owned) {
      const replicas = service.Spec.Mode?.Replicated?.Replicas ?? 0;
      if (replicas > 0) await updateReplicas(docker, service, 0, replicas);
    }
    const services = await describeSwarmStack(docker, await stackServices(docker, appName));
    return { found, services, volumesRemoved: [], kept };
  }
  if (action === "START") {
    for (const service of owned) {
      const stopped = Number(service.Spec.Labels?.[STOPPED_REPLICAS_LABEL] ?? "");
      if (Number.isInteger(stopped) && stopped > 0) await updateReplicas(docker, service, stopped);
    }
    return { found, services: await describeSwarmStack(docker, owned), volumesRemoved: [], kept };
  }
  // REMOVE: the owner's services, then its networks, then (asked) its volumes.
  for (const service of owned) {
    await docker
      .getService(service.ID)
      .remove()
      .catch((error) => {
        if (engineStatus(error) !== 404) throw error;
      });
  }
  const ownedIds = new Set(owned.map((service) => service.ID));
  await waitGone(`the tasks of stack ${appName}`, async () => {
    const containers = await docker.listContainers({
      all: true,
      filters: { label: [`${STACK_LABEL}=${appName}`] },
    });
    return (containers as { Labels: Record<string, string> }[]).filter((container) =>
      ownedIds.has(container.Labels["com.docker.swarm.service.id"] ?? ""),
    ).length;
  });
  const networks = (await docker.listNetworks({ filters: { label: [`${STACK_LABEL}=${appName}`] } })) as {
    Id: string;
    Name: string;
    Labels?: Record<string, string>;
  }[];
  for (const network of networks) {
    if (!isOwnedBy(network.Labels, owner)) {
      kept.push(network.Name);
      continue;
    }
    // A network is released a moment after its last task: try again while it is in use.
    const deadline = Date.now() + REMOVE_WAIT_MS;
    for (;;) {
      try {
        await docker.getNetwork(network.Id).remove();
        break;
      } catch (error) {
        if (engineStatus(error) === 404) break;
        if (Date.now() > deadline) throw error;
        await sleep(POLL_MS, new AbortController().signal);
      }
    }
  }
  const volumes = command.removeVolumes
    ? await removeStackVolumes(docker, `${STACK_LABEL}=${appName}`, owner)
    : { removed: [], kept: [] };
  if (kept.length === 0) await rm(stackDirectory(mainDirectory, appName), { recursive: true, force: true });
  return { found, services: [], volumesRemoved: volumes.removed, kept: [...kept, ...volumes.kept] };
}

async function composeProjectAction(
  docker: Docker,
  mainDirectory: string,
  appName: string,
  action: StackActionCommand["action"],
  owner: ResourceOwner,
  command: StackActionCommand,
): Promise<StackActionResult> {
  const all = await composeContainers(docker, appName);
  const { owned: ownedRefs, kept } = splitOwned(
    all.map((container) => ({
      name: container.Names[0] ?? container.Id,
      labels: container.Labels,
      container,
    })),
    owner,
  );
  const owned = ownedRefs.map((ref) => ref.container);
  const found = owned.length > 0;
  const ignoreGone = (error: unknown) => {
    if (engineStatus(error) !== 404 && engineStatus(error) !== 304) throw error;
  };
  if (action === "STOP") {
    for (const container of owned) await docker.getContainer(container.Id).stop().catch(ignoreGone);
  } else if (action === "START") {
    for (const container of owned) await docker.getContainer(container.Id).start().catch(ignoreGone);
  } else if (action === "REMOVE") {
    for (const container of owned)
      await docker.getContainer(container.Id).remove({ force: true }).catch(ignoreGone);
    const networks = (await docker.listNetworks({
      filters: { label: [`${COMPOSE_PROJECT_LABEL}=${appName}`] },
    })) as {
      Id: string;
      Name: string;
      Labels?: Record<string, string>;
    }[];
    for (const network of networks) {
      if (isOwnedBy(network.Labels, owner)) await docker.getNetwork(network.Id).remove().catch(ignoreGone);
      else kept.push(network.Name);
    }
    const volumes = command.removeVolumes
      ? await removeStackVolumes(docker, `${COMPOSE_PROJECT_LABEL}=${appName}`, owner)
      : { removed: [], kept: [] };
    if (kept.length === 0) await rm(stackDirectory(mainDirectory, appName), { recursive: true, force: true });
    return { found, services: [], volumesRemoved: volumes.removed, kept: [...kept, ...volumes.kept] };
  }
  const services = describeContainers(await composeContainers(docker, appName)).filter((service) =>
    owned.some((container) => (container.Names[0] ?? "").replace(/^\//, "") === service.name),
  );
  return { found, services, volumesRemoved: [], kept };
}

const COMPOSE_SERVICE_LABEL = "com.docker.compose.service";

/** `<appName>-<service>` as a repository name (lower case, single separators). */
function rollbackRepository(appName: string, service: string, taken: Set<string>): string {
  const base = `${appName}-${service}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  taken.add(name);
  return `${ROLLBACK_IMAGE_REPOSITORY_PREFIX}${name}`;
}

/** The image ID a running container uses; undefined when it is gone. */
async function containerImageId(docker: Docker, containerId: string): Promise<string | undefined> {
  try {
    return ((await docker.getContainer(containerId).inspect()) as { Image: string }).Image;
  } catch (error) {
    if (engineStatus(error) === 404) return undefined;
    throw error;
  }
}

/**
 * Keeps the images the owner's services of the stack run for a rollback of the stack: for each
 * service, the image ID of a running task (Swarm) or container (Compose), else the image its spec
 * names, tagged as platform-rollback/<appName>-<service>:<tag>.
 */
export async function keepStackRollbackImages(
  docker: Docker,
  command: KeepStackRollbackImagesCommand,
): Promise<StackRollbackImagesKept> {
  checkAppName("appName", command.appName);
  const composeType = checkComposeType(command.composeType);
  const owner = requireOwner(command.owner);
  const { appName } = command;
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(command.tag ?? ""))
    throw invalid("tag", "is not an image tag");
  const found: { service: string; imageId: string | undefined; reference: string }[] = [];
  try {
    if (composeType === "stack") {
      const services = (await stackServices(docker, appName)).filter((service) =>
        isOwnedBy(service.Spec.Labels, owner),
      );
      const tasks = services.length
        ? ((await docker.listTasks({
            filters: { service: services.map((service) => service.ID) },
          })) as Task[])
        : [];
      for (const service of services) {
        const running = tasks.filter(
          (task) =>
            task.ServiceID === service.ID &&
            task.Status?.State === "running" &&
            task.Status.ContainerStatus?.ContainerID,
        );
        let imageId: string | undefined;
        for (const task of running) {
          imageId = await containerImageId(docker, task.Status?.ContainerStatus?.ContainerID ?? "");
          if (imageId) break;
        }
        const reference =
          (service.Spec as { TaskTemplate?: { ContainerSpec?: { Image?: string } } }).TaskTemplate
            ?.ContainerSpec?.Image ?? "";
        const prefix = `${appName}_`;
        const name = service.Spec.Name.startsWith(prefix)
          ? service.Spec.Name.slice(prefix.length)
          : service.Spec.Name;
        found.push({ service: name, imageId, reference });
      }
    } else {
      const containers = (await composeContainers(docker, appName)).filter((container) =>
        isOwnedBy(container.Labels, owner),
      );
      const byService = new Map<string, ContainerInfo & { ImageID?: string; Image?: string }>();
      for (const container of containers as (ContainerInfo & { ImageID?: string; Image?: string })[]) {
        const service = container.Labels[COMPOSE_SERVICE_LABEL] ?? "";
        const known = byService.get(service);
        if (!known || (known.State !== "running" && container.State === "running"))
          byService.set(service, container);
      }
      for (const [service, container] of byService) {
        found.push({ service, imageId: container.ImageID, reference: container.Image ?? "" });
      }
    }
  } catch (error) {
    if (error instanceof CommandError) throw error;
    throw new CommandError(
      "UNAVAILABLE",
      `reading the services of stack ${appName} failed: ${engineMessage(error)}`,
    );
  }
  if (found.length === 0)
    throw new CommandError("NOT_FOUND", `the stack ${appName} has no service of this owner`);
  const taken = new Set<string>();
  const images: StackRollbackImage[] = [];
  for (const { service, imageId: running, reference } of found.sort((a, b) =>
    a.service.localeCompare(b.service),
  )) {
    // Swarm names the image with its digest (`nginx:1@sha256:…`); the engine finds it by either.
    const imageId = running ?? (reference ? await imageIdOf(docker, reference) : undefined);
    if (!imageId) {
      throw new CommandError(
        "NOT_FOUND",
        `the image of service ${service} (${reference || "unknown"}) is not on this server`,
      );
    }
    const image = `${rollbackRepository(appName, service, taken)}:${command.tag}`;
    await tagRollbackImage(docker, imageId, image);
    images.push({ service, image, imageId });
  }
  return { images };
}
