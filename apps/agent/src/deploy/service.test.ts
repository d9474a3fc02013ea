/**
 * deployService and serviceAction against the real Docker Engine (Swarm): a git repository with
 * a Dockerfile is built, deployed with a host-mode port and redeployed after a commit; a broken
 * update rolls back; a start-first update is proven from Docker's task timestamps; start, stop,
 * reload and remove act on the service.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  asReceived,
  type BuildImageCommand,
  type CommandInput,
  type CommandReply,
  type DeployServiceCommand,
  type Init,
  makeCommandRequest,
  type ResourceOwner,
  type ServiceSpec,
} from "@platform/agent-protocol";
import { ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { createForeignService, dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../testing/docker.ts";
import { type GitServer, startGitServer } from "../testing/git-server.ts";
import { freePort, waitForHttp } from "../testing/net.ts";
import { LogCollector } from "./test-support.ts";

/** A spec as the tests send it (what it leaves out is sent as the default). */
type SpecToSend = Init<ServiceSpec> & Pick<ServiceSpec, "name">;
const serverId = "deploy-service-test";
const NETWORK = "platform-network";
let docker: Docker;
let core: AgentCore;
let mainDirectory: string;
let git: GitServer;
const logs = new LogCollector();
const services: string[] = [];
const images: string[] = [];
const prefix = uniqueName("svc").toLowerCase();
let counter = 0;
/** The tenant the test's services belong to, and another one. */
const owner: ResourceOwner = { organizationId: "org-test", resource: `application:${prefix}` };
const stranger: ResourceOwner = { organizationId: "org-stranger", resource: "application:other" };

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 600_000)));
}

async function deploy(spec: SpecToSend, waitSeconds = 90, as: ResourceOwner | null = owner) {
  counter++;
  if (!services.includes(spec.name)) services.push(spec.name);
  const command: Init<DeployServiceCommand> & Pick<DeployServiceCommand, "jobId" | "logStreamId"> = {
    jobId: `deploy-${prefix}-${counter}`,
    logStreamId: `deploy-stream-${prefix}-${counter}`,
    spec,
    waitSeconds,
    ...(as ? { owner: as } : {}),
  };
  const reply = await send({ command: "deployService", deployService: command });
  return { reply, log: logs.text(command.logStreamId) };
}

async function build(repo: string, tag: string) {
  counter++;
  const command = {
    jobId: `build-${prefix}-${counter}`,
    logStreamId: `build-stream-${prefix}-${counter}`,
    appName: `${prefix}-web`,
    imageName: `platform-test/${prefix}-web:${tag}`,
    buildType: "dockerfile",
    git: { url: git.url(repo), branch: "main" },
    owner,
  } satisfies Init<BuildImageCommand>;
  images.push(command.imageName);
  const reply = await send({ command: "buildImage", buildImage: command });
  if (reply.result !== "buildImage")
    throw new Error(`${JSON.stringify(reply)}\n${logs.text(command.logStreamId)}`);
  return reply.buildImage;
}

