/**
 * `pnpm bench:faults`: per fault of tests/faults/deploy-harness.ts (agent kill -9, NATS
 * stopped, control-plane kill -9, control-plane SIGTERM), the time from the fault being undone
 * to the platform settled: every deployment final and each application's service carrying and
 * serving its last successful deployment. Each round deploys two applications and injects the
 * fault 1 s into the deploy; the median of BENCH_ROUNDS (default 3) rounds is printed. Needs
 * what the tests need (Postgres, Docker Swarm, the local test images, nats-server).
 */
import { DeployFaultRig, deployFaults, type FaultApp } from "../tests/faults/deploy-harness.ts";

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const FAULT_DELAY_MS = 1000;
const SETTLE_TIMEOUT_MS = 180_000;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const rig = new DeployFaultRig();
let version = 0;

/** True when every app's service carries its newest done deployment and serves its version. */
async function serving(expected: Map<string, string>): Promise<boolean> {
  for (const app of rig.apps) {
    const done = (await rig.deployments(app)).find((deployment) => deployment.status === "done");
    if (!done) return false;
    const observed = await rig.observed(app);
    if (observed.deploymentId !== done.deploymentId) return false;
    const wanted = expected.get(done.deploymentId);
    if (wanted !== undefined && observed.body !== wanted) return false;
  }
  return true;
}

async function deployAll(expected: Map<string, string>): Promise<void> {
  for (const app of rig.apps) {
    version++;
    const deploymentId = await rig.deploy(app, `v${version}`);
    expected.set(deploymentId, `v${version}`);
  }
}

async function main(): Promise<void> {
  await rig.start({ RECONCILE_INTERVAL_MS: "5000" });
  const apps: FaultApp[] = [await rig.createApp(), await rig.createApp()];
  const expected = new Map<string, string>();
  await deployAll(expected);
  await rig.until(
    "the first deploys",
    async () => (await rig.settled()) && (await serving(expected)),
    120_000,
  );
  console.log(
    `bench:faults: ${apps.length} applications, fault ${FAULT_DELAY_MS} ms into a deploy, ${rounds} rounds`,
  );
  for (const fault of deployFaults(rig)) {
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      await deployAll(expected);
      await new Promise((resolve) => setTimeout(resolve, FAULT_DELAY_MS));
      await fault.run();
      const undone = performance.now();
      await rig.until(
        `settled after ${fault.name}`,
        async () => (await rig.settled()) && (await serving(expected)),
        SETTLE_TIMEOUT_MS,
      );
      times.push(performance.now() - undone);
    }
    console.log(
      `${fault.name.padEnd(36)} median ${(median(times) / 1000).toFixed(1)} s  (${times.map((ms) => (ms / 1000).toFixed(1)).join(", ")})`,
    );
  }
}

main()
  .catch((error) => {
    console.error(error);
    console.error(rig.processOutput());
    process.exitCode = 1;
  })
  .finally(() => rig.close());
