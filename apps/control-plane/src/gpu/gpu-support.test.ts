/**
 * settings.checkGPUStatus, settings.setupGPU and settings.updateEnforceSSO through the API. This
 * machine's agent has no nvidia-smi (as this test machine); a tenant's server runs an agent
 * enrolled over real NATS whose PATH holds a stand-in nvidia-smi and nvidia-container-runtime and
 * whose daemon.json and config.toml are temporary files: the real engine is read (its runtimes,
 * its Swarm node) but never reconfigured or restarted.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connectAgentNats, enrollAgent, type RunningAgent, startAgent } from "@platform/agent";
import { requireDocker } from "@platform/agent/testing/docker.ts";
import { SYSTEM_PATH, writeFakeNvidiaRuntime, writeFakeNvidiaSmi } from "@platform/agent/testing/fake-gpu.ts";
import { NatsAgentTransport, type NatsConnection } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertTestServer, listen } from "../agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../agents/testing/nats-jwt.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const ORIGINAL_DAEMON = '{\n  "log-level": "warn"\n}\n';

let nats: JwtNats;
let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let owner: Session;
let tenant: Session;
let directory: string;
let localDaemonConfig: string;
let remoteDaemonConfig: string;
let remote: { agent: RunningAgent; connection: NatsConnection } | undefined;
let serverId: string;
let docker: Awaited<ReturnType<typeof requireDocker>>;
let nodeId = "";
let hadGpuLabel = false;
const as = (session: Session) => ({ token: session.token });

beforeAll(async () => {
  docker = await requireDocker();
  nodeId = ((await docker.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID ?? "";
  if (nodeId) {
    const node = (await docker.getNode(nodeId).inspect()) as { Spec: { Labels?: Record<string, string> } };
    hadGpuLabel = node.Spec.Labels?.gpu !== undefined;
  }
  directory = await mkdtemp(path.join(tmpdir(), "cp-gpu-"));
  const tools = path.join(directory, "bin");
  await mkdir(tools);
  await writeFakeNvidiaSmi(tools, {
    driverVersion: "535.183.01",
    gpus: [{ name: "NVIDIA A100-SXM4-40GB", memoryMiB: 40960 }],
    cudaVersion: "12.2",
  });
  await writeFakeNvidiaRuntime(tools);
  localDaemonConfig = path.join(directory, "local-daemon.json");
  remoteDaemonConfig = path.join(directory, "remote-daemon.json");
  await writeFile(localDaemonConfig, ORIGINAL_DAEMON);
  await writeFile(remoteDaemonConfig, ORIGINAL_DAEMON);

  nats = await startJwtNats();
  platform = await startTestPlatform(nats.env, {
    agents: {
      localAgent: {
        mainDirectory: path.join(directory, "local"),
        nvidiaSmi: path.join(directory, "no-driver", "nvidia-smi"),
        toolSearchPath: `${tools}:${SYSTEM_PATH}`,
        dockerDaemonConfig: localDaemonConfig,
        nvidiaRuntimeConfig: path.join(directory, "local-config.toml"),
      },
    },
  });
  http = await listen(platform);
  owner = await platform.registerOwner();
  tenant = await createUserDirectly(platform, { email: "tenant-gpu@example.com" });
  serverId = await insertTestServer(platform, tenant.user.organizationId, "gpu-node");
  const remoteState = path.join(directory, "remote");
  const { token } = await platform.ctx.agents.createEnrollmentToken(serverId);
  const enrollment = await enrollAgent({
    controlPlaneUrl: http.url,
    enrollmentToken: token,
    stateDir: remoteState,
  });
  const connection = await connectAgentNats({ ...enrollment, natsUrl: enrollment.natsUrl });
  const agent = await startAgent({
    serverId,
    transport: new NatsAgentTransport(connection),
    mainDirectory: remoteState,
    toolSearchPath: `${tools}:${SYSTEM_PATH}`,
    dockerDaemonConfig: remoteDaemonConfig,
    nvidiaRuntimeConfig: path.join(directory, "remote-config.toml"),
  });
  remote = { agent, connection };
}, 90_000);

afterAll(async () => {
  await remote?.agent.stop();
  await remote?.connection.close();
  await http?.close();
  await platform?.close();
  await nats?.stop();
  // setupGPU labels the engine's node gpu=true as Dokploy does: take it off again.
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

describe("settings.checkGPUStatus", () => {
  it("answers this machine without a driver with Dokploy's fields (not an error)", async () => {
    const answer = await platform.query("settings.checkGPUStatus", {}, as(owner));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({
      driverInstalled: false,
      runtimeInstalled: true,
      runtimeConfigured: false,
      cudaSupport: false,
      availableGPUs: 0,
      swarmEnabled: false,
      gpuResources: 0,
    });
  });

  it("answers a tenant's server what its agent's nvidia-smi says", async () => {
    const answer = await platform.query("settings.checkGPUStatus", { serverId }, as(tenant));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({
      driverInstalled: true,
      driverVersion: "535.183.01",
      gpuModel: "NVIDIA A100-SXM4-40GB",
      memoryInfo: "40960 MiB",
      availableGPUs: 1,
      cudaSupport: true,
      cudaVersion: "12.2",
      runtimeInstalled: true,
      runtimeConfigured: false,
      swarmEnabled: false,
      gpuResources: 0,
    });
  });

  it("this machine is the instance administrator's; another organization's server is a 404", async () => {
    expect((await platform.query("settings.checkGPUStatus", {}, as(tenant))).status).toBe(403);
    const member = await platform.addMember(owner, "member", "gpu-member@example.com");
    expect((await platform.query("settings.checkGPUStatus", {}, as(member))).status).toBe(403);
    expect((await platform.query("settings.checkGPUStatus", { serverId }, as(owner))).status).toBe(404);
  });
});

describe("settings.setupGPU", () => {
  it("refuses this machine without the driver with a 409 naming it, and writes nothing", async () => {
    const answer = await platform.mutate("settings.setupGPU", {}, as(owner));
    expect(answer.status, JSON.stringify(answer.body)).toBe(409);
    expect(JSON.stringify(answer.body)).toContain("NVIDIA driver is not installed");
    expect(await readFile(localDaemonConfig, "utf8")).toBe(ORIGINAL_DAEMON);
  });

  it("does nothing for another organization's server (404)", async () => {
    const answer = await platform.mutate("settings.setupGPU", { serverId }, as(owner));
    expect(answer.status).toBe(404);
    expect(await readFile(remoteDaemonConfig, "utf8")).toBe(ORIGINAL_DAEMON);
  });

  it("writes the nvidia runtime and the GPU resource into the server's daemon.json and says the engine must restart", async () => {
    const answer = await platform.mutate("settings.setupGPU", { serverId }, as(tenant));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({
      success: true,
      changed: true,
      restartRequired: true,
      status: { driverInstalled: true, availableGPUs: 1, runtimeInstalled: true },
    });
    expect(answer.body.message).toContain("restart");
    expect(JSON.parse(await readFile(remoteDaemonConfig, "utf8"))).toEqual({
      "log-level": "warn",
      runtimes: { nvidia: { path: "nvidia-container-runtime", runtimeArgs: [] } },
      "default-runtime": "nvidia",
      "node-generic-resources": ["GPU=1"],
    });
    expect(await readFile(path.join(directory, "remote-config.toml"), "utf8")).toBe(
      'swarm-resource = "DOCKER_RESOURCE_GPU"\n',
    );
  });
});

describe("settings.updateEnforceSSO", () => {
  it("refuses enforceSSO true with a 400 naming it and accepts false, for the instance administrator", async () => {
    const enforce = await platform.mutate("settings.updateEnforceSSO", { enforceSSO: true }, as(owner));
    expect(enforce.status).toBe(400);
    expect(JSON.stringify(enforce.body)).toContain("enforceSSO");
    const relax = await platform.mutate("settings.updateEnforceSSO", { enforceSSO: false }, as(owner));
    expect(relax.status, JSON.stringify(relax.body)).toBe(200);
    expect(relax.body).toEqual({ success: true });
    expect(
      (await platform.mutate("settings.updateEnforceSSO", { enforceSSO: false }, as(tenant))).status,
    ).toBe(403);
    const member = await platform.addMember(owner, "member", "sso-member@example.com");
    expect(
      (await platform.mutate("settings.updateEnforceSSO", { enforceSSO: false }, as(member))).status,
    ).toBe(403);
  });
});