interface Task {
  ID: string;
  CreatedAt: string;
  DesiredState: string;
  Spec: { ForceUpdate?: number; ContainerSpec: { Env?: string[] } };
  Status: { State: string; Timestamp: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
}

async function tasksOf(name: string): Promise<Task[]> {
  return (await docker.listTasks({ filters: { service: [name] } })) as Task[];
}

beforeAll(async () => {
  docker = await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "agent-service-main-"));
  core = new AgentCore({ serverId, docker, mainDirectory, publishLogChunk: logs.publish });
  git = await startGitServer();
  await git.createRepo("web", {
    Dockerfile: `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
    "index.html": "web version one\n",
  });
});

afterAll(async () => {
  for (const name of services) await dockerCli(["service", "rm", name]).catch(() => {});
  // Containers of removed services go away asynchronously; images can only be removed after.
  for (let attempt = 0; attempt < 40; attempt++) {
    const left = await dockerCli([
      "ps",
      "-aq",
      "--filter",
      `label=platform.service`,
      "--filter",
      `name=${prefix}`,
    ]);
    if (!left) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  for (const image of images) await dockerCli(["rmi", "-f", image]).catch(() => {});
  await dockerCli(["volume", "rm", `${prefix}-data`]).catch(() => {});
  await git?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 120_000);

describe("deploy a git repository with a Dockerfile on a host-mode port", () => {
  const name = `${prefix}-web`;
  let port: number;

  it("builds, deploys, serves; a commit plus redeploy serves the new content", async () => {
    port = await freePort();
    const v1 = await build("web", "v1");
    const spec = (image: string): SpecToSend => ({
      name,
      image,
      env: ["GREETING=hi", "SECRET_TOKEN=env-secret-123"],
      replicas: 1,
      labels: { "platform.application": "test" },
      networks: [NETWORK],
      ports: [{ publishedPort: port, targetPort: 8080, protocol: "tcp", publishMode: "host" }],
      memoryLimitBytes: 64 * 1024 * 1024,
      nanoCpusLimit: 500_000_000,
      memoryReservationBytes: 8 * 1024 * 1024,
      restartPolicy: { condition: "any", delayNs: 1_000_000_000 },
      files: { "/www/config.txt": "mounted config file\n" },
    });
    const first = await deploy(spec(v1.imageName));
    if (first.reply.result !== "deployService")
      throw new Error(`${JSON.stringify(first.reply)}\n${first.log}`);
    expect(first.reply.deployService).toMatchObject({ created: true, runningTasks: 1 });
    expect(first.log).toMatch(/task 1 \(\w+\): running/);
    await waitForHttp(
      `http://127.0.0.1:${port}/`,
      (status, body) => status === 200 && body === "web version one\n",
    );
    const config = await waitForHttp(`http://127.0.0.1:${port}/config.txt`, (status) => status === 200);
    expect(config.body).toBe("mounted config file\n");
    const filesRoot = path.join(mainDirectory, "applications", name, "files");
    const [version] = await readdir(filesRoot);
    expect(await readFile(path.join(filesRoot, version ?? "", "www", "config.txt"), "utf8")).toBe(
      "mounted config file\n",
    );

    const inspect = (await docker.getService(name).inspect()) as {
      Spec: {
        Labels: Record<string, string>;
        TaskTemplate: {
          ContainerSpec: { Env: string[]; Mounts: { Target: string; ReadOnly: boolean }[] };
          Resources: { Limits: { MemoryBytes: number; NanoCPUs: number } };
          Networks: { Target: string }[];
        };
        UpdateConfig: { Order: string; FailureAction: string };
        RollbackConfig: { Order: string };
        EndpointSpec: { Ports: { PublishMode: string; PublishedPort: number }[] };
      };
    };
    expect(inspect.Spec.Labels["platform.application"]).toBe("test");
    // Ownership labels on the service, its containers and the built image.
    expect(inspect.Spec.Labels).toMatchObject(ownershipLabels(owner));
    const containerId = await dockerCli([
      "ps",
      "-q",
      "--filter",
      `label=com.docker.swarm.service.name=${name}`,
    ]);
    const container = (await docker.getContainer(containerId.split("\n")[0] ?? "").inspect()) as {
      Config: { Labels: Record<string, string> };
    };
    expect(container.Config.Labels).toMatchObject(ownershipLabels(owner));
    const builtImage = (await docker.getImage(v1.imageName).inspect()) as {
      Config: { Labels: Record<string, string> };
    };
    expect(builtImage.Config.Labels).toMatchObject(ownershipLabels(owner));
    expect(inspect.Spec.TaskTemplate.ContainerSpec.Env).toContain("GREETING=hi");
    expect(inspect.Spec.TaskTemplate.ContainerSpec.Mounts).toContainEqual(
      expect.objectContaining({ Target: "/www/config.txt", ReadOnly: true }),
    );
    expect(inspect.Spec.TaskTemplate.Resources.Limits).toEqual({
      MemoryBytes: 64 * 1024 * 1024,
      NanoCPUs: 500_000_000,
    });
    expect(inspect.Spec.TaskTemplate.Networks).toHaveLength(1);
    // A host-mode port cannot be bound twice on one node: this service updates stop-first.
    expect(inspect.Spec.UpdateConfig).toMatchObject({ Order: "stop-first", FailureAction: "rollback" });
    expect(inspect.Spec.EndpointSpec.Ports).toEqual([
      expect.objectContaining({ PublishMode: "host", PublishedPort: port }),
    ]);

    await git.commit("web", { "index.html": "web version two\n" }, "second version");
    const v2 = await build("web", "v2");
    const second = await deploy(spec(v2.imageName));
    if (second.reply.result !== "deployService")
      throw new Error(`${JSON.stringify(second.reply)}\n${second.log}`);
    expect(second.reply.deployService).toMatchObject({ created: false, runningTasks: 1 });
    await waitForHttp(
      `http://127.0.0.1:${port}/`,
      (status, body) => status === 200 && body === "web version two\n",
    );
    expect(first.log + second.log).not.toContain("env-secret-123");
  }, 240_000);

  it("rolls a broken update back: FAILED with the task's error, the previous version serves again", async () => {
    const current = (await docker.getService(name).inspect()) as {
      Spec: { TaskTemplate: { ContainerSpec: { Image: string } } };
    };
    const image = current.Spec.TaskTemplate.ContainerSpec.Image;
    const broken: SpecToSend = {
      name,
      image,
      env: [],
      command: ["sh", "-c", "echo crashing; exit 3"],
      replicas: 1,
      networks: [NETWORK],
      ports: [{ publishedPort: port, targetPort: 8080, protocol: "tcp", publishMode: "host" }],
    };
    const { reply, log } = await deploy(broken);
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    if (reply.result === "error") expect(reply.error.message).toMatch(/non-zero exit \(3\)/);
    expect(log).toMatch(/rolling back|rollback/);
    await waitForHttp(
      `http://127.0.0.1:${port}/`,
      (status, body) => status === 200 && body === "web version two\n",
    );
    const after = (await docker.getService(name).inspect()) as {
      Spec: { TaskTemplate: { ContainerSpec: { Command?: string[] } } };
    };
    expect(after.Spec.TaskTemplate.ContainerSpec.Command).toBeUndefined();
  }, 240_000);
});

