/**
 * NVIDIA GPU support of the server (settings.checkGPUStatus, settings.setupGPU): what nvidia-smi
 * says (argument vectors, never a shell), whether nvidia-container-runtime is on the PATH, and
 * what the engine reports (its runtimes and default runtime, its Swarm node's generic resources).
 * The setup merges the nvidia runtime into the engine's daemon.json as its default runtime with
 * the GPUs as the node's generic resource, as Dokploy's does, but never restarts the engine: the
 * engine reads daemon.json when it starts, so the answer says a restart is required.
 */
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { GpuSetUp, GpuStatus } from "@platform/agent-protocol";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage } from "../docker/engine.ts";

export const DEFAULT_DOCKER_DAEMON_CONFIG = "/etc/docker/daemon.json";
export const DEFAULT_NVIDIA_RUNTIME_CONFIG = "/etc/nvidia-container-runtime/config.toml";
const RUNTIME_EXECUTABLE = "nvidia-container-runtime";
/** The generic resource nvidia-container-runtime hands a task's GPUs through (Dokploy's choice). */
const SWARM_RESOURCE_LINE = 'swarm-resource = "DOCKER_RESOURCE_GPU"';
const COMMAND_TIMEOUT_MS = 15_000;

export interface GpuOptions {
  docker: Docker;
  /** The nvidia-smi executable: a path, or a name looked up on searchPath (default "nvidia-smi"). */
  nvidiaSmi?: string;
  /** PATH for nvidia-smi and nvidia-container-runtime (default the agent's). */
  searchPath?: string;
  /** The engine's daemon.json (default /etc/docker/daemon.json). */
  daemonConfigPath?: string;
  /** nvidia-container-runtime's config.toml (default /etc/nvidia-container-runtime/config.toml). */
  runtimeConfigPath?: string;
}

interface EngineInfo {
  Runtimes?: Record<string, unknown>;
  DefaultRuntime?: string;
  Swarm?: { NodeID?: string; LocalNodeState?: string; ControlAvailable?: boolean };
}

interface NodeInfo {
  ID: string;
  Version: { Index: number };
  Spec: { Labels?: Record<string, string> } & Record<string, unknown>;
  Description?: {
    Resources?: { GenericResources?: { DiscreteResourceSpec?: { Kind?: string; Value?: number } }[] | null };
  };
}

const searchPathOf = (options: GpuOptions) => options.searchPath ?? process.env.PATH ?? "";

/** nvidia-smi's stdout, or undefined when it is missing or fails (no driver). */
function nvidiaSmi(options: GpuOptions, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      options.nvidiaSmi ?? "nvidia-smi",
      args,
      {
        env: { ...process.env, PATH: searchPathOf(options) },
        timeout: COMMAND_TIMEOUT_MS,
        maxBuffer: 4 * 1024 * 1024,
        shell: false,
      },
      (error, stdout) => resolve(error ? undefined : String(stdout)),
    );
  });
}

