/**
 * Test helpers for the real Docker Engine: a client that fails with a clear hint when the
 * engine or the test image is missing, and throwaway containers that are removed afterwards.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type Docker from "dockerode";
import { createDockerClient, DEFAULT_DOCKER_SOCKET } from "../docker/engine.ts";

const run = promisify(execFile);

export const TEST_DOCKER_SOCKET = process.env.AGENT_DOCKER_SOCKET ?? DEFAULT_DOCKER_SOCKET;
export const TEST_IMAGE = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";

/** A client for the local engine; throws "run scripts/docker-setup.sh" when it is not reachable. */
export async function requireDocker(): Promise<Docker> {
  const docker = createDockerClient(TEST_DOCKER_SOCKET, 30_000);
  try {
    await docker.ping();
  } catch (error) {
    throw new Error(
      `the Docker Engine is not reachable at ${TEST_DOCKER_SOCKET} (${(error as Error).message}): run scripts/docker-setup.sh`,
    );
  }
  try {
    await docker.getImage(TEST_IMAGE).inspect();
  } catch {
    throw new Error(`the test image ${TEST_IMAGE} is missing: run scripts/build-test-images.sh`);
  }
  return docker;
}

/** Runs the docker CLI (argv, no shell) and returns its trimmed stdout. */
export async function dockerCli(args: string[]): Promise<string> {
  const { stdout } = await run("docker", args, {
    env: { ...process.env, DOCKER_HOST: `unix://${TEST_DOCKER_SOCKET}` },
  });
  return stdout.trim();
}

/** Starts `docker run -d --name <name> [--label k=v]... <image> <command...>`; returns the id. */
export async function runTestContainer(
  name: string,
  command: string[],
  labels: Record<string, string> = {},
): Promise<string> {
  const labelArgs = Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);
  return dockerCli([
    "run",
    "-d",
    "--name",
    name,
    "--label",
    "platform.test=agent",
    ...labelArgs,
    TEST_IMAGE,
    ...command,
  ]);
}

/** A sleeping test container without a network (for what reads its stats, not its traffic). */
export async function runSleepingContainer(name: string, extra: string[] = []): Promise<string> {
  return dockerCli([
    "run",
    "-d",
    "--network",
    "none",
    "--name",
    name,
    "--label",
    "platform.test=agent",
    ...extra,
    TEST_IMAGE,
    "sleep",
    "600",
  ]);
}

/** A one-replica Swarm service of `image` without the platform's labels, as another tenant's. */
export async function createForeignService(name: string, image = TEST_IMAGE): Promise<string> {
  return dockerCli([
    "service",
    "create",
    "--detach",
    "--no-resolve-image",
    "--replicas",
    "1",
    "--name",
    name,
    image,
    "sleep",
    "600",
  ]);
}

export async function removeContainer(nameOrId: string): Promise<void> {
  await dockerCli(["rm", "-f", nameOrId]).catch(() => {});
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Removes what deploying these applications left on the engine: their Swarm services, then the
 * images built for them (`platform/<appName>:<tag>`) and kept for their rollbacks
 * (`platform-rollback/<appName>:<tag>`, appName as uniqueName() makes it, which is
 * already a valid repository name). Each application's own repository is listed, never a
 * pattern, so images of other runs deploying at the same time stay. Failures (a service or an
 * image already gone, an engine error) are ignored.
 */
export async function removeDeployedApps(appNames: readonly string[]): Promise<void> {
  for (const name of appNames) await dockerCli(["service", "rm", name]).catch(() => {});
  for (const name of appNames) {
    const images = await dockerCli([
      "image",
      "ls",
      "--format",
      "{{.Repository}}:{{.Tag}}",
      `platform/${name}`,
    ]).catch(() => "");
    // The images kept for the application's rollbacks (platform-rollback/<appName>:<tag>).
    const kept = await dockerCli([
      "image",
      "ls",
      "--format",
      "{{.Repository}}:{{.Tag}}",
      `platform-rollback/${name}`,
    ]).catch(() => "");
    for (const image of kept.split("\n").filter(Boolean))
      await dockerCli(["image", "rm", "-f", image]).catch(() => {});
    for (const image of images.split("\n").filter(Boolean))
      await dockerCli(["image", "rm", "-f", image]).catch(() => {});
  }
}

/**
 * Removes database services and then their data volumes (`<appName>-data`), which Docker frees
 * only once the service's task has stopped: each volume is retried for up to 30 s.
 */
export async function removeDatabaseServices(appNames: readonly string[]): Promise<void> {
  await removeDeployedApps(appNames);
  for (const name of appNames) {
    for (let attempt = 0; attempt < 30; attempt++) {
      const removed = await dockerCli(["volume", "rm", `${name}-data`]).then(
        () => true,
        (error) => /no such volume/i.test(String(error)),
      );
      if (removed) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** The ids or names `docker <object> ls` lists with `label`, none when the engine cannot tell. */
async function labelled(object: "container" | "network" | "volume", label: string): Promise<string[]> {
  const args = object === "container" ? ["ps", "-aq"] : [object, "ls", "-q"];
  const listed = await dockerCli([...args, "--filter", `label=${label}`]).catch(() => "");
  return listed.split("\n").filter(Boolean);
}

/** Removes the containers, networks and volumes of `docker-compose` projects (not Swarm stacks). */
export async function removeComposeProjects(projects: readonly string[]): Promise<void> {
  for (const name of projects) {
    const project = `com.docker.compose.project=${name}`;
    for (const id of await labelled("container", project)) await dockerCli(["rm", "-f", id]).catch(() => {});
    for (const id of await labelled("network", project))
      await dockerCli(["network", "rm", id]).catch(() => {});
    for (const id of await labelled("volume", project))
      await dockerCli(["volume", "rm", "-f", id]).catch(() => {});
  }
}

/**
 * Removes Swarm stacks and, once their tasks are gone (volumes in use cannot be removed), their
 * volumes.
 */
export async function removeSwarmStacks(stacks: readonly string[]): Promise<void> {
  for (const name of stacks) await dockerCli(["stack", "rm", name]).catch(() => {});
  for (const name of stacks) {
    const namespace = `com.docker.stack.namespace=${name}`;
    for (let attempt = 0; attempt < 30 && (await labelled("container", namespace)).length > 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    for (const id of await labelled("volume", namespace))
      await dockerCli(["volume", "rm", "-f", id]).catch(() => {});
  }
}
