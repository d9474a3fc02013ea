/**
 * Volumes, their files, images and disk usage on the real engine, each command with a scope:
 * what an organization's labels name is reachable, another organization's is NOT_FOUND and
 * untouched, files never leave the volume, and a volume or image someone else uses stays.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { asReceived, type ContainerScope, type VolumeFileCommand } from "@platform/agent-protocol";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandError } from "../command-error.ts";
import { requireDocker, TEST_IMAGE } from "../testing/docker.ts";
import { diskUsage, inspectImage, listImages, removeImage } from "./images.ts";
import { inspectVolume, listVolumes, removeVolume, VOLUME_FILE_LIMIT, volumeFile } from "./volumes.ts";

const suffix = randomBytes(4).toString("hex");
const orgA = `org-a-${suffix}`;
const orgB = `org-b-${suffix}`;
const scopeA: ContainerScope = { organizationId: orgA, includeUnmanaged: false };
const scopeB: ContainerScope = { organizationId: orgB, includeUnmanaged: false };
const adminB: ContainerScope = { organizationId: orgB, includeUnmanaged: true };
const volumeA = `vol-a-${suffix}`;
const unmanaged = `vol-plain-${suffix}`;
const imageA = `platform-test-owned-${suffix}:1`;
let docker: Docker;
const cleanup: (() => Promise<unknown>)[] = [];

const labelsOf = (organizationId: string) => ({
  "platform.managed": "true",
  "platform.organization": organizationId,
  "platform.resource": `application:app-${suffix}`,
});

function file(
  scope: ContainerScope,
  operation: VolumeFileCommand["operation"],
  path: string,
  content?: string,
  volumeName = volumeA,
) {
  return volumeFile(
    docker,
    asReceived("VolumeFileCommand", {
      volumeName,
      scope,
      operation,
      path,
      content: content === undefined ? undefined : new TextEncoder().encode(content),
    }),
  );
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "ok";
  } catch (error) {
    if (error instanceof CommandError) return error.code;
    throw error;
  }
}

const exists = (inspect: () => Promise<unknown>) =>
  inspect().then(
    () => true,
    () => false,
  );

/** Runs a busybox command with the volume at /data and waits for it. */
async function runWith(volume: string, cmd: string[], labels: Record<string, string> = {}) {
  const container = await docker.createContainer({
    Image: TEST_IMAGE,
    Cmd: cmd,
    Labels: labels,
    HostConfig: { NetworkMode: "none", Mounts: [{ Type: "volume", Source: volume, Target: "/data" }] },
  });
  cleanup.push(() => container.remove({ force: true }));
  await container.start();
  expect((await container.wait()).StatusCode).toBe(0);
  return container;
}

beforeAll(async () => {
  docker = await requireDocker();
  process.env.PLATFORM_VOLUME_TOOLS_IMAGE = TEST_IMAGE;
  await docker.createVolume({ Name: volumeA, Labels: labelsOf(orgA) });
  await docker.createVolume({ Name: unmanaged });
  cleanup.push(
    () => docker.getVolume(volumeA).remove({ force: true }),
    () => docker.getVolume(unmanaged).remove({ force: true }),
  );
  await runWith(volumeA, ["sh", "-c", "mkdir -p /data/conf/sub && echo secret > /data/conf/app.ini"]);
}, 60_000);

afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