async function isExecutableOnPath(name: string, searchPath: string): Promise<boolean> {
  for (const directory of searchPath.split(path.delimiter)) {
    if (!directory) continue;
    try {
      await access(path.join(directory, name), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/** "550.54.15, NVIDIA L4, 23034 MiB" lines, one per GPU (a model name may hold commas). */
function parseGpuLines(stdout: string) {
  const gpus = stdout
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const fields = line.split(",").map((field) => field.trim());
      return {
        driverVersion: fields[0] ?? "",
        model: fields.slice(1, -1).join(", "),
        memory: fields.length > 2 ? fields[fields.length - 1]! : "",
      };
    })
    .filter((gpu) => gpu.driverVersion !== "");
  return gpus;
}

async function engineInfo(docker: Docker): Promise<EngineInfo> {
  return (await docker.info()) as EngineInfo;
}

async function inspectNode(docker: Docker, nodeId: string): Promise<NodeInfo | undefined> {
  try {
    return (await docker.getNode(nodeId).inspect()) as NodeInfo;
  } catch {
    // Not a manager (a worker cannot inspect nodes) or not a Swarm node: no resource known.
    return undefined;
  }
}

function gpuResourcesOf(node: NodeInfo | undefined): number | undefined {
  for (const resource of node?.Description?.Resources?.GenericResources ?? []) {
    const spec = resource.DiscreteResourceSpec;
    if (spec && (spec.Kind === "GPU" || spec.Kind === "gpu")) return spec.Value ?? 0;
  }
  return undefined;
}

export async function checkGpu(options: GpuOptions): Promise<GpuStatus> {
  const [gpuList, details, runtimeInstalled, info] = await Promise.all([
    nvidiaSmi(options, ["--query-gpu=driver_version,gpu_name,memory.total", "--format=csv,noheader"]),
    nvidiaSmi(options, ["-q"]),
    isExecutableOnPath(RUNTIME_EXECUTABLE, searchPathOf(options)),
    engineInfo(options.docker),
  ]);
  const gpus = gpuList === undefined ? [] : parseGpuLines(gpuList);
  const first = gpus[0];
  const cudaVersion = first ? (/CUDA Version\s*:\s*([\d.]+)/.exec(details ?? "")?.[1] ?? "") : "";
  const nodeId = info.Swarm?.NodeID ?? "";
  const gpuResources = nodeId ? gpuResourcesOf(await inspectNode(options.docker, nodeId)) : undefined;
  return {
    driverInstalled: first !== undefined,
    driverVersion: first?.driverVersion ?? "",
    gpuModel: first?.model ?? "",
    memoryInfo: first?.memory ?? "",
    availableGpus: gpus.length,
    cudaSupport: cudaVersion !== "",
    cudaVersion,
    runtimeInstalled,
    runtimeConfigured: "nvidia" in (info.Runtimes ?? {}) && info.DefaultRuntime === "nvidia",
    swarmEnabled: gpuResources !== undefined,
    gpuResources: gpuResources ?? 0,
  };
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The engine's daemon.json as an object ({} when there is none); refused when it is not one. */
function parseDaemonConfig(text: string | undefined, file: string): Record<string, unknown> {
  if (text === undefined || text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {}
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `${file} is not a JSON object: fix it first; nothing was changed`,
    );
  }
  return parsed as Record<string, unknown>;
}

/** Writes `text` through a temporary file renamed over `file`, so the engine never reads half of it. */
async function replaceFile(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.platform-${process.pid}.tmp`;
  await writeFile(temporary, text, { mode: 0o644 });
  await rename(temporary, file);
}

/** daemon.json with the nvidia runtime as default and the GPUs as generic resource; the rest kept. */
export function daemonConfigWithGpus(
  current: Record<string, unknown>,
  gpus: number,
): Record<string, unknown> {
  const runtimes =
    typeof current.runtimes === "object" && current.runtimes !== null && !Array.isArray(current.runtimes)
      ? (current.runtimes as Record<string, unknown>)
      : {};
  const resources = Array.isArray(current["node-generic-resources"])
    ? (current["node-generic-resources"] as unknown[]).filter(
        (resource) => typeof resource !== "string" || !/^gpu=/i.test(resource),
      )
    : [];
  return {
    ...current,
    runtimes: { ...runtimes, nvidia: { path: RUNTIME_EXECUTABLE, runtimeArgs: [] } },
    "default-runtime": "nvidia",
    "node-generic-resources": [...resources, `GPU=${gpus}`],
  };
}

/**
 * config.toml with one top-level swarm-resource line: before the first table, since a key after
 * a [table] header would belong to that table (appending it, as Dokploy does, lands it in the last).
 */
export function runtimeConfigWithSwarmResource(current: string): string {
  const lines = current.split("\n").filter((line) => !/^\s*#?\s*swarm-resource\s*=/.test(line));
  const firstTable = lines.findIndex((line) => /^\s*\[/.test(line));
  let at = firstTable === -1 ? lines.length : firstTable;
  while (at > 0 && lines[at - 1]!.trim() === "") at--;
  lines.splice(at, 0, SWARM_RESOURCE_LINE);
  const text = lines.join("\n");
  return text.endsWith("\n") ? text : `${text}\n`;
}

export async function setupGpu(options: GpuOptions): Promise<GpuSetUp> {
  const daemonConfigPath = options.daemonConfigPath ?? DEFAULT_DOCKER_DAEMON_CONFIG;
  const runtimeConfigPath = options.runtimeConfigPath ?? DEFAULT_NVIDIA_RUNTIME_CONFIG;
  const status = await checkGpu(options);
  if (!status.driverInstalled) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      "The NVIDIA driver is not installed (nvidia-smi is missing or lists no GPU): install the driver first; nothing was changed",
    );
  }
  if (!status.runtimeInstalled) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `The NVIDIA Container Runtime is not installed (no ${RUNTIME_EXECUTABLE} on the PATH): install nvidia-container-toolkit first; nothing was changed`,
    );
  }
  const info = await engineInfo(options.docker);
  const nodeId = info.Swarm?.NodeID ?? "";
  if (!nodeId) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      "The engine is not a Swarm node: set the server up first; nothing was changed",
    );
  }
  const configured =
    status.runtimeConfigured && status.swarmEnabled && status.gpuResources === status.availableGpus;
  if (configured) return { status, changed: false, restartRequired: false, daemonConfigPath };

  const daemonText = await readOptional(daemonConfigPath);
  const daemonConfig = parseDaemonConfig(daemonText, daemonConfigPath);
  const nextDaemon = `${JSON.stringify(daemonConfigWithGpus(daemonConfig, status.availableGpus), null, 2)}\n`;
  const runtimeText = (await readOptional(runtimeConfigPath)) ?? "";
  const nextRuntime = runtimeConfigWithSwarmResource(runtimeText);

  let changed = false;
  if (nextDaemon !== daemonText) {
    await replaceFile(daemonConfigPath, nextDaemon);
    changed = true;
  }
  if (nextRuntime !== runtimeText) {
    await replaceFile(runtimeConfigPath, nextRuntime);
    changed = true;
  }
  if (info.Swarm?.ControlAvailable) await labelGpuNode(options.docker, nodeId);
  return { status, changed, restartRequired: true, daemonConfigPath };
}

/** The node's gpu=true label (placement constraints node.labels.gpu==true), as Dokploy sets it. */
async function labelGpuNode(docker: Docker, nodeId: string): Promise<void> {
  const node = docker.getNode(nodeId);
  // Swarm refuses a stale version: read, change and write again when another update came first.
  for (let attempt = 1; ; attempt++) {
    const current = (await node.inspect()) as NodeInfo;
    if (current.Spec.Labels?.gpu === "true") return;
    const spec = { ...current.Spec, Labels: { ...(current.Spec.Labels ?? {}), gpu: "true" } };
    try {
      await node.update({ _query: { version: current.Version.Index }, _body: spec } as never);
      return;
    } catch (error) {
      if (attempt >= 3 || !/update out of sequence/i.test(engineMessage(error))) throw error;
    }
  }
}
