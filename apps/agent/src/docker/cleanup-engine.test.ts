/**
 * The whole-engine cleanup (the instance administrator's) on a private Docker Engine of its own
 * (testing/private-docker.ts), never on the shared one: every unused object goes whatever its
 * owner, the platform's own (platform.internal) and images kept for rollbacks stay, and the
 * bytes freed are reported.
 */
import { asReceived } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_IMAGE } from "../testing/docker.ts";
import { copyImageInto, type PrivateDocker, startPrivateDocker } from "../testing/private-docker.ts";
import { cleanDocker } from "./cleanup.ts";

const BLOB = ["sh", "-c", "mkdir -p /data && dd if=/dev/zero of=/data/blob bs=1024 count=256 2>/dev/null"];
let engine: PrivateDocker;

async function exitedContainer(labels: Record<string, string>, volume?: string): Promise<string> {
  const container = await engine.docker.createContainer({
    Image: TEST_IMAGE,
    Cmd: BLOB,
    Labels: labels,
    HostConfig: { NetworkMode: "none", ...(volume ? { Binds: [`${volume}:/data`] } : {}) },
  });
  await container.start();
  expect((await container.wait()).StatusCode).toBe(0);
  return container.id;
}

const exists = (inspect: () => Promise<unknown>) =>
  inspect().then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  engine = await startPrivateDocker();
  await copyImageInto(engine, TEST_IMAGE);
}, 120_000);

afterAll(async () => {
  await engine?.stop();
});

describe("a whole-engine cleanup", () => {
  it("removes every unused object of any owner but the platform's own, and reports the bytes", async () => {
    const { docker } = engine;
    const unlabelled = await exitedContainer({});
    const tenants = await exitedContainer({ "platform.managed": "true", "platform.organization": "org-a" });
    const internal = await exitedContainer({ "platform.internal": "true" });
    const committed = (await docker.getContainer(unlabelled).commit({})) as { Id: string };
    await docker.createVolume({ Name: "tenant-data", Labels: { "platform.organization": "org-b" } });
    await docker.createVolume({ Name: "platform-data", Labels: { "platform.internal": "true" } });
    const writer = await exitedContainer({ "platform.internal": "true" }, "tenant-data");
    await docker.getContainer(writer).remove();

    const result = await cleanDocker(
      docker,
      asReceived("CleanDockerCommand", {
        containers: true,
        images: true,
        volumes: true,
        buildCache: true,
        wholeEngine: true,
      }),
    );
    expect(result.containersDeleted).toBe(2);
    expect(result.volumesDeleted).toBe(1);
    expect(result.imagesDeleted).toBeGreaterThanOrEqual(1);
    expect(result.reclaimedBytes).toBeGreaterThanOrEqual(3 * 256 * 1024);
    expect(await exists(() => docker.getContainer(unlabelled).inspect())).toBe(false);
    expect(await exists(() => docker.getContainer(tenants).inspect())).toBe(false);
    expect(await exists(() => docker.getImage(committed.Id).inspect())).toBe(false);
    expect(await exists(() => docker.getVolume("tenant-data").inspect())).toBe(false);
    expect(await exists(() => docker.getContainer(internal).inspect())).toBe(true);
    expect(await exists(() => docker.getVolume("platform-data").inspect())).toBe(true);
    // The image the platform's stopped container still uses is not unused.
    expect(await exists(() => docker.getImage(TEST_IMAGE).inspect())).toBe(true);
  });

  it("leaves images kept for rollbacks (platform-rollback/...) while removing the other unused ones", async () => {
    const { docker } = engine;
    const source = await exitedContainer({});
    const kept = (await docker.getContainer(source).commit({})) as { Id: string };
    await docker.getImage(kept.Id).tag({ repo: "platform-rollback/app", tag: "d1" });
    const other = (await docker.getContainer(source).commit({ changes: ["LABEL other=1"] })) as {
      Id: string;
    };
    await docker.getImage(other.Id).tag({ repo: "platform/app", tag: "d2" });
    await docker.getContainer(source).remove();

    const result = await cleanDocker(
      docker,
      asReceived("CleanDockerCommand", {
        containers: false,
        images: true,
        volumes: false,
        buildCache: false,
        wholeEngine: true,
      }),
    );
    expect(result.imagesDeleted).toBeGreaterThanOrEqual(1);
    expect(await exists(() => docker.getImage(kept.Id).inspect())).toBe(true);
    expect(await exists(() => docker.getImage("platform-rollback/app:d1").inspect())).toBe(true);
    expect(await exists(() => docker.getImage(other.Id).inspect())).toBe(false);
    expect(await exists(() => docker.getImage(TEST_IMAGE).inspect())).toBe(true);
  });
});
