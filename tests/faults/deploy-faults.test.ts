/**
 * Deployments under faults, with the real processes (deploy-harness.ts): a control plane, an
 * enrolled agent, a private NATS with JetStream and JWT auth, and two applications on that
 * agent's server serving their VERSION on a host-mode port. Each fault hits a deploy of both
 * applications at two moments (early: queued or starting; later: in the Swarm update), is
 * undone, and then: no deployment is lost, none stays idle or running, a done deployment is
 * the one its service carries and serves, an error is not, and the next deploy of every
 * application succeeds. A drift test scales a service to 0 behind the platform's back.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dockerCli, requireDocker } from "../../apps/agent/src/testing/docker.ts";
import { DeployFaultRig, deployFaults, type FaultApp, SERVING_COMMAND } from "./deploy-harness.ts";

const rig = new DeployFaultRig();
/** What each application serves after its last successful deployment. */
const serving = new Map<string, string>();
let counter = 0;

beforeAll(async () => {
  await requireDocker();
  await rig.start();
  await rig.createApp();
  await rig.createApp();
  await Promise.all(rig.apps.map(deployAndExpectDone));
}, 120_000);

afterAll(async () => {
  await rig.close();
}, 60_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.error(rig.processOutput()));
});

function nextVersion(label: string): string {
  counter++;
  return `v${counter}-${label}`;
}

async function deployAndExpectDone(app: FaultApp): Promise<void> {
  const version = nextVersion("next");
  const deploymentId = await rig.deploy(app, version);
  await rig.until(`${deploymentId} done`, async () => {
    const deployment = (await rig.deployments(app)).find((row) => row.deploymentId === deploymentId);
    if (deployment?.status === "error") throw new Error(`failed: ${deployment.errorMessage}`);
    return deployment?.status === "done";
  });
  await expectServes(app, deploymentId, version);
}

async function expectServes(app: FaultApp, deploymentId: string, version: string): Promise<void> {
  await rig.until(
    `${app.appName} to serve ${version}`,
    async () => {
      const observed = await rig.observed(app);
      return observed.deploymentId === deploymentId && observed.body === version;
    },
    30_000,
  );
  serving.set(app.applicationId, version);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Delays after the deploy call: queued or starting, and in the middle of the Swarm update. */
const moments = [300, 1800];

describe("deployments under faults", () => {
  for (const fault of deployFaults(rig)) {
    for (const moment of moments) {
      it(`${fault.name}, ${moment} ms into a deploy`, async () => {
        const started: Array<{ app: FaultApp; deploymentId: string; version: string }> = [];
        for (const app of rig.apps) {
          const version = nextVersion(`${moment}`);
          started.push({ app, deploymentId: await rig.deploy(app, version), version });
        }
        await sleep(moment);
        await fault.run();
        if (fault.name.includes("SIGTERM")) {
          expect(rig.controlPlane.output.join("")).not.toContain("shutdown did not finish");
          expect(rig.lastStopMs, "SIGTERM to exit").toBeLessThan(15_000);
          expect(rig.lastStopExitCode, "the exit code after SIGTERM").toBe(0);
        }

        await rig.until("every deployment final", () => rig.settled(), 110_000);
        for (const { app, deploymentId, version } of started) {
          const deployments = await rig.deployments(app);
          const deployment = deployments.find((row) => row.deploymentId === deploymentId);
          expect(deployment, `deployment ${deploymentId} lost`).toBeDefined();
          // Nothing in these deploys can fail by itself: each ends done once the fault is undone
          // (the agent's lost job is sent again, a lost reply is read from Docker, a handed-back
          // job runs again), and serves its version.
          expect(deployment!.status, `${deploymentId}: ${deployment!.errorMessage}`).toBe("done");
          await expectServes(app, deploymentId, version);
        }
        await Promise.all(rig.apps.map(deployAndExpectDone));
      }, 240_000);
    }
  }

  it("an update that rolls back while the control plane is killed is an error with the task's cause after the restart", async () => {
    const app = rig.apps[1]!;
    const setCommand = (command: string) =>
      rig.api.mutateOk("application.update", { applicationId: app.applicationId, command });
    await setCommand("sh -c 'echo broken >&2; exit 3'");
    const deploymentId = await rig.deploy(app, nextVersion("broken"));
    await sleep(1500);
    await rig.controlPlane.stop("SIGKILL");
    await rig.controlPlane.start();
    await rig.until("every deployment final", () => rig.settled(), 110_000);
    const deployment = (await rig.deployments(app)).find((row) => row.deploymentId === deploymentId);
    expect(deployment).toMatchObject({ status: "error" });
    expect(deployment!.errorMessage).toMatch(/did not start.*(exit code 3|non-zero exit)/);
    expect((await rig.observed(app)).deploymentId).not.toBe(deploymentId);
    // The previous version serves again (its task may still be starting after the rollback).
    await rig.until(
      "the previous version to serve",
      async () => (await rig.observed(app)).body === serving.get(app.applicationId),
      20_000,
    );
    await setCommand(SERVING_COMMAND);
    await deployAndExpectDone(app);
  }, 180_000);

  it("a service scaled to 0 behind the platform's back turns the application to error, and back to done when it runs again", async () => {
    const [app] = rig.apps as [FaultApp];
    const status = async () => rig.api.queryOk("application.one", { applicationId: app.applicationId });
    expect(await status()).toMatchObject({ applicationStatus: "done", applicationStatusMessage: null });

    await dockerCli(["service", "scale", "--detach", `${app.appName}=0`]);
    await rig.until("the drift to show", async () => {
      const one = await status();
      return one.applicationStatus === "error" && /scaled to 0/.test(one.applicationStatusMessage ?? "");
    });

    await dockerCli(["service", "scale", "--detach", `${app.appName}=1`]);
    await rig.until("the application to be done again", async () => {
      const one = await status();
      return one.applicationStatus === "done" && one.applicationStatusMessage === null;
    });

    // A removed service: error, and a deploy brings it back.
    await dockerCli(["service", "rm", app.appName]);
    await rig.until("the missing service to show", async () => {
      const one = await status();
      return one.applicationStatus === "error" && /missing/.test(one.applicationStatusMessage ?? "");
    });
    await deployAndExpectDone(app);
    expect(await status()).toMatchObject({ applicationStatus: "done", applicationStatusMessage: null });
  }, 120_000);
});
