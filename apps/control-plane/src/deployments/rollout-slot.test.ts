/**
 * DEPLOYMENT_CONCURRENCY bounds builds, not Swarm rollouts: with a limit of 1, an application
 * whose service waits to start (its host port is taken by a service made outside the platform,
 * so Swarm keeps its task pending) does not keep another application's prebuilt image from
 * being deployed meanwhile. Real Docker Swarm and NATS, as the pipeline tests.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeDeployedApps,
  requireDocker,
  TEST_IMAGE,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
let mainDirectory: string;
const services: string[] = [];

const ok = (name: string, input: Record<string, unknown>) =>
  platform.mutateOk(name, input, { token: owner.token });

async function imageApp(name: string, publishedPort: number): Promise<string> {
  const appName = uniqueName(`slot-${name}`);
  services.push(appName);
  const { applicationId } = await ok("application.create", { name, environmentId, appName });
  await ok("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
  await ok("application.update", { applicationId, command: "sleep 3600" });
  await ok("port.create", { applicationId, publishedPort, targetPort: 8080 });
  return applicationId;
}

const deploymentStatus = async (deploymentId: string) =>
  (
    await platform.ctx.db
      .selectFrom("deployments")
      .select("status")
      .where("deploymentId", "=", deploymentId)
      .executeTakeFirstOrThrow()
  ).status;

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "slot-rollout-"));
  platform = await startTestPlatform(
    {},
    { agents: { localAgent: { mainDirectory } }, deployments: { concurrency: 1 } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Slots" });
  environmentId = project.environment.environmentId;
});

afterAll(async () => {
  await removeDeployedApps(services);
  await platform?.close();
  await rm(mainDirectory, { recursive: true, force: true });
});

it("a rollout waiting for Swarm does not hold the only deployment slot", async () => {
  const takenPort = await freePort();
  const blocker = uniqueName("slot-blocker");
  services.push(blocker);
  await dockerCli([
    "service",
    "create",
    "--detach",
    "--name",
    blocker,
    "--publish",
    `mode=host,published=${takenPort},target=8080`,
    TEST_IMAGE,
    "sleep",
    "3600",
  ]);
  const waiting = await imageApp("waiting", takenPort);
  const free = await imageApp("free", await freePort());
  const first = await ok("application.deploy", { applicationId: waiting });
  await expect.poll(() => deploymentStatus(first.deploymentId), { timeout: 30_000 }).toBe("running");
  const second = await ok("application.deploy", { applicationId: free });
  const done = await platform.waitForDeployment(second.deploymentId, 60_000);
  expect(done.status, done.errorMessage ?? "").toBe("done");
  // The first one still waits for its task to start: the second did not wait for it.
  expect(await deploymentStatus(first.deploymentId)).toBe("running");
  await ok("deployment.killProcess", { deploymentId: first.deploymentId }).catch(() => {});
}, 120_000);
