/**
 * Rollbacks under a control plane kill -9 (issue 27), with the real processes of
 * deploy-harness.ts: an application deployed twice (v1, v2) is rolled back with rollback.rollback
 * and the control plane is killed at two moments (queued or starting; in the Swarm update). After
 * the restart the rollback deployment settles as Docker shows: never idle or running, and done
 * only when the Swarm service carries that deployment and serves the version rolled back to
 * (nothing in these rollbacks can fail by itself, so each ends done). The next deploy works.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { requireDocker } from "../../apps/agent/src/testing/docker.ts";
import { DeployFaultRig, type FaultApp } from "./deploy-harness.ts";

const rig = new DeployFaultRig();
let app: FaultApp;
/** The rollback of each version's deployment. */
const rollbackOf = new Map<string, string>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function deployDone(version: string): Promise<string> {
  const deploymentId = await rig.deploy(app, version);
  await waitFinal(deploymentId);
  const deployment = (await rig.deployments(app)).find((row) => row.deploymentId === deploymentId);
  expect(deployment?.status, deployment?.errorMessage ?? "").toBe("done");
  return deploymentId;
}

async function waitFinal(deploymentId: string): Promise<void> {
  await rig.until(`${deploymentId} final`, async () => {
    const deployment = (await rig.deployments(app)).find((row) => row.deploymentId === deploymentId);
    return deployment?.status === "done" || deployment?.status === "error";
  });
}

beforeAll(async () => {
  await requireDocker();
  await rig.start();
  app = await rig.createApp();
  for (const version of ["v1", "v2"]) {
    const deploymentId = await deployDone(version);
    const row = (await rig.api.queryOk("deployment.all", { applicationId: app.applicationId })).find(
      (item: { deploymentId: string }) => item.deploymentId === deploymentId,
    );
    expect(row?.rollbackId, `the rollback of ${version}`).toEqual(expect.any(String));
    rollbackOf.set(version, row.rollbackId);
  }
}, 180_000);

afterAll(async () => {
  await rig.close();
}, 60_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.error(rig.processOutput()));
});

describe("rollbacks under a control plane kill -9", () => {
  // Roll back to v1 first, then (the service runs v1) to v2: each case changes what runs.
  const cases = [
    { moment: 300, version: "v1" },
    { moment: 1800, version: "v2" },
  ];
  for (const { moment, version } of cases) {
    it(`kill -9 ${moment} ms into a rollback to ${version}: settles as the Swarm service shows`, async () => {
      const { deploymentId } = await rig.api.mutateOk<{ deploymentId: string }>("rollback.rollback", {
        rollbackId: rollbackOf.get(version),
      });
      await sleep(moment);
      await rig.controlPlane.stop("SIGKILL");
      await rig.controlPlane.start();
      await rig.until("every deployment final", () => rig.settled(), 110_000);
      const deployment = (await rig.deployments(app)).find((row) => row.deploymentId === deploymentId);
      expect(deployment, `rollback ${deploymentId} lost`).toBeDefined();
      expect(deployment!.status, `${deploymentId}: ${deployment!.errorMessage}`).toBe("done");
      // Done is what Docker shows: the service carries the rollback's deployment and serves its version.
      await rig.until(
        `${app.appName} to serve ${version} from ${deploymentId}`,
        async () => {
          const observed = await rig.observed(app);
          return observed.deploymentId === deploymentId && observed.body === version;
        },
        30_000,
      );
    }, 240_000);
  }

  it("deploys again after the rollbacks", async () => {
    const deploymentId = await deployDone("v3");
    await rig.until(
      `${app.appName} to serve v3`,
      async () => {
        const observed = await rig.observed(app);
        return observed.deploymentId === deploymentId && observed.body === "v3";
      },
      30_000,
    );
  }, 120_000);
});
