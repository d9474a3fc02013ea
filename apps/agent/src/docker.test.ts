/**
 * AgentCore against the real Docker Engine (start it with scripts/docker-setup.sh and build
 * the test image with scripts/build-test-images.sh): validate reports the engine as it is,
 * and list / inspect / restart work on a container started here.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  makeCommandRequest,
} from "@platform/agent-protocol";
import { applicationOwner, ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "./core.ts";
import { SWARM_SERVICE_LABEL } from "./docker/containers.ts";
import {
  dockerCli,
  removeContainer,
  requireDocker,
  runTestContainer,
  TEST_IMAGE,
  uniqueName,
} from "./testing/docker.ts";

const serverId = "docker-test";
let docker: Docker;
let core: AgentCore;
let mainDirectory: string;
const containerName = uniqueName("agent-test-httpd");
const composeProject = uniqueName("agent-test-shop");
let containerId: string;
/** The container started here carries no ownership labels: an administrator's scope sees it. */
const unmanagedScope = { organizationId: "org-admin", includeUnmanaged: true };

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 30_000)));
}

beforeAll(async () => {
  docker = await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "agent-main-"));
  core = new AgentCore({ serverId, docker, mainDirectory, toolSearchPath: "/nonexistent" });
  containerId = await runTestContainer(containerName, ["httpd", "-f", "-p", "8080"], {
    "com.docker.compose.project": composeProject,
  });
});