describe("start-first update of a service without published ports", () => {
  const name = `${prefix}-sf`;

  it("starts the new task and has it healthy before the old one stops (Docker's timestamps)", async () => {
    const spec = (version: string): SpecToSend => ({
      name,
      image: TEST_IMAGE,
      env: [`VERSION=${version}`],
      command: ["httpd", "-f", "-p", "8080", "-h", "/www"],
      replicas: 1,
      networks: [NETWORK],
      healthCheck: {
        test: ["CMD-SHELL", "wget -q -O- http://127.0.0.1:8080/ >/dev/null || exit 1"],
        intervalNs: 1_000_000_000,
        timeoutNs: 2_000_000_000,
        retries: 3,
      },
    });
    const first = await deploy(spec("1"));
    if (first.reply.result !== "deployService")
      throw new Error(`${JSON.stringify(first.reply)}\n${first.log}`);
    const second = await deploy(spec("2"));
    if (second.reply.result !== "deployService")
      throw new Error(`${JSON.stringify(second.reply)}\n${second.log}`);
    expect(second.reply.deployService).toMatchObject({ created: false, runningTasks: 1 });

    const inspect = (await docker.getService(name).inspect()) as {
      Spec: { UpdateConfig: { Order: string; Monitor: number } };
    };
    expect(inspect.Spec.UpdateConfig.Order).toBe("start-first");

    // The old task has to be shut down by now; wait for Swarm to record it.
    let tasks: Task[] = [];
    for (let attempt = 0; attempt < 60; attempt++) {
      tasks = await tasksOf(name);
      const old = tasks.find((task) => task.Spec.ContainerSpec.Env?.includes("VERSION=1"));
      if (old && old.Status.State !== "running") break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const oldTask = tasks.find((task) => task.Spec.ContainerSpec.Env?.includes("VERSION=1"));
    const newTask = tasks.find((task) => task.Spec.ContainerSpec.Env?.includes("VERSION=2"));
    if (!oldTask || !newTask) throw new Error(JSON.stringify(tasks));
    expect(newTask.Status.State).toBe("running");
    expect(["shutdown", "complete"]).toContain(oldTask.Status.State);
    const oldStopped = Date.parse(oldTask.Status.Timestamp);
    const newRunning = Date.parse(newTask.Status.Timestamp);
    // The new container passed its health check before the old task stopped.
    const container = (await docker
      .getContainer(newTask.Status.ContainerStatus?.ContainerID ?? "")
      .inspect()) as {
      State: { Health: { Log: { End: string; ExitCode: number }[] } };
    };
    const firstHealthy = Math.min(
      ...container.State.Health.Log.filter((probe) => probe.ExitCode === 0).map((probe) =>
        Date.parse(probe.End),
      ),
    );
    expect(Date.parse(newTask.CreatedAt)).toBeLessThan(oldStopped);
    expect(firstHealthy).toBeLessThanOrEqual(oldStopped);
    expect(newRunning).toBeLessThanOrEqual(oldStopped);
  }, 240_000);
});

describe("the user's Swarm settings (swarmSettingsJson)", () => {
  const name = `${prefix}-swarm`;

  it("reach the Docker service: placement, update/rollback config, stop grace period, ulimits, endpoint mode", async () => {
    const settings = {
      Placement: { Constraints: ["node.role==manager"], MaxReplicas: 1 },
      UpdateConfig: { Parallelism: 2, Order: "stop-first", FailureAction: "pause" },
      RollbackConfig: { Parallelism: 1, Order: "stop-first" },
      StopGracePeriod: 3_000_000_000,
      Ulimits: [{ Name: "nofile", Soft: 1024, Hard: 2048 }],
      EndpointMode: "dnsrr",
    };
    const { reply, log } = await deploy({
      name,
      image: TEST_IMAGE,
      env: [],
      command: ["httpd", "-f", "-p", "8080", "-h", "/www"],
      replicas: 1,
      networks: [NETWORK],
      swarmSettingsJson: JSON.stringify(settings),
    });
    if (reply.result !== "deployService") throw new Error(`${JSON.stringify(reply)}\n${log}`);
    const inspect = (await docker.getService(name).inspect()) as { Spec: Record<string, any> };
    expect(inspect.Spec.TaskTemplate.Placement).toMatchObject({
      Constraints: ["node.role==manager"],
      MaxReplicas: 1,
    });
    expect(inspect.Spec.TaskTemplate.ContainerSpec.StopGracePeriod).toBe(3_000_000_000);
    expect(inspect.Spec.TaskTemplate.ContainerSpec.Ulimits).toEqual([
      { Name: "nofile", Soft: 1024, Hard: 2048 },
    ]);
    expect(inspect.Spec.UpdateConfig).toMatchObject({
      Parallelism: 2,
      Order: "stop-first",
      FailureAction: "pause",
    });
    expect(inspect.Spec.RollbackConfig).toMatchObject({ Parallelism: 1, Order: "stop-first" });
    expect(inspect.Spec.EndpointSpec.Mode).toBe("dnsrr");
  });

  it.each([
    ["not JSON", "{"],
    ["an unknown setting", JSON.stringify({ TaskTemplate: { ContainerSpec: { Privileged: true } } })],
    ["an unknown placement key", JSON.stringify({ Placement: { Constraints: ["a"], Evil: 1 } })],
    ["a bad update order", JSON.stringify({ UpdateConfig: { Parallelism: 1, Order: "random" } })],
    ["a bad ulimit", JSON.stringify({ Ulimits: [{ Name: "no file", Soft: 1, Hard: 1 }] })],
  ])("refuses %s with INVALID_ARGUMENT before touching Docker", async (_case, swarmSettingsJson) => {
    const { reply } = await deploy({
      name: `${prefix}-refused`,
      image: TEST_IMAGE,
      env: [],
      replicas: 1,
      networks: [NETWORK],
      swarmSettingsJson,
    });
    expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    await expect(docker.getService(`${prefix}-refused`).inspect()).rejects.toThrow();
  });
});

describe("cancelJob of a deploy", () => {
  it("stops waiting for a service that never gets healthy and answers CANCELLED", async () => {
    const name = `${prefix}-cancel`;
    services.push(name);
    const command: Init<DeployServiceCommand> & Pick<DeployServiceCommand, "jobId" | "logStreamId"> = {
      jobId: `deploy-${prefix}-cancel`,
      logStreamId: `deploy-stream-${prefix}-cancel`,
      spec: {
        name,
        image: TEST_IMAGE,
        env: [],
        command: ["sleep", "600"],
        replicas: 1,
        healthCheck: { test: ["CMD-SHELL", "exit 1"], intervalNs: 1_000_000_000, retries: 100 },
      },
      waitSeconds: 300,
      owner,
    };
    const pending = send({ command: "deployService", deployService: command });
    for (
      let attempt = 0;
      attempt < 100 && !logs.text(command.logStreamId).includes("creating service");
      attempt++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await send({ command: "cancelJob", cancelJob: { jobId: command.jobId } })).toMatchObject({
      cancelJob: { cancelled: true },
    });
    expect(await pending).toMatchObject({ result: "error", error: { code: "CANCELLED" } });
    expect(logs.forStream(command.logStreamId).at(-1)).toMatchObject({ final: true });
  }, 60_000);
});

describe("serviceAction", () => {
  const name = `${prefix}-act`;

  it("stops, starts, reloads and removes a service; a missing one is not found", async () => {
    const spec: SpecToSend = {
      name,
      image: TEST_IMAGE,
      env: [],
      command: ["httpd", "-f", "-p", "8080", "-h", "/www"],
      replicas: 1,
      files: { "/etc/app/.env": "A=1\n" },
    };
    const created = await deploy(spec);
    if (created.reply.result !== "deployService")
      throw new Error(`${JSON.stringify(created.reply)}\n${created.log}`);
    const inspect = async () =>
      (await docker.getService(name).inspect()) as {
        Spec: { Mode: { Replicated: { Replicas: number } }; TaskTemplate: { ForceUpdate?: number } };
      };
    const act = (action: "START" | "STOP" | "RELOAD" | "REMOVE", replicas?: number) =>
      send({ command: "serviceAction", serviceAction: { serviceName: name, action, replicas, owner } });

    expect(await act("STOP")).toMatchObject({ result: "serviceAction", serviceAction: { found: true } });
    expect((await inspect()).Spec.Mode.Replicated.Replicas).toBe(0);
    // A deploy of a stopped service brings it back with the new spec.
    const redeployed = await deploy({ ...spec, env: ["AFTER_STOP=1"] });
    expect(redeployed.reply).toMatchObject({
      result: "deployService",
      deployService: { created: false, runningTasks: 1 },
    });
    expect(await act("STOP")).toMatchObject({ serviceAction: { found: true } });
    expect(await act("START", 2)).toMatchObject({ serviceAction: { found: true } });
    expect((await inspect()).Spec.Mode.Replicated.Replicas).toBe(2);
    const before = (await inspect()).Spec.TaskTemplate.ForceUpdate ?? 0;
    expect(await act("RELOAD")).toMatchObject({ serviceAction: { found: true } });
    expect((await inspect()).Spec.TaskTemplate.ForceUpdate).toBe(before + 1);
    expect(existsSync(path.join(mainDirectory, "applications", name, "files"))).toBe(true);
    expect(await act("REMOVE")).toMatchObject({ serviceAction: { found: true } });
    await expect(docker.getService(name).inspect()).rejects.toThrow();
    expect(existsSync(path.join(mainDirectory, "applications", name))).toBe(false);
    for (const action of ["START", "STOP", "RELOAD", "REMOVE"] as const) {
      expect(await act(action)).toMatchObject({ result: "serviceAction", serviceAction: { found: false } });
    }
  }, 120_000);

  it.each([
    ["spec.name", { name: "bad;name" }],
    ["spec.image", { image: "Bad Image" }],
    ["spec.files", { files: { "/etc/../../x": "y" } }],
    ["spec.files", { files: { "relative/path": "y" } }],
    ["spec.env", { env: ["BAD KEY=1"] }],
    ["spec.networks", { networks: ["no-such-network-here"] }],
  ])("refuses a spec with a bad %s (INVALID_ARGUMENT, nothing created)", async (field, overrides) => {
    const name = `${prefix}-bad`;
    const { reply } = await deploy({
      name,
      image: TEST_IMAGE,
      env: [],
      replicas: 1,
      ...overrides,
    } as SpecToSend);
    expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    if (reply.result === "error") expect(reply.error.message.startsWith(`${field}: `)).toBe(true);
    await expect(docker.getService(name).inspect()).rejects.toThrow();
  });
});

describe("ownership labels", () => {
  const act = (serviceName: string, action: "START" | "STOP" | "RELOAD" | "REMOVE", as?: ResourceOwner) =>
    send({ command: "serviceAction", serviceAction: { serviceName, action, owner: as } });
  const replicasOf = async (name: string) =>
    ((await docker.getService(name).inspect()) as { Spec: { Mode: { Replicated: { Replicas: number } } } })
      .Spec.Mode.Replicated.Replicas;

  it("never takes over a service it did not create (FAILED_PRECONDITION, the service untouched)", async () => {
    const name = `${prefix}-foreign`;
    services.push(name);
    await createForeignService(name);
    const { reply } = await deploy({ name, image: TEST_IMAGE, env: ["TAKEN=1"], replicas: 1 });
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED_PRECONDITION" } });
    if (reply.result === "error") expect(reply.error.message).toContain(name);
    for (const action of ["STOP", "START", "RELOAD", "REMOVE"] as const) {
      expect(await act(name, action, owner)).toMatchObject({
        result: "error",
        error: { code: "FAILED_PRECONDITION" },
      });
    }
    const after = (await docker.getService(name).inspect()) as {
      Spec: { Labels?: Record<string, string>; TaskTemplate: { ContainerSpec: { Env?: string[] } } };
    };
    expect(after.Spec.TaskTemplate.ContainerSpec.Env ?? []).not.toContain("TAKEN=1");
    expect(after.Spec.Labels ?? {}).toEqual({});
    expect(await replicasOf(name)).toBe(1);
  }, 60_000);

  it("refuses another owner's service, and commands without an owner", async () => {
    const name = `${prefix}-owned`;
    const spec: SpecToSend = {
      name,
      image: TEST_IMAGE,
      env: [],
      command: ["sleep", "600"],
      replicas: 1,
      mounts: [{ type: "volume", source: `${prefix}-data`, target: "/data" }],
    };
    const created = await deploy(spec);
    if (created.reply.result !== "deployService")
      throw new Error(`${JSON.stringify(created.reply)}\n${created.log}`);
    const volume = (await docker.getVolume(`${prefix}-data`).inspect()) as { Labels: Record<string, string> };
    expect(volume.Labels).toMatchObject(ownershipLabels(owner));
    expect((await deploy({ ...spec, env: ["X=1"] }, 90, stranger)).reply).toMatchObject({
      error: { code: "FAILED_PRECONDITION" },
    });
    expect(await act(name, "STOP", stranger)).toMatchObject({ error: { code: "FAILED_PRECONDITION" } });
    expect(await act(name, "REMOVE", { ...owner, organizationId: stranger.organizationId })).toMatchObject({
      error: { code: "FAILED_PRECONDITION" },
    });
    expect(await act(name, "STOP")).toMatchObject({ error: { code: "INVALID_ARGUMENT" } });
    expect((await deploy(spec, 90, null)).reply).toMatchObject({ error: { code: "INVALID_ARGUMENT" } });
    expect(await replicasOf(name)).toBe(1);
    expect(await act(name, "REMOVE", owner)).toMatchObject({ serviceAction: { found: true } });
  }, 60_000);

  it("joins the platform network it was configured with, and no unlabelled network besides", async () => {
    // The production stack names its own network (install.sh's `<stack>-network`), unlabelled.
    const stackNetwork = `${prefix}-stack-network`;
    await docker.createNetwork({ Name: stackNetwork, Driver: "overlay", Attachable: true });
    try {
      const configured = new AgentCore({
        serverId,
        docker,
        mainDirectory,
        publishLogChunk: logs.publish,
        platformNetwork: stackNetwork,
      });
      const name = `${prefix}-stacked`;
      services.push(name);
      const spec: SpecToSend = { name, image: TEST_IMAGE, env: [], command: ["sleep", "600"], replicas: 1 };
      const joined = await configured.handle(
        asReceived(
          makeCommandRequest(
            serverId,
            {
              command: "deployService",
              deployService: {
                jobId: `deploy-${prefix}-stacked`,
                logStreamId: `deploy-stream-${prefix}-stacked`,
                spec: { ...spec, networks: [NETWORK] },
                waitSeconds: 90,
                owner,
              },
            },
            600_000,
          ),
        ),
      );
      expect(joined.result, JSON.stringify(joined)).toBe("deployService");
      const networkId = ((await docker.getNetwork(stackNetwork).inspect()) as { Id: string }).Id;
      const inspected = (await docker.getService(name).inspect()) as {
        Spec: { TaskTemplate: { Networks?: { Target: string }[] } };
      };
      expect(inspected.Spec.TaskTemplate.Networks?.map((network) => network.Target)).toEqual([networkId]);
      // An agent configured with the default platform network refuses that same unlabelled network.
      const { reply } = await deploy({ ...spec, name: `${prefix}-unlabelled`, networks: [stackNetwork] });
      expect(reply).toMatchObject({ result: "error", error: { code: "FAILED_PRECONDITION" } });
      if (reply.result === "error")
        expect(reply.error.message).toContain("does not belong to this organization");
      await dockerCli(["service", "rm", name]);
    } finally {
      // The removed service's task leaves the network asynchronously.
      for (let attempt = 0; attempt < 40; attempt++) {
        if (
          await docker
            .getNetwork(stackNetwork)
            .remove()
            .then(
              () => true,
              () => false,
            )
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }, 120_000);

  it("refuses a deploy onto a missing platform network with the command that creates it", async () => {
    // A machine whose network was never made (no installer; PLATFORM_LOCAL_PROXY=false) says how to fix it.
    const missing = `${prefix}-never-made`;
    const configured = new AgentCore({
      serverId,
      docker,
      mainDirectory,
      publishLogChunk: logs.publish,
      platformNetwork: missing,
    });
    const reply = await configured.handle(
      asReceived(
        makeCommandRequest(
          serverId,
          {
            command: "deployService",
            deployService: {
              jobId: `deploy-${prefix}-no-network`,
              logStreamId: `deploy-stream-${prefix}-no-network`,
              spec: {
                name: `${prefix}-no-network`,
                image: TEST_IMAGE,
                env: [],
                replicas: 1,
                networks: [NETWORK],
              },
              waitSeconds: 90,
              owner,
            },
          },
          600_000,
        ),
      ),
    );
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    if (reply.result === "error")
      expect(reply.error.message).toContain(`docker network create --driver overlay --attachable ${missing}`);
    await expect(docker.getService(`${prefix}-no-network`).inspect()).rejects.toThrow();
  });

  it("fails two replicas of one host-mode port on one node with Swarm's reason, long before its wait ends", async () => {
    const port = await freePort();
    // A wait far longer than the test's timeout: only the scheduler's refusal can end the deploy.
    const { reply, log } = await deploy(
      {
        name: `${prefix}-two-on-one`,
        image: TEST_IMAGE,
        env: [],
        command: ["httpd", "-f", "-p", "8080"],
        replicas: 2,
        networks: [NETWORK],
        ports: [{ publishedPort: port, targetPort: 8080, protocol: "tcp", publishMode: "host" }],
      },
      900,
    );
    expect(reply, log).toMatchObject({ result: "error", error: { code: "FAILED" } });
    if (reply.result === "error") {
      expect(reply.error.message).toMatch(/no suitable node \(host-mode port already in use on 1 node\)/);
      expect(reply.error.message).toContain("publish the port in ingress mode");
    }
  }, 120_000);

  it("refuses reserved and never-valid names; REMOVE of a never-valid one is nothing to remove", async () => {
    for (const name of ["platform-traefik", "Platform-agent", "..", "-rf", "--help", ".hidden", "a..b"]) {
      const { reply } = await deploy({ name, image: TEST_IMAGE, env: [], replicas: 1 });
      expect(reply, name).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    }
    for (const name of ["..", "-rf", "--help", ".hidden"]) {
      expect(await act(name, "STOP", owner), name).toMatchObject({ error: { code: "INVALID_ARGUMENT" } });
      expect(await act(name, "REMOVE", owner), name).toMatchObject({ serviceAction: { found: false } });
    }
    // REMOVE of ".." removed nothing of the main directory.
    expect(existsSync(mainDirectory)).toBe(true);
  });

  it("never mounts or removes a named volume labelled for someone else (issue 22, finding 9)", async () => {
    const foreignVolume = `${prefix}-theirs`;
    const ownVolume = `${prefix}-mine`;
    const labelArgs = (labels: Record<string, string>) =>
      Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);
    await dockerCli(["volume", "create", ...labelArgs(ownershipLabels(stranger)), foreignVolume]);
    try {
      const name = `${prefix}-vols`;
      const base: SpecToSend = { name, image: TEST_IMAGE, env: [], command: ["sleep", "600"], replicas: 1 };
      const mountsForeign = await deploy({
        ...base,
        mounts: [{ type: "volume", source: foreignVolume, target: "/data" }],
      });
      expect(mountsForeign.reply).toMatchObject({ error: { code: "FAILED_PRECONDITION" } });
      expect(await dockerCli(["service", "ls", "--quiet", "--filter", `name=${name}`])).toBe("");
      const created = await deploy({
        ...base,
        mounts: [{ type: "volume", source: ownVolume, target: "/data" }],
      });
      expect(created.reply.result, created.log).toBe("deployService");
      const removed = await send({
        command: "serviceAction",
        serviceAction: {
          serviceName: name,
          action: "REMOVE",
          owner,
          removeVolumes: [ownVolume, foreignVolume, `${prefix}-absent`],
        },
      });
      expect(removed).toMatchObject({
        serviceAction: { found: true, volumesRemoved: [ownVolume], volumesKept: [foreignVolume] },
      });
      expect(await dockerCli(["volume", "ls", "--quiet", "--filter", `name=${foreignVolume}`])).toBe(
        foreignVolume,
      );
    } finally {
      await dockerCli(["volume", "rm", "-f", foreignVolume, ownVolume]).catch(() => {});
    }
  }, 120_000);

  it("tears down a service whose name is valid only under the older appName rule (issue 22, finding 9)", async () => {
    // 'platform-' was allowed before the shared rule reserved it: such a service may still run.
    const name = `platform-old-${prefix}`.slice(0, 63);
    const labels = Object.entries(ownershipLabels(owner)).flatMap(([key, value]) => [
      "--label",
      `${key}=${value}`,
    ]);
    await dockerCli(["service", "create", "--detach", "--name", name, ...labels, TEST_IMAGE, "sleep", "600"]);
    services.push(name);
    // Creating under that name is refused; acting on the existing one is not.
    const { reply } = await deploy({ name, image: TEST_IMAGE, env: [], replicas: 1 });
    expect(reply).toMatchObject({ error: { code: "INVALID_ARGUMENT" } });
    expect(await act(name, "STOP", stranger)).toMatchObject({ error: { code: "FAILED_PRECONDITION" } });
    expect(await act(name, "STOP", owner)).toMatchObject({ serviceAction: { found: true } });
    expect(await act(name, "REMOVE", owner)).toMatchObject({ serviceAction: { found: true } });
    expect(await dockerCli(["service", "ls", "--quiet", "--filter", `name=${name}`])).toBe("");
  }, 60_000);
});
