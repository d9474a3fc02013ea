/**
 * The proxy's Swarm service through AgentCore against the real Docker Engine (Swarm active,
 * platform-network present: scripts/docker-setup.sh), with the Traefik stand-in image
 * (scripts/build-traefik-standin-image.sh, run here). The stand-in serves the traefik.yml it
 * started with on every entry point, so the published host ports, the mount and the
 * --configFile argument are checked end to end, besides the spec Docker reports.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  type EnsureProxyCommand,
  makeCommandRequest,
} from "@platform/agent-protocol";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { requireDocker, TEST_DOCKER_SOCKET, uniqueName } from "../testing/docker.ts";
import { freePort } from "../testing/net.ts";

const run = promisify(execFile);
// A task restart takes seconds, much longer on a busy machine: allow for several per test.
const TASK_TIMEOUT_MS = 240_000;
const STANDIN_IMAGE = "platform-test/traefik-standin:latest";
const buildScript = fileURLToPath(
  new URL("../../../../scripts/build-traefik-standin-image.sh", import.meta.url),
);

const serverId = "proxy-service-test";
const serviceName = uniqueName("proxy-test-traefik");
const createdServices = [serviceName];
const scratch: string[] = [];
let docker: Docker;
let core: AgentCore;
let mainDirectory: string;
let ports: { http: number; https: number; dashboard: number };
let networkId: string;

function send(agent: AgentCore, command: CommandInput): Promise<CommandReply> {
  return agent.handle(asReceived(makeCommandRequest(serverId, command, 60_000)));
}

async function newAgent(name: string): Promise<{ agent: AgentCore; directory: string }> {
  const directory = await mkdtemp(path.join(tmpdir(), "proxy-service-main-"));
  scratch.push(directory);
  return {
    agent: new AgentCore({
      serverId,
      docker,
      dockerSocket: TEST_DOCKER_SOCKET,
      mainDirectory: directory,
      proxyServiceName: name,
    }),
    directory,
  };
}

function staticConfig(marker: string): string {
  return `# ${marker}\nentryPoints:\n  web:\n    address: ":80"\n  websecure:\n    address: ":443"\n`;
}

function ensureCommand(overrides: Partial<EnsureProxyCommand> = {}): EnsureProxyCommand {
  return {
    image: STANDIN_IMAGE,
    staticConfig: staticConfig("first"),
    dashboard: false,
    httpPort: ports.http,
    httpsPort: ports.https,
    dashboardPort: ports.dashboard,
    ...overrides,
  };
}

async function ensure(overrides: Partial<EnsureProxyCommand> = {}) {
  const reply = await send(core, { command: "ensureProxy", ensureProxy: ensureCommand(overrides) });
  if (reply.result !== "proxyService") throw new Error(JSON.stringify(reply));
  return reply.proxyService;
}

async function inspectService(name = serviceName): Promise<any> {
  return docker.getService(name).inspect();
}

/** Waits until the service has a running task other than `previous`; returns its id. */
async function runningTask(previous?: string): Promise<string> {
  const deadline = Date.now() + TASK_TIMEOUT_MS / 3;
  let seen = "";
  while (Date.now() < deadline) {
    const tasks = await docker.listTasks({
      filters: { service: [serviceName], "desired-state": ["running"] },
    });
    const task = tasks.find(
      (candidate) => candidate.ID !== previous && candidate.Status?.State === "running",
    );
    if (task?.ID) return task.ID;
    seen = JSON.stringify(
      tasks.map((candidate) => [candidate.ID, candidate.Status?.State, candidate.Status?.Err]),
    );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`no new running task of ${serviceName}; tasks: ${seen}`);
}

