/**
 * Compose stack deployments under faults, with the real processes of deploy-harness.ts (a
 * control plane, an enrolled agent, a private NATS with JetStream): a kill -9 of the agent in the
 * middle of a `stack` deploy, and of the control plane in the middle of a `docker-compose`
 * deploy, and of the control plane in the middle of a stack's rollback (rollback.rollback). Each
 * ends settled (no deployment idle or running) as what Docker shows: done, the stack's status
 * done, and every service of the file running with the deployment's (or rollback's) file.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { DeployFaultRig } from "./deploy-harness.ts";

const BUSYBOX = "platform-test/busybox:latest";
const rig = new DeployFaultRig();
const stacks: Array<{ appName: string; composeType: string }> = [];

/** Two services whose command carries `marker` (what the deployed file said). */
const file = (marker: string) => `services:
  web:
    image: ${BUSYBOX}
    command: ["sh", "-c", "trap 'exit 0' TERM; echo ${marker}; while true; do sleep 1; done"]
  worker:
    image: ${BUSYBOX}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;

async function createStack(
  composeType: "stack" | "docker-compose",
): Promise<{ composeId: string; appName: string }> {
  const appName = uniqueName("faults-st").replace(/_/g, "-");
  stacks.push({ appName, composeType });
  const created = await rig.api.mutateOk("compose.create", {
    name: appName,
    appName,
    environmentId: rig.environmentId,
    serverId: rig.serverId,
    composeType,
    composeFile: file("first"),
  });
  return { composeId: created.composeId, appName };
}

async function deploymentsOf(composeId: string) {
  return rig.api.queryOk<Array<{ deploymentId: string; status: string; errorMessage: string | null }>>(
    "deployment.allByCompose",
    { composeId },
  );
}

async function settledAndDone(composeId: string, deploymentId: string): Promise<void> {
  await rig.until(
    "every deployment of the stack final",
    async () =>
      (await deploymentsOf(composeId)).every((row) => row.status !== "idle" && row.status !== "running"),
    60_000,
  );
  const deployment = (await deploymentsOf(composeId)).find((row) => row.deploymentId === deploymentId);
  expect(deployment, `deployment ${deploymentId} lost`).toBeDefined();
  expect(deployment!.status, `${deploymentId}: ${deployment!.errorMessage}`).toBe("done");
  expect((await rig.api.queryOk("compose.one", { composeId })).composeStatus).toBe("done");
}

/** What Docker runs of the stack: `<service> <running>` per service, and the web command. */
async function swarmShows(appName: string): Promise<{ replicas: string; command: string }> {
  const replicas = await dockerCli([
    "service",
    "ls",
    "--filter",
    `label=com.docker.stack.namespace=${appName}`,
    "--format",
    "{{.Name}} {{.Replicas}}",
  ]);
  const command = await dockerCli([
    "service",
    "inspect",
    `${appName}_web`,
    "--format",
    "{{json .Spec.TaskTemplate.ContainerSpec.Args}}",
  ]);
  return { replicas: replicas.split("\n").sort().join(", "), command };
}

async function composeShows(appName: string): Promise<{ states: string; command: string }> {
  const states = await dockerCli([
    "ps",
    "-a",
    "--filter",
    `label=com.docker.compose.project=${appName}`,
    "--format",
    "{{.Names}} {{.State}}",
  ]);
  const command = await dockerCli(["inspect", `${appName}_web`, "--format", "{{json .Config.Cmd}}"]);
  return { states: states.split("\n").sort().join(", "), command };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", BUSYBOX]);
  await rig.start();
}, 120_000);

afterAll(async () => {
  await rig.close();
  for (const { appName, composeType } of stacks) {
    if (composeType === "stack") {
      await dockerCli(["stack", "rm", appName]).catch(() => {});
      continue;
    }
    const ids = await dockerCli(["ps", "-aq", "--filter", `label=com.docker.compose.project=${appName}`]);
    for (const id of ids.split("\n").filter(Boolean)) await dockerCli(["rm", "-f", id]).catch(() => {});
    await dockerCli(["network", "rm", `${appName}_default`]).catch(() => {});
  }
}, 60_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.error(rig.processOutput()));
});

describe("compose stack deployments under faults", () => {
  it("agent kill -9 in the middle of a stack deploy: done, every service running the deployed file", async () => {
    const { composeId, appName } = await createStack("stack");
    const { deploymentId } = await rig.api.mutateOk("compose.deploy", { composeId });
    await rig.until("the stack's first service", async () => (await swarmShows(appName)).replicas !== "");
    await rig.killAgent();
    await sleep(1000);
    rig.startAgent();
    await settledAndDone(composeId, deploymentId);
    const shown = await swarmShows(appName);
    expect(shown.replicas).toBe(`${appName}_web 1/1, ${appName}_worker 1/1`);
    expect(shown.command).toContain("echo first");
  }, 90_000);

  it("control plane kill -9 in the middle of a docker-compose deploy: done after the restart, as Docker shows", async () => {
    const { composeId, appName } = await createStack("docker-compose");
    const { deploymentId } = await rig.api.mutateOk("compose.deploy", { composeId });
    await rig.until("the deployment running", async () =>
      (await deploymentsOf(composeId)).some((row) => row.status === "running"),
    );
    await sleep(500);
    await rig.controlPlane.stop("SIGKILL");
    await rig.controlPlane.start();
    await settledAndDone(composeId, deploymentId);
    const shown = await composeShows(appName);
    expect(shown.states).toBe(`${appName}_web running, ${appName}_worker running`);
    expect(shown.command).toContain("echo first");
  }, 150_000);

  it("control plane kill -9 in the middle of a stack's rollback: done after the restart, running the rolled-back file", async () => {
    const { composeId, appName } = await createStack("stack");
    const deploy = async () => {
      const { deploymentId } = await rig.api.mutateOk("compose.deploy", { composeId });
      await settledAndDone(composeId, deploymentId);
      return deploymentId;
    };
    const first = await deploy();
    await rig.api.mutateOk("compose.update", { composeId, composeFile: file("second") });
    await deploy();
    expect((await swarmShows(appName)).command).toContain("echo second");
    const rollbackId = (await deploymentsOf(composeId)).find(
      (row) => row.deploymentId === first,
    ) as unknown as { rollbackId: string | null };
    expect(rollbackId.rollbackId).toEqual(expect.any(String));
    const { deploymentId } = await rig.api.mutateOk("rollback.rollback", {
      rollbackId: rollbackId.rollbackId,
    });
    await rig.until("the rollback running", async () =>
      (await deploymentsOf(composeId)).some(
        (row) => row.deploymentId === deploymentId && row.status === "running",
      ),
    );
    await sleep(500);
    await rig.controlPlane.stop("SIGKILL");
    await rig.controlPlane.start();
    await settledAndDone(composeId, deploymentId);
    await rig.until("the web service to run the first file", async () => {
      const shown = await swarmShows(appName);
      return (
        shown.command.includes("echo first") && shown.replicas === `${appName}_web 1/1, ${appName}_worker 1/1`
      );
    });
  }, 240_000);
});