describe("volume files through a never-started helper", () => {
  it("lists, reads, writes and deletes files of the organization's own volume", async () => {
    const root = await file(scopeA, "LIST", "/");
    expect(root.entries).toEqual([expect.objectContaining({ name: "conf", isDirectory: true })]);
    const conf = await file(scopeA, "LIST", "//conf/./");
    expect(conf.entries.map((entry) => [entry.name, entry.isDirectory])).toEqual([
      ["sub", true],
      ["app.ini", false],
    ]);
    expect(Buffer.from((await file(scopeA, "READ", "/conf/app.ini")).content).toString()).toBe("secret\n");

    await file(scopeA, "WRITE", "/conf/new.txt", "hello, volume");
    const read = await file(scopeA, "READ", "/conf/new.txt");
    expect(Buffer.from(read.content).toString()).toBe("hello, volume");
    expect(read.truncated).toBe(false);

    await file(scopeA, "DELETE", "/conf/new.txt");
    expect(await codeOf(file(scopeA, "READ", "/conf/new.txt"))).toBe("NOT_FOUND");
    // No helper container is left behind.
    const helpers = await docker.listContainers({
      all: true,
      filters: { label: ["platform.internal=volume-files"] },
    });
    expect(helpers).toEqual([]);
  }, 60_000);

  it("refuses '..', NUL, relative paths and the root for writes and deletes; touches nothing", async () => {
    for (const path of ["/../etc/passwd", "/conf/../../x", "conf/app.ini", "/conf/\0x"]) {
      expect(await codeOf(file(scopeA, "READ", path)), path).toBe("INVALID_ARGUMENT");
      expect(await codeOf(file(scopeA, "WRITE", path, "x")), path).toBe("INVALID_ARGUMENT");
    }
    expect(await codeOf(file(scopeA, "DELETE", "/"))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(file(scopeA, "DELETE", "//./"))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(file(scopeA, "WRITE", "/", "x"))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(file(scopeA, "READ", "/conf"))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(file(scopeA, "LIST", "/conf/app.ini"))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(file(scopeA, "WRITE", "/missing/dir/x.txt", "x"))).toBe("NOT_FOUND");
    expect(Buffer.from((await file(scopeA, "READ", "/conf/app.ini")).content).toString()).toBe("secret\n");
  }, 60_000);

  it("keeps a symbolic link's target out of reach: it resolves inside the helper, not on the host", async () => {
    await runWith(volumeA, [
      "sh",
      "-c",
      "ln -sfn /etc /data/etc-link && ln -sfn /etc/hostname /data/host-file",
    ]);
    // The link itself is no regular file; through the linked directory, /etc is the helper's own.
    expect(await codeOf(file(scopeA, "READ", "/host-file"))).toBe("INVALID_ARGUMENT");
    const through = await file(scopeA, "READ", "/etc-link/hostname").then(
      (result) => Buffer.from(result.content).toString().trim(),
      () => "",
    );
    expect(through).not.toBe(hostname());
    expect(await codeOf(file(scopeA, "READ", "/etc-link/shadow"))).toBe("NOT_FOUND");
  }, 60_000);

  it("answers at most the size limit of a big file, and refuses a bigger write", async () => {
    await runWith(volumeA, ["sh", "-c", "dd if=/dev/zero of=/data/big.bin bs=1024 count=700 2>/dev/null"]);
    const big = await file(scopeA, "READ", "/big.bin");
    expect(big.content.length).toBe(VOLUME_FILE_LIMIT);
    expect(big.truncated).toBe(true);
    expect(await codeOf(file(scopeA, "WRITE", "/huge.txt", "x".repeat(VOLUME_FILE_LIMIT + 1)))).toBe(
      "INVALID_ARGUMENT",
    );
  }, 60_000);

  it("answers another organization's volume as missing, for every operation, and leaves it as it was", async () => {
    for (const operation of ["LIST", "READ", "WRITE", "DELETE"] as const) {
      expect(await codeOf(file(scopeB, operation, "/conf/app.ini", "stolen")), operation).toBe("NOT_FOUND");
      // An administrator of another organization sees unlabelled volumes, never a labelled one.
      expect(await codeOf(file(adminB, operation, "/conf/app.ini", "stolen")), operation).toBe("NOT_FOUND");
    }
    expect(
      await codeOf(
        inspectVolume(docker, asReceived("InspectVolumeCommand", { volumeName: volumeA, scope: scopeB })),
      ),
    ).toBe("NOT_FOUND");
    expect(
      await codeOf(
        removeVolume(docker, asReceived("RemoveVolumeCommand", { volumeName: volumeA, scope: adminB })),
      ),
    ).toBe("NOT_FOUND");
    expect(Buffer.from((await file(scopeA, "READ", "/conf/app.ini")).content).toString()).toBe("secret\n");
    await docker.getVolume(volumeA).inspect();
  }, 60_000);
});

describe("volumes", () => {
  it("lists the scope's volumes only (an administrator also the unlabelled), with sizes when asked", async () => {
    const names = async (scope: ContainerScope, withSize = false) =>
      (await listVolumes(docker, asReceived("ListVolumesCommand", { scope, withSize }))).volumes;
    expect((await names(scopeA)).map((volume) => volume.name)).toContain(volumeA);
    expect((await names(scopeB)).map((volume) => volume.name)).not.toContain(volumeA);
    const admin = (await names(adminB)).map((volume) => volume.name);
    expect(admin).toContain(unmanaged);
    expect(admin).not.toContain(volumeA);
    expect((await names(scopeA)).map((volume) => volume.name)).not.toContain(unmanaged);
    const sized = (await names(scopeA, true)).find((volume) => volume.name === volumeA);
    expect(sized?.sizeBytes).toBeGreaterThan(0);
    const config = JSON.parse(
      (
        await inspectVolume(
          docker,
          asReceived("InspectVolumeCommand", { volumeName: volumeA, scope: scopeA }),
        )
      ).inspectJson,
    );
    expect(config.Name).toBe(volumeA);
  }, 60_000);

  it("refuses to remove a volume in use (FAILED_PRECONDITION), removes it once free", async () => {
    const name = `vol-used-${suffix}`;
    await docker.createVolume({ Name: name, Labels: labelsOf(orgA) });
    cleanup.push(() => docker.getVolume(name).remove({ force: true }));
    const user = await runWith(name, ["true"]);
    const remove = () =>
      removeVolume(docker, asReceived("RemoveVolumeCommand", { volumeName: name, scope: scopeA }));
    expect(await codeOf(remove())).toBe("FAILED_PRECONDITION");
    await user.remove({ force: true });
    await remove();
    expect(await exists(() => docker.getVolume(name).inspect())).toBe(false);
  }, 60_000);
});