/** What the stand-in serves at http://127.0.0.1:<port>/<file> once it is up. */
async function served(port: number, file = "traefik.yml"): Promise<string> {
  const deadline = Date.now() + 30_000;
  let problem = "";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/${file}`);
      if (response.ok) return await response.text();
      problem = `HTTP ${response.status}`;
    } catch (error) {
      problem = String((error as Error).cause ?? error);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`nothing served on 127.0.0.1:${port}: ${problem}`);
}

async function refused(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) });
    return false;
  } catch {
    return true;
  }
}

const publishedPorts = (spec: { EndpointSpec?: { Ports?: object[] } }) =>
  (spec.EndpointSpec?.Ports ?? []).map((port) => ({ ...port }));

beforeAll(async () => {
  docker = await requireDocker();
  await run(buildScript, [], { timeout: 120_000 });
  networkId = (await docker.getNetwork("platform-network").inspect()).Id;
  const http = await freePort();
  let https = await freePort();
  while (https === http) https = await freePort();
  let dashboard = await freePort();
  while (dashboard === http || dashboard === https) dashboard = await freePort();
  ports = { http, https, dashboard };
  const agent = await newAgent(serviceName);
  core = agent.agent;
  mainDirectory = agent.directory;
}, 180_000);

afterAll(async () => {
  for (const name of createdServices) {
    await docker
      ?.getService(name)
      .remove()
      .catch(() => {});
  }
  for (const directory of scratch) await rm(directory, { recursive: true, force: true });
});

describe("ensureProxy and reloadProxy on the real Swarm", { timeout: TASK_TIMEOUT_MS }, () => {
  let firstTask: string;

  it("creates the service as specified, writing traefik.yml first", async () => {
    const result = await ensure();
    expect(result.created).toBe(true);
    const proxyDirectory = path.join(await realpath(mainDirectory), "traefik");
    expect(await readFile(path.join(proxyDirectory, "traefik.yml"), "utf8")).toBe(staticConfig("first"));

    const service = await inspectService();
    expect(service.ID).toBe(result.serviceId);
    const spec = service.Spec;
    expect(spec.Name).toBe(serviceName);
    expect(spec.Labels).toEqual({ "platform.role": "proxy", "platform.internal": "true" });
    expect(spec.TaskTemplate.ContainerSpec.Image).toBe(STANDIN_IMAGE);
    expect(spec.TaskTemplate.ContainerSpec.Args).toEqual(["--configFile=/etc/traefik/traefik.yml"]);
    expect(spec.TaskTemplate.ContainerSpec.Labels).toEqual({
      "platform.role": "proxy",
      "platform.internal": "true",
    });
    expect(spec.TaskTemplate.ContainerSpec.Mounts).toEqual([
      { Type: "bind", Source: proxyDirectory, Target: "/etc/traefik" },
      { Type: "bind", Source: TEST_DOCKER_SOCKET, Target: "/var/run/docker.sock", ReadOnly: true },
    ]);
    expect(spec.TaskTemplate.RestartPolicy.Condition).toBe("any");
    expect(spec.TaskTemplate.Networks).toEqual([{ Target: networkId }]);
    const nodeId = (await docker.info()).Swarm.NodeID;
    expect(spec.TaskTemplate.Placement.Constraints).toEqual([`node.id==${nodeId}`]);
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 1 } });
    expect(publishedPorts(spec)).toEqual([
      { Protocol: "tcp", TargetPort: 80, PublishedPort: ports.http, PublishMode: "host" },
      { Protocol: "tcp", TargetPort: 443, PublishedPort: ports.https, PublishMode: "host" },
    ]);

    firstTask = await runningTask();
    expect(await served(ports.http)).toBe(staticConfig("first"));
    expect(await served(ports.https)).toBe(staticConfig("first"));
    expect(await refused(ports.dashboard)).toBe(true);
  });

  it("updates the same service in place: the dashboard port appears, then disappears", async () => {
    const before = await inspectService();
    const withDashboard = await ensure({ dashboard: true });
    expect(withDashboard).toEqual({ serviceId: before.ID, created: false });
    const spec = (await inspectService()).Spec;
    expect(publishedPorts(spec)).toEqual([
      { Protocol: "tcp", TargetPort: 80, PublishedPort: ports.http, PublishMode: "host" },
      { Protocol: "tcp", TargetPort: 443, PublishedPort: ports.https, PublishMode: "host" },
      { Protocol: "tcp", TargetPort: 8080, PublishedPort: ports.dashboard, PublishMode: "host" },
    ]);
    // The static configuration did not change: no forced restart on top of the port change.
    expect(spec.TaskTemplate.ForceUpdate ?? 0).toBe(before.Spec.TaskTemplate.ForceUpdate ?? 0);
    const dashboardTask = await runningTask(firstTask);
    expect(await served(ports.dashboard, "")).toBe("traefik stand-in\n");

    const withoutDashboard = await ensure({ dashboard: false });
    expect(withoutDashboard).toEqual({ serviceId: before.ID, created: false });
    expect(publishedPorts((await inspectService()).Spec)).toEqual([
      { Protocol: "tcp", TargetPort: 80, PublishedPort: ports.http, PublishMode: "host" },
      { Protocol: "tcp", TargetPort: 443, PublishedPort: ports.https, PublishMode: "host" },
    ]);
    firstTask = await runningTask(dashboardTask);
    expect(await served(ports.http)).toBe(staticConfig("first"));
    expect(await refused(ports.dashboard)).toBe(true);
  });

  it("restarts the task when only traefik.yml changed, and leaves it alone when nothing did", async () => {
    const forceUpdate = (await inspectService()).Spec.TaskTemplate.ForceUpdate ?? 0;
    await ensure();
    expect((await inspectService()).Spec.TaskTemplate.ForceUpdate ?? 0).toBe(forceUpdate);

    expect(await ensure({ staticConfig: staticConfig("second") })).toMatchObject({ created: false });
    expect((await inspectService()).Spec.TaskTemplate.ForceUpdate).toBe(forceUpdate + 1);
    firstTask = await runningTask(firstTask);
    expect(await served(ports.http)).toBe(staticConfig("second"));
  });

  it("reload bumps ForceUpdate and a new task starts with the current traefik.yml", async () => {
    const before = (await inspectService()).Spec;
    const written = await send(core, {
      command: "writeProxyFile",
      writeProxyFile: { scope: "static", fileName: "", content: staticConfig("reloaded") },
    });
    expect(written.result).toBe("proxyFileWritten");

    expect(await send(core, { command: "reloadProxy", reloadProxy: {} })).toMatchObject({
      result: "proxyReloaded",
      proxyReloaded: { found: true },
    });
    const after = (await inspectService()).Spec;
    expect(after.TaskTemplate.ForceUpdate).toBe((before.TaskTemplate.ForceUpdate ?? 0) + 1);
    expect({ ...after, TaskTemplate: { ...after.TaskTemplate, ForceUpdate: 0 } }).toEqual({
      ...before,
      TaskTemplate: { ...before.TaskTemplate, ForceUpdate: 0 },
    });
    firstTask = await runningTask(firstTask);
    expect(await served(ports.http)).toBe(staticConfig("reloaded"));
  });

  it("reload answers found: false when there is no proxy service", async () => {
    const { agent } = await newAgent(uniqueName("proxy-test-absent"));
    expect(await send(agent, { command: "reloadProxy", reloadProxy: {} })).toMatchObject({
      result: "proxyReloaded",
      proxyReloaded: { found: false },
    });
    expect(await send(agent, { command: "inspectProxy", inspectProxy: {} })).toMatchObject({
      result: "proxyInspection",
      proxyInspection: { found: false, runningTasks: 0 },
    });
  });

  it("inspectProxy answers the published ports and environment the running service's spec has", async () => {
    await ensure({ dashboard: true });
    // An environment set on the service by hand (docker service update --env-add) is read back.
    // Swarm may bump the version meanwhile (update out of sequence): inspect again and retry.
    for (let attempt = 1; ; attempt++) {
      const service = await inspectService();
      try {
        await docker.getService(service.ID).update({
          ...service.Spec,
          version: service.Version.Index,
          TaskTemplate: {
            ...service.Spec.TaskTemplate,
            ContainerSpec: { ...service.Spec.TaskTemplate.ContainerSpec, Env: ["TZ=UTC", "LOG=debug"] },
          },
        });
        break;
      } catch (error) {
        if (attempt >= 10 || !/out of sequence/.test(String(error))) throw error;
      }
    }
    // The updated task replaces the old one: ask until Swarm runs it (runningTasks counts it).
    let inspected: any;
    for (let attempt = 0; attempt < 120; attempt++) {
      inspected = await send(core, { command: "inspectProxy", inspectProxy: {} });
      if (inspected.proxyInspection?.runningTasks === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(inspected).toMatchObject({ result: "proxyInspection" });
    expect(inspected.proxyInspection).toEqual({
      found: true,
      ports: [
        { targetPort: 80, publishedPort: ports.http, protocol: "tcp" },
        { targetPort: 443, publishedPort: ports.https, protocol: "tcp" },
        { targetPort: 8080, publishedPort: ports.dashboard, protocol: "tcp" },
      ],
      env: ["TZ=UTC", "LOG=debug"],
      runningTasks: 1,
    });
  });
});

describe("concurrent ensureProxy commands", { timeout: TASK_TIMEOUT_MS }, () => {
  it("create one service: the loser of the race updates the winner's", async () => {
    const name = uniqueName("proxy-test-race");
    createdServices.push(name);
    const { agent } = await newAgent(name);
    const racePorts = [await freePort(), await freePort()];
    const command = ensureCommand({ httpPort: racePorts[0], httpsPort: racePorts[1] });
    const replies = await Promise.all([
      send(agent, { command: "ensureProxy", ensureProxy: command }),
      send(agent, { command: "ensureProxy", ensureProxy: command }),
    ]);
    const results = replies.map((reply) => {
      if (reply.result !== "proxyService") throw new Error(JSON.stringify(reply));
      return reply.proxyService;
    });
    expect(results.map((result) => result.created).sort()).toEqual([false, true]);
    expect(results[0]?.serviceId).toBe(results[1]?.serviceId);
    expect((await inspectService(name)).ID).toBe(results[0]?.serviceId);
  });
});

describe("refused ensureProxy commands", { timeout: TASK_TIMEOUT_MS }, () => {
  const bad: [string, Partial<EnsureProxyCommand>][] = [
    ["image", { image: "" }],
    ["image", { image: "traefik:v3; rm -rf /" }],
    ["image", { image: "--privileged" }],
    ["image", { image: "UPPER/Case:v3" }],
    ["image", { image: "traefik:v3\n" }],
    ["staticConfig", { staticConfig: "" }],
    ["httpPort", { httpPort: 70_000 }],
    // As received: -1 arrives as 4294967295 (uint32 on the wire); a fraction cannot be sent at all.
    ["httpsPort", { httpsPort: -1 }],
    ["httpsPort", { httpsPort: 65_536 }],
    ["dashboardPort", { dashboard: true, dashboardPort: 65_536 }],
    ["must differ", { httpsPort: 18_080, httpPort: 18_080 }],
    ["must differ", { dashboard: true, dashboardPort: 18_081, httpPort: 18_081 }],
  ];

  it("refuses bad input naming the field, creating no service and writing no file", async () => {
    const name = uniqueName("proxy-test-refused");
    const { agent, directory } = await newAgent(name);
    for (const [field, overrides] of bad) {
      const reply = await send(agent, { command: "ensureProxy", ensureProxy: ensureCommand(overrides) });
      expect(reply, field).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
      if (reply.result === "error") expect(reply.error.message).toContain(field);
    }
    expect(await readdir(directory)).toEqual([]);
    await expect(inspectService(name)).rejects.toMatchObject({ statusCode: 404 });
  });

  it("refuses bad input before Docker is called", async () => {
    const calls: string[] = [];
    const recordingDocker = new Proxy({} as Docker, {
      get(_target, property) {
        calls.push(String(property));
        throw new Error(`docker.${String(property)} must not be used`);
      },
    });
    const directory = await mkdtemp(path.join(tmpdir(), "proxy-service-main-"));
    scratch.push(directory);
    const agent = new AgentCore({ serverId, docker: recordingDocker, mainDirectory: directory });
    for (const [field, overrides] of bad) {
      const reply = await send(agent, { command: "ensureProxy", ensureProxy: ensureCommand(overrides) });
      expect(reply, field).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    }
    expect(calls).toEqual([]);
  });

  it("does not take over a service of the same name that is not the platform's proxy", async () => {
    const name = uniqueName("proxy-test-foreign");
    createdServices.push(name);
    await docker.createService({
      Name: name,
      TaskTemplate: { ContainerSpec: { Image: STANDIN_IMAGE, Args: ["--configFile=/nonexistent"] } },
      Mode: { Replicated: { Replicas: 0 } },
    });
    const { agent, directory } = await newAgent(name);
    const reply = await send(agent, { command: "ensureProxy", ensureProxy: ensureCommand() });
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    expect(await send(agent, { command: "reloadProxy", reloadProxy: {} })).toMatchObject({
      result: "error",
      error: { code: "FAILED" },
    });
    const spec = (await inspectService(name)).Spec;
    expect(spec.TaskTemplate.ContainerSpec.Args).toEqual(["--configFile=/nonexistent"]);
    expect(spec.TaskTemplate.ForceUpdate ?? 0).toBe(0);
    expect(await readdir(directory)).toEqual([]);
  });
});