afterAll(async () => {
  if (containerId) await removeContainer(containerId);
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

describe("validate_server on the real engine", () => {
  it("reports Docker, Swarm, the platform network and the main directory as they are", async () => {
    const reply = await send({ command: "validateServer", validateServer: {} });
    if (reply.result !== "validateServer") throw new Error(JSON.stringify(reply));
    const engineVersion = await dockerCli(["version", "--format", "{{.Server.Version}}"]);
    const swarmState = await dockerCli(["info", "--format", "{{.Swarm.LocalNodeState}}"]);
    const networkDriver = await dockerCli([
      "network",
      "inspect",
      "--format",
      "{{.Driver}}",
      "platform-network",
    ]).catch(() => "");
    expect(reply.validateServer).toEqual({
      docker: { enabled: true, version: engineVersion },
      rclone: { enabled: false },
      nixpacks: { enabled: false },
      buildpacks: { enabled: false },
      railpack: { enabled: false },
      isPlatformNetworkInstalled: networkDriver === "overlay",
      isSwarmInstalled: swarmState === "active",
      isMainDirectoryInstalled: true,
      buildx: expect.objectContaining({ enabled: expect.any(Boolean) }),
      // Tools are looked up on toolSearchPath (/nonexistent here): tools.test.ts finds Compose.
      compose: { enabled: false },
    });
    // scripts/docker-setup.sh makes both true; say so if the engine was set up otherwise.
    expect(swarmState, "run scripts/docker-setup.sh to join a swarm").toBe("active");
    expect(networkDriver, "run scripts/docker-setup.sh to create platform-network").toBe("overlay");
  });

  it("reports a missing main directory", async () => {
    const other = new AgentCore({ serverId, docker, mainDirectory: path.join(mainDirectory, "absent") });
    const reply = await other.handle(
      asReceived(makeCommandRequest(serverId, { command: "validateServer", validateServer: {} }, 30_000)),
    );
    expect(reply.result === "validateServer" && reply.validateServer.isMainDirectoryInstalled).toBe(false);
  });
});

describe("containers on the real engine", () => {
  it("lists a running container with its names, image, state and labels", async () => {
    const reply = await send({ command: "listContainers", listContainers: {} });
    if (reply.result !== "containers") throw new Error(JSON.stringify(reply));
    const container = reply.containers.containers.find((candidate) => candidate.id === containerId);
    expect(container).toMatchObject({
      id: containerId,
      names: [containerName],
      image: TEST_IMAGE,
      state: "running",
      labels: { "platform.test": "agent", "com.docker.compose.project": composeProject },
    });
    expect(container!.status).toMatch(/^Up/);
    expect(container!.createdUnix).toBeGreaterThan(1_600_000_000);
  });

  it("filters by name substring and by labels", async () => {
    const byName = await send({
      command: "listContainers",
      listContainers: { nameMatch: containerName.slice(0, -3) },
    });
    expect(byName.result === "containers" && byName.containers.containers.map((c) => c.id)).toEqual([
      containerId,
    ]);
    const byProject = await send({
      command: "listContainers",
      listContainers: { composeProject },
    });
    expect(byProject.result === "containers" && byProject.containers.containers.map((c) => c.id)).toEqual([
      containerId,
    ]);
    const byLabel = await send({
      command: "listContainers",
      listContainers: { labels: { "platform.test": "", "com.docker.compose.project": composeProject } },
    });
    expect(byLabel.result === "containers" && byLabel.containers.containers.map((c) => c.id)).toEqual([
      containerId,
    ]);
    const byStack = await send({
      command: "listContainers",
      listContainers: { stackNamespace: composeProject },
    });
    expect(byStack.result === "containers" && byStack.containers.containers).toEqual([]);
  });

  it("inspects a container by name and returns Docker's inspect JSON", async () => {
    const reply = await send({
      command: "inspectContainer",
      inspectContainer: { containerId: containerName, scope: unmanagedScope },
    });
    if (reply.result !== "containerConfig") throw new Error(JSON.stringify(reply));
    expect(reply.containerConfig).toMatchObject({ id: containerId, name: containerName });
    const inspected = JSON.parse(reply.containerConfig.inspectJson);
    expect(inspected.Config.Image).toBe(TEST_IMAGE);
    expect(inspected.Config.Cmd).toEqual(["httpd", "-f", "-p", "8080"]);
  });

  it("restarts a container: its StartedAt changes", async () => {
    const before = await dockerCli(["inspect", "--format", "{{.State.StartedAt}}", containerId]);
    const reply = await send({
      command: "restartContainer",
      restartContainer: { containerId, stopTimeoutSeconds: 1, scope: unmanagedScope },
    });
    if (reply.result !== "restartContainer") throw new Error(JSON.stringify(reply));
    const after = await dockerCli(["inspect", "--format", "{{.State.StartedAt}}", containerId]);
    expect(after).not.toBe(before);
    expect(reply.restartContainer).toEqual({ id: containerId, startedAt: after });
    expect(await dockerCli(["inspect", "--format", "{{.State.Running}}", containerId])).toBe("true");
  });

  it("answers NOT_FOUND for a container that does not exist", async () => {
    const reply = await send({
      command: "restartContainer",
      restartContainer: { containerId: uniqueName("absent"), scope: unmanagedScope },
    });
    expect(reply).toMatchObject({ result: "error", error: { code: "NOT_FOUND" } });
    const inspect = await send({
      command: "inspectContainer",
      inspectContainer: { containerId: uniqueName("absent"), scope: unmanagedScope },
    });
    expect(inspect).toMatchObject({
      result: "error",
      error: { code: "NOT_FOUND", message: expect.stringMatching(/No such container/i) },
    });
  });
});

describe("the agent's own ownership check of container commands (issue 22, finding 9)", () => {
  const ownLabels = { ...ownershipLabels(applicationOwner("org-a", "app-a")) };
  const started: string[] = [];
  let own: string;
  let foreign: string;
  let internal: string;
  let unmanaged: string;
  const serviceA = uniqueName("stats-a");
  const serviceB = uniqueName("stats-b");

  beforeAll(async () => {
    const sleep = ["sleep", "300"];
    own = await runTestContainer(uniqueName("scope-own"), sleep, {
      ...ownLabels,
      [SWARM_SERVICE_LABEL]: serviceA,
    });
    foreign = await runTestContainer(uniqueName("scope-foreign"), sleep, {
      ...ownershipLabels(applicationOwner("org-b", "app-b")),
      [SWARM_SERVICE_LABEL]: serviceB,
    });
    internal = await runTestContainer(uniqueName("scope-internal"), sleep, { "platform.internal": "true" });
    unmanaged = await runTestContainer(uniqueName("scope-unmanaged"), sleep);
    started.push(own, foreign, internal, unmanaged);
  });

  afterAll(async () => {
    for (const id of started) await removeContainer(id);
  });

  const startedAt = (id: string) => dockerCli(["inspect", "--format", "{{.State.StartedAt}}", id]);

  it("inspect and restart refuse another organization's container as NOT_FOUND and leave it running", async () => {
    const before = await startedAt(foreign);
    const scope = { organizationId: "org-a", includeUnmanaged: true };
    const inspect = await send({
      command: "inspectContainer",
      inspectContainer: { containerId: foreign, scope },
    });
    expect(inspect).toMatchObject({ result: "error", error: { code: "NOT_FOUND" } });
    const restart = await send({
      command: "restartContainer",
      restartContainer: { containerId: foreign, stopTimeoutSeconds: 1, scope },
    });
    expect(restart).toMatchObject({ result: "error", error: { code: "NOT_FOUND" } });
    expect(await startedAt(foreign)).toBe(before);
    // Answered in the engine's words for a missing container: the two cannot be told apart.
    const absent = uniqueName("absent");
    const missing = await send({
      command: "inspectContainer",
      inspectContainer: { containerId: absent, scope },
    });
    if (inspect.result !== "error" || missing.result !== "error") throw new Error("expected errors");
    expect(inspect.error.message.replace(foreign, "<id>")).toBe(
      missing.error.message.replace(absent, "<id>"),
    );
    const ownInspect = await send({
      command: "inspectContainer",
      inspectContainer: { containerId: own, scope },
    });
    expect(ownInspect).toMatchObject({ result: "containerConfig", containerConfig: { id: own } });
  });

  it("an unmanaged container is reached only with the explicit includeUnmanaged scope, the platform's own never", async () => {
    const memberScope = { organizationId: "org-a", includeUnmanaged: false };
    const adminScope = { organizationId: "org-a", includeUnmanaged: true };
    const asMember = await send({
      command: "inspectContainer",
      inspectContainer: { containerId: unmanaged, scope: memberScope },
    });
    expect(asMember).toMatchObject({ result: "error", error: { code: "NOT_FOUND" } });
    const asAdmin = await send({
      command: "inspectContainer",
      inspectContainer: { containerId: unmanaged, scope: adminScope },
    });
    expect(asAdmin).toMatchObject({ result: "containerConfig", containerConfig: { id: unmanaged } });
    const before = await startedAt(internal);
    const platformOwn = await send({
      command: "restartContainer",
      restartContainer: { containerId: internal, stopTimeoutSeconds: 1, scope: adminScope },
    });
    expect(platformOwn).toMatchObject({ result: "error", error: { code: "NOT_FOUND" } });
    expect(await startedAt(internal)).toBe(before);
  });

  it("inspect and restart without a scope are refused before Docker acts", async () => {
    const before = await startedAt(own);
    const restart = await send({ command: "restartContainer", restartContainer: { containerId: own } });
    expect(restart).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    const inspect = await send({ command: "inspectContainer", inspectContainer: { containerId: own } });
    expect(inspect).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    expect(await startedAt(own)).toBe(before);
  });

  it("containerStats samples only a service whose containers carry the command's owner", async () => {
    const owner = applicationOwner("org-a", "app-a");
    const mine = await send({
      command: "containerStats",
      containerStats: { swarmServiceName: serviceA, owner },
    });
    expect(mine.result === "containerStats" && mine.containerStats.containers.map((c) => c.id)).toEqual([
      own,
    ]);
    const theirs = await send({
      command: "containerStats",
      containerStats: { swarmServiceName: serviceB, owner },
    });
    expect(theirs).toMatchObject({ result: "error", error: { code: "FAILED_PRECONDITION" } });
    const ownerless = await send({
      command: "containerStats",
      containerStats: { swarmServiceName: serviceA },
    });
    expect(ownerless).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
  });
});
