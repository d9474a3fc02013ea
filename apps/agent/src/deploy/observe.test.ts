/**
 * observeServices against the real Docker Engine (Swarm): the deployment labels of the current
 * and previous spec, the update state, the tasks of the current spec, the newest task error,
 * a missing service, the jobs the agent runs, and a bad name refused.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  DEPLOYMENT_ID_LABEL,
  type Init,
  makeCommandRequest,
  type ObservedServices,
  type ServiceSpec,
} from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { createForeignService, dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../testing/docker.ts";
import { LogCollector } from "./test-support.ts";

const serverId = "observe-test";
const name = uniqueName("observe").toLowerCase();
let core: AgentCore;
let mainDirectory: string;

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 120_000)));
}

const owner = { organizationId: "org-observe-test", resource: `application:${name}` };

async function observe(serviceNames: string[], jobIds: string[] = []): Promise<ObservedServices> {
  const owners = Object.fromEntries(serviceNames.map((serviceName) => [serviceName, owner]));
  const reply = await send({ command: "observeServices", observeServices: { serviceNames, jobIds, owners } });
  if (reply.result !== "observedServices") throw new Error(JSON.stringify(reply));
  return reply.observedServices;
}

function spec(deploymentId: string, command: string[]): Init<ServiceSpec> {
  return {
    name,
    image: TEST_IMAGE,
    command,
    replicas: 1,
    labels: { [DEPLOYMENT_ID_LABEL]: deploymentId },
    networks: [],
    ports: [],
    env: [],
  };
}

async function deploy(deploymentId: string, command: string[]): Promise<CommandReply> {
  return send({
    command: "deployService",
    deployService: {
      jobId: deploymentId,
      logStreamId: `${deploymentId}-log`,
      spec: spec(deploymentId, command),
      waitSeconds: 60,
      owner,
    },
  });
}

beforeAll(async () => {
  const docker = await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "observe-test-"));
  core = new AgentCore({ serverId, docker, mainDirectory, publishLogChunk: new LogCollector().publish });
});

afterAll(async () => {
  await dockerCli(["service", "rm", name]).catch(() => {});
  await rm(mainDirectory, { recursive: true, force: true });
});

describe("observeServices", () => {
  it("describes a missing service and the agent's jobs", async () => {
    expect(await observe([name], ["no-such-job"])).toEqual({
      services: [
        {
          name,
          found: false,
          deploymentId: "",
          previousDeploymentId: "",
          image: "",
          updateState: "",
          updateMessage: "",
          desiredReplicas: 0,
          runningTasks: 0,
          taskError: "",
          outdatedTasks: 0,
          taskErrorDeploymentId: "",
          ownerMismatch: false,
        },
      ],
      activeJobs: [],
    });
  });

  it("shows the deployment a service runs, a job while it runs, and a rolled-back update with its cause", async () => {
    const first = await deploy("obs-d1", ["sh", "-c", "trap 'exit 0' TERM; sleep 600 & wait"]);
    expect(first.result, JSON.stringify(first)).toBe("deployService");
    expect((await observe([name])).services[0]).toMatchObject({
      found: true,
      deploymentId: "obs-d1",
      image: TEST_IMAGE,
      desiredReplicas: 1,
      runningTasks: 1,
      outdatedTasks: 0,
    });

    // A version whose task exits at once: Swarm rolls back to obs-d1.
    const second = deploy("obs-d2", ["sh", "-c", "echo broken >&2; exit 3"]);
    let sawJob = false;
    for (let i = 0; i < 40 && !sawJob; i++) {
      sawJob = (await observe([], ["obs-d2"])).activeJobs.includes("obs-d2");
      if (!sawJob) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(sawJob, "the running job is reported").toBe(true);
    const reply = await second;
    expect(reply.result).toBe("error");
    // The rolled-back task may still be starting when the reply comes: wait for it (bounded).
    let [rolledBack] = (await observe([name], ["obs-d2"])).services;
    for (let i = 0; i < 100 && rolledBack?.runningTasks !== 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      [rolledBack] = (await observe([name], ["obs-d2"])).services;
    }
    expect(rolledBack).toMatchObject({
      deploymentId: "obs-d1",
      updateState: "rollback_completed",
      runningTasks: 1,
      taskErrorDeploymentId: "obs-d2",
    });
    expect(rolledBack!.taskError).toMatch(/exit code 3|non-zero exit/);
    expect((await observe([], ["obs-d2"])).activeJobs).toEqual([]);
  }, 150_000);

  it("reports a service of that name labelled for someone else as ownerMismatch and nothing of it (issue 22, finding 9)", async () => {
    const foreign = uniqueName("observe-foreign").toLowerCase();
    await createForeignService(foreign);
    try {
      const [observed] = (await observe([foreign])).services;
      expect(observed).toEqual({
        name: foreign,
        found: true,
        ownerMismatch: true,
        deploymentId: "",
        previousDeploymentId: "",
        image: "",
        updateState: "",
        updateMessage: "",
        desiredReplicas: 0,
        runningTasks: 0,
        taskError: "",
        outdatedTasks: 0,
        taskErrorDeploymentId: "",
      });
      const ownerless = await send({
        command: "observeServices",
        observeServices: { serviceNames: [foreign], jobIds: [] },
      });
      expect(ownerless).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    } finally {
      await dockerCli(["service", "rm", foreign]).catch(() => {});
    }
  });

  it("refuses a name that is not an appName", async () => {
    const reply = await send({
      command: "observeServices",
      observeServices: { serviceNames: ["../etc"], jobIds: [] },
    });
    expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
  });
});
