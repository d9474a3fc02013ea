/**
 * GPU support through AgentCore against the real engine, with a stand-in nvidia-smi (a script on
 * the agent's PATH) and a temporary daemon.json and config.toml: the real engine's configuration
 * is never touched and it is never restarted. The engine here has no nvidia runtime, so its part
 * of the answer is the real one (not configured, no GPU resource).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { asReceived, type CommandReply, makeCommandRequest } from "@platform/agent-protocol";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { requireDocker } from "../testing/docker.ts";
import { SYSTEM_PATH, writeFakeNvidiaRuntime, writeFakeNvidiaSmi } from "../testing/fake-gpu.ts";
import { daemonConfigWithGpus, runtimeConfigWithSwarmResource } from "./gpu.ts";

const serverId = "gpu-test";
let docker: Docker;
let directory: string;
let withDriver: string;
let withRuntime: string;
let daemonConfig: string;
let runtimeConfig: string;
let nodeId = "";
let hadGpuLabel = false;

const L4_PAIR = {
  driverVersion: "550.54.15",
  gpus: [
    { name: "NVIDIA L4", memoryMiB: 23034 },
    { name: "NVIDIA L4", memoryMiB: 23034 },
  ],
  cudaVersion: "12.4",
};

function core(searchPath: string, nvidiaSmi = path.join(directory, "missing", "nvidia-smi")) {
  return new AgentCore({
    serverId,
    docker,
    toolSearchPath: searchPath,
    nvidiaSmi,
    dockerDaemonConfig: daemonConfig,
    nvidiaRuntimeConfig: runtimeConfig,
  });
}

async function run(agent: AgentCore, command: "checkGpu" | "setupGpu"): Promise<CommandReply> {
  const input = command === "checkGpu" ? { command, checkGpu: {} } : { command, setupGpu: {} };
  return agent.handle(asReceived(makeCommandRequest(serverId, input as never, 30_000)));
}

const ORIGINAL_DAEMON = `${JSON.stringify({ "log-driver": "json-file", runtimes: { crun: { path: "crun" } } }, null, 2)}\n`;
const ORIGINAL_RUNTIME =
  '#swarm-resource = "DOCKER_RESOURCE_GPU"\ndisable-require = false\n\n[nvidia-container-cli]\nldconfig = "@/sbin/ldconfig"\n';

beforeAll(async () => {
  docker = await requireDocker();
  directory = await mkdtemp(path.join(tmpdir(), "agent-gpu-"));
  withDriver = path.join(directory, "driver");
  withRuntime = path.join(directory, "runtime");
  await writeFakeNvidiaSmi(directory, L4_PAIR);
  await Promise.all([mkdir(withDriver), mkdir(withRuntime)]);
  await writeFakeNvidiaSmi(withDriver, L4_PAIR);
  await writeFakeNvidiaRuntime(withRuntime);
  daemonConfig = path.join(directory, "docker", "daemon.json");
  runtimeConfig = path.join(directory, "nvidia-container-runtime", "config.toml");
  await mkdir(path.dirname(daemonConfig));
  await mkdir(path.dirname(runtimeConfig));
  const info = (await docker.info()) as { Swarm?: { NodeID?: string } };
  nodeId = info.Swarm?.NodeID ?? "";
  if (nodeId) {
    const node = (await docker.getNode(nodeId).inspect()) as { Spec: { Labels?: Record<string, string> } };
    hadGpuLabel = node.Spec.Labels?.gpu !== undefined;
  }
});

afterAll(async () => {
  // setupGpu labels the engine's node gpu=true as Dokploy does: take it off again.
  if (docker && nodeId && !hadGpuLabel) {
    const node = docker.getNode(nodeId);
    const current = (await node.inspect()) as {
      Version: { Index: number };
      Spec: { Labels?: Record<string, string> };
    };
    if (current.Spec.Labels?.gpu !== undefined) {
      const { gpu: _gpu, ...labels } = current.Spec.Labels;
      await node.update({
        _query: { version: current.Version.Index },
        _body: { ...current.Spec, Labels: labels },
      } as never);
    }
  }
  if (directory) await rm(directory, { recursive: true, force: true });
});

describe("checkGpu", () => {
  it("answers a server without nvidia-smi with no driver, no runtime and the engine's own state", async () => {
    const reply = await run(core(SYSTEM_PATH), "checkGpu");
    expect(reply).toMatchObject({
      result: "gpuStatus",
      gpuStatus: {
        driverInstalled: false,
        driverVersion: "",
        availableGpus: 0,
        cudaSupport: false,
        cudaVersion: "",
        runtimeInstalled: false,
        runtimeConfigured: false,
        swarmEnabled: false,
        gpuResources: 0,
      },
    });
  });

  it("parses nvidia-smi found on the agent's PATH and sees nvidia-container-runtime there", async () => {
    const reply = await run(core(`${withDriver}:${withRuntime}:${SYSTEM_PATH}`, "nvidia-smi"), "checkGpu");
    expect(reply).toMatchObject({
      result: "gpuStatus",
      gpuStatus: {
        driverInstalled: true,
        driverVersion: "550.54.15",
        gpuModel: "NVIDIA L4",
        memoryInfo: "23034 MiB",
        availableGpus: 2,
        cudaSupport: true,
        cudaVersion: "12.4",
        runtimeInstalled: true,
        // The engine itself has no nvidia runtime and no GPU resource.
        runtimeConfigured: false,
        swarmEnabled: false,
        gpuResources: 0,
      },
    });
  });

  it("takes nvidia-smi as a path too", async () => {
    const reply = await run(core(SYSTEM_PATH, path.join(directory, "nvidia-smi")), "checkGpu");
    expect(reply).toMatchObject({
      gpuStatus: { driverInstalled: true, availableGpus: 2, runtimeInstalled: false },
    });
  });
});

describe("setupGpu", () => {
  it("refuses without the driver and changes nothing", async () => {
    await writeFile(daemonConfig, ORIGINAL_DAEMON);
    const reply = await run(core(`${withRuntime}:${SYSTEM_PATH}`), "setupGpu");
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED_PRECONDITION" } });
    expect(reply.result === "error" && reply.error.message).toMatch(/NVIDIA driver is not installed/);
    expect(await readFile(daemonConfig, "utf8")).toBe(ORIGINAL_DAEMON);
    await expect(readFile(runtimeConfig, "utf8")).rejects.toThrow(/ENOENT/);
  });

  it("refuses without nvidia-container-runtime and changes nothing", async () => {
    const reply = await run(core(`${withDriver}:${SYSTEM_PATH}`, "nvidia-smi"), "setupGpu");
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED_PRECONDITION" } });
    expect(reply.result === "error" && reply.error.message).toMatch(/nvidia-container-runtime/);
    expect(await readFile(daemonConfig, "utf8")).toBe(ORIGINAL_DAEMON);
  });

  it("merges the nvidia runtime and the GPUs into daemon.json, says the engine must restart, and is idempotent", async () => {
    const info = (await docker.info()) as { Swarm?: { NodeID?: string } };
    if (!info.Swarm?.NodeID)
      throw new Error("the test engine must be a Swarm node (scripts/docker-setup.sh)");
    await writeFile(runtimeConfig, ORIGINAL_RUNTIME);
    const agent = core(`${withDriver}:${withRuntime}:${SYSTEM_PATH}`, "nvidia-smi");
    const reply = await run(agent, "setupGpu");
    expect(reply).toMatchObject({
      result: "gpuSetUp",
      gpuSetUp: { changed: true, restartRequired: true, daemonConfigPath: daemonConfig },
    });
    expect(JSON.parse(await readFile(daemonConfig, "utf8"))).toEqual({
      "log-driver": "json-file",
      runtimes: {
        crun: { path: "crun" },
        nvidia: { path: "nvidia-container-runtime", runtimeArgs: [] },
      },
      "default-runtime": "nvidia",
      "node-generic-resources": ["GPU=2"],
    });
    expect(await readFile(runtimeConfig, "utf8")).toBe(
      'disable-require = false\nswarm-resource = "DOCKER_RESOURCE_GPU"\n\n[nvidia-container-cli]\nldconfig = "@/sbin/ldconfig"\n',
    );
    const node = (await docker.getNode(info.Swarm.NodeID).inspect()) as {
      Spec: { Labels?: Record<string, string> };
    };
    expect(node.Spec.Labels?.gpu).toBe("true");

    // The files already say so; the engine still has to restart to read them.
    const again = await run(agent, "setupGpu");
    expect(again).toMatchObject({ result: "gpuSetUp", gpuSetUp: { changed: false, restartRequired: true } });
  });

  it("refuses a daemon.json that is not a JSON object and leaves it as it was", async () => {
    await writeFile(daemonConfig, "{ not json");
    const reply = await run(core(`${withDriver}:${withRuntime}:${SYSTEM_PATH}`, "nvidia-smi"), "setupGpu");
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED_PRECONDITION" } });
    expect(await readFile(daemonConfig, "utf8")).toBe("{ not json");
  });
});

describe("the configuration edits", () => {
  it("replace an earlier GPU resource and keep the other ones", () => {
    expect(
      daemonConfigWithGpus({ "node-generic-resources": ["gpu=1", "SSD=2"], "default-runtime": "runc" }, 4),
    ).toEqual({
      "node-generic-resources": ["SSD=2", "GPU=4"],
      "default-runtime": "nvidia",
      runtimes: { nvidia: { path: "nvidia-container-runtime", runtimeArgs: [] } },
    });
  });

  it("put swarm-resource at the top level of a config.toml, once", () => {
    expect(runtimeConfigWithSwarmResource("")).toBe('swarm-resource = "DOCKER_RESOURCE_GPU"\n');
    expect(runtimeConfigWithSwarmResource('a = 1\nswarm-resource = "X"\n')).toBe(
      'a = 1\nswarm-resource = "DOCKER_RESOURCE_GPU"\n',
    );
  });
});
