/**
 * An outage longer than the watchdog (DEPLOYMENT_WATCHDOG_MS, 2 s here), with the real
 * processes (deploy-harness.ts): while NATS is stopped the control plane cannot observe the
 * agent, whose Swarm update goes on and completes. Nothing is known during the outage, so the
 * watchdog must not settle the deployment: it is settled from the first observation once NATS
 * is back, as done, and serves its version. And a SIGTERM while the agent does not answer
 * (its process stopped with SIGSTOP: requests time out rather than fail) ends cleanly and in
 * bounded time: work handed back, no row left running, exit 0.
 */
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { requireDocker } from "../../apps/agent/src/testing/docker.ts";
import { DeployFaultRig, type FaultApp } from "./deploy-harness.ts";

const rig = new DeployFaultRig();
let counter = 0;

beforeAll(async () => {
  await requireDocker();
  await rig.start({ DEPLOYMENT_WATCHDOG_MS: "2000" });
  await rig.createApp();
  await rig.createApp();
  await Promise.all(rig.apps.map((app) => deployAndExpectDone(app)));
}, 120_000);

afterAll(async () => {
  await rig.close();
}, 60_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.error(rig.processOutput()));
});

async function deployAndExpectDone(app: FaultApp, deploymentId?: string, version?: string): Promise<void> {
  if (!deploymentId) {
    version = `v${++counter}`;
    deploymentId = await rig.deploy(app, version);
  }
  await rig.until(
    `${deploymentId} final`,
    async () => {
      const deployment = (await rig.deployments(app)).find((row) => row.deploymentId === deploymentId);
      return deployment?.status === "done" || deployment?.status === "error";
    },
    110_000,
  );
  const deployment = (await rig.deployments(app)).find((row) => row.deploymentId === deploymentId);
  expect(deployment!.status, `${deploymentId}: ${deployment!.errorMessage}`).toBe("done");
  await rig.until(`${app.appName} to serve ${version}`, async () => {
    const observed = await rig.observed(app);
    return observed.deploymentId === deploymentId && observed.body === version;
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("an outage longer than the watchdog", () => {
  it("NATS stopped for 8 s in the middle of a deploy: the completed update is done, not an error", async () => {
    const started: Array<{ app: FaultApp; deploymentId: string; version: string }> = [];
    for (const app of rig.apps) {
      const version = `v${++counter}-outage`;
      started.push({ app, deploymentId: await rig.deploy(app, version), version });
    }
    await sleep(1800);
    await rig.nats.server.pause();
    await sleep(8000);
    await rig.nats.server.resume();
    for (const { app, deploymentId, version } of started)
      await deployAndExpectDone(app, deploymentId, version);
    await Promise.all(rig.apps.map((app) => deployAndExpectDone(app)));
  }, 240_000);

  it("SIGTERM while the agent does not answer: a bounded, clean stop (exit 0, work handed back)", async () => {
    const started: Array<{ app: FaultApp; deploymentId: string; version: string }> = [];
    for (const app of rig.apps) {
      const version = `v${++counter}-sigterm`;
      started.push({ app, deploymentId: await rig.deploy(app, version), version });
    }
    await sleep(1800);
    const agent = rig.agent!.child;
    agent.kill("SIGSTOP");
    try {
      // Long enough for a reconciliation pass and the deployments to wait on the silent agent.
      await sleep(2500);
      const stopMs = await rig.controlPlane.stop("SIGTERM");
      expect(rig.controlPlane.output.join("")).not.toContain("shutdown did not finish");
      expect(rig.controlPlane.exitCode, "the exit code after SIGTERM").toBe(0);
      expect(stopMs, "SIGTERM to exit").toBeLessThan(12_000);
      // Read from the database itself: the control plane is down.
      const client = new pg.Client({ connectionString: rig.database.url });
      await client.connect();
      try {
        const { rows } = await client.query(
          "select deployment_id, status from deployments where deployment_id = any($1)",
          [started.map((run) => run.deploymentId)],
        );
        expect(rows).toHaveLength(started.length);
        for (const row of rows) expect(row.status, `${row.deployment_id} after the stop`).not.toBe("running");
      } finally {
        await client.end();
      }
    } finally {
      agent.kill("SIGCONT");
    }
    await rig.controlPlane.start();
    for (const { app, deploymentId, version } of started)
      await deployAndExpectDone(app, deploymentId, version);
    await Promise.all(rig.apps.map((app) => deployAndExpectDone(app)));
  }, 240_000);
});