describe("images and disk usage", () => {
  beforeAll(async () => {
    const container = await docker.createContainer({ Image: TEST_IMAGE, Cmd: ["true"] });
    const [repo, tag] = imageA.split(":");
    await container.commit({ repo, tag, changes: [`LABEL platform.organization=${orgA}`] });
    await container.remove();
    cleanup.push(() => docker.getImage(imageA).remove({ force: true }));
  }, 60_000);

  it("shows an organization its labelled images, never to another organization", async () => {
    const tags = async (scope: ContainerScope) =>
      (await listImages(docker, asReceived("ListImagesCommand", { scope }))).images.flatMap(
        (image) => image.repoTags,
      );
    expect(await tags(scopeA)).toContain(imageA);
    expect(await tags(scopeB)).not.toContain(imageA);
    expect(await tags(adminB)).not.toContain(imageA);
    expect(
      await codeOf(
        inspectImage(docker, asReceived("InspectImageCommand", { imageRef: imageA, scope: adminB })),
      ),
    ).toBe("NOT_FOUND");
    const config = JSON.parse(
      (await inspectImage(docker, asReceived("InspectImageCommand", { imageRef: imageA, scope: scopeA })))
        .inspectJson,
    );
    expect(config.Config.Labels["platform.organization"]).toBe(orgA);
    expect(
      await codeOf(
        inspectImage(docker, asReceived("InspectImageCommand", { imageRef: "bad ref", scope: scopeA })),
      ),
    ).toBe("INVALID_ARGUMENT");
  }, 60_000);

  it("keeps an image another organization's container uses, whatever force says; removes it once free", async () => {
    const user = await docker.createContainer({ Image: imageA, Cmd: ["true"], Labels: labelsOf(orgB) });
    cleanup.push(() => user.remove({ force: true }));
    const remove = () =>
      removeImage(
        docker,
        asReceived("RemoveImageCommand", { reference: imageA, force: true, scope: scopeA }),
      );
    expect(await codeOf(remove())).toBe("FAILED_PRECONDITION");
    await docker.getImage(imageA).inspect();
    // Organization B sees it through its container, yet may not remove A's labelled image.
    expect(
      await codeOf(
        removeImage(docker, asReceived("RemoveImageCommand", { reference: imageA, scope: scopeB })),
      ),
    ).toBe("NOT_FOUND");
    await user.remove({ force: true });
    const removed = await remove();
    expect(removed.untagged).toContain(imageA);
    expect(await exists(() => docker.getImage(imageA).inspect())).toBe(false);
  }, 60_000);

  it("counts only the scope's objects; the build cache only for an administrator", async () => {
    const tenant = await diskUsage(
      docker,
      asReceived("DiskUsageCommand", { scope: scopeA, buildCache: true }),
    );
    expect(tenant.items.map((entry) => entry.type)).toEqual(["Images", "Containers", "Local Volumes"]);
    expect(tenant.buildCache).toEqual([]);
    const volumes = tenant.items.find((entry) => entry.type === "Local Volumes");
    expect(volumes?.totalCount).toBe(1);
    const admin = await diskUsage(
      docker,
      asReceived("DiskUsageCommand", { scope: adminB, buildCache: true }),
    );
    expect(admin.items.map((entry) => entry.type)).toContain("Build Cache");
  }, 120_000);

  it("answers disk usage and volume sizes asked at once (the engine runs one disk usage at a time)", async () => {
    // The engine answers a second disk usage meanwhile with a 500: the agent asks in turn.
    const answers = await Promise.all([
      diskUsage(docker, asReceived("DiskUsageCommand", { scope: scopeA, buildCache: false })),
      listVolumes(docker, asReceived("ListVolumesCommand", { scope: scopeA, withSize: true })),
      diskUsage(docker, asReceived("DiskUsageCommand", { scope: adminB, buildCache: false })),
      listVolumes(docker, asReceived("ListVolumesCommand", { scope: adminB, withSize: true })),
    ]);
    expect(answers).toHaveLength(4);
  }, 120_000);
});
