/**
 * dockerVolume.*, dockerImage.* and dockerDiskUsage.* through the API and the embedded agent on
 * the real engine. The instance owner's organization acts on what carries its labels and on the
 * unlabelled rest of this machine's engine; a plain member only on its organization's; another
 * organization's volume or image is a 404 and stays as it was (its files, its existence).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { applicationOwner, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const image = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
const prefix = uniqueName("cp-vol");
const mine = `${prefix}-mine`;
const theirs = `${prefix}-theirs`;
const plain = `${prefix}-plain`;
const inUse = `${prefix}-used`;
const ownImage = `${prefix}-image:1`;
const theirImage = `${prefix}-their-image:1`;
const containers: string[] = [];
const volumes = [mine, theirs, plain, inUse];
let mainDirectory: string;
let platform: TestPlatform;
let owner: Session;
let member: Session;
let stranger: Session;

const labelArgs = (labels: Record<string, string>) =>
  Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);

async function runOnVolume(volume: string, script: string) {
  const name = `${prefix}-w${containers.length}`;
  containers.push(name);
  await dockerCli([
    "run",
    "--name",
    name,
    "--network",
    "none",
    "-v",
    `${volume}:/data`,
    image,
    "sh",
    "-c",
    script,
  ]);
  return name;
}

async function volumeFileText(volume: string, file: string) {
  return dockerCli([
    "run",
    "--rm",
    "--network",
    "none",
    "-v",
    `${volume}:/data:ro`,
    image,
    "cat",
    `/data${file}`,
  ]);
}

async function labelledImage(reference: string, organizationId: string) {
  const name = `${prefix}-c${containers.length}`;
  containers.push(name);
  await dockerCli(["create", "--name", name, image, "true"]);
  await dockerCli(["commit", "--change", `LABEL platform.organization=${organizationId}`, name, reference]);
}

const as = (session: Session) => ({ token: session.token });
const fieldsOf = (body: { error?: { data?: { fields?: string[] }; message?: string } }) =>
  body.error?.data?.fields ?? [];

beforeAll(async () => {
  await requireDocker();
  process.env.PLATFORM_VOLUME_TOOLS_IMAGE = image;
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-vol-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
  const organizationId = owner.user.organizationId;
  member = await createUserDirectly(platform, { email: "volume-member@example.com", organizationId });
  const granted = await platform.mutate(
    "user.assignPermissions",
    { id: member.user.userId, canAccessToDocker: true },
    as(owner),
  );
  expect(granted.status, JSON.stringify(granted.body)).toBe(200);
  stranger = await createUserDirectly(platform, { email: "volume-stranger@example.com" });
  const strangerOrg = stranger.user.organizationId;
  await dockerCli([
    "volume",
    "create",
    ...labelArgs(ownershipLabels(applicationOwner(organizationId, "app-mine"))),
    mine,
  ]);
  await dockerCli([
    "volume",
    "create",
    ...labelArgs(ownershipLabels(applicationOwner(strangerOrg, "app-theirs"))),
    theirs,
  ]);
  await dockerCli(["volume", "create", plain]);
  await dockerCli([
    "volume",
    "create",
    ...labelArgs(ownershipLabels(applicationOwner(organizationId, "app-mine"))),
    inUse,
  ]);
  await runOnVolume(mine, "mkdir -p /data/conf && echo mine > /data/conf/app.ini");
  await runOnVolume(theirs, "mkdir -p /data/conf && echo theirs > /data/conf/app.ini");
  await runOnVolume(inUse, "true");
  await labelledImage(ownImage, organizationId);
  await labelledImage(theirImage, strangerOrg);
}, 120_000);

afterAll(async () => {
  for (const name of containers) await dockerCli(["rm", "-f", name]).catch(() => {});
  for (const volume of volumes) await dockerCli(["volume", "rm", "-f", volume]).catch(() => {});
  for (const reference of [ownImage, theirImage]) await dockerCli(["rmi", "-f", reference]).catch(() => {});
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

describe("dockerVolume.*", () => {
  it("getVolumes and getVolumesSize answer the caller's volumes: the owner also the unlabelled, a member only its organization's", async () => {
    const names = async (session: Session) => {
      const response = await platform.query("dockerVolume.getVolumes", {}, as(session));
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return (response.body as { Name: string }[]).map((volume) => volume.Name);
    };
    const ownerNames = await names(owner);
    expect(ownerNames).toEqual(expect.arrayContaining([mine, plain]));
    expect(ownerNames).not.toContain(theirs);
    const memberNames = await names(member);
    expect(memberNames).toContain(mine);
    expect(memberNames).not.toContain(plain);
    expect(memberNames).not.toContain(theirs);
    const listed = (await platform.query("dockerVolume.getVolumes", { serverId: "local" }, as(owner)))
      .body as {
      Name: string;
      Labels: string;
      Driver: string;
    }[];
    expect(listed.find((volume) => volume.Name === mine)).toMatchObject({
      Driver: "local",
      Labels: expect.stringContaining(`platform.organization=${owner.user.organizationId}`),
    });

    const sizes = await platform.query("dockerVolume.getVolumesSize", { serverId: "local" }, as(owner));
    expect(sizes.status, JSON.stringify(sizes.body)).toBe(200);
    const size = (sizes.body as { name: string; size: string | null }[]).find((entry) => entry.name === mine);
    expect(size?.size).toMatch(/^\d+(\.\d+)?[kMG]?B$/);
    expect((sizes.body as { name: string }[]).map((entry) => entry.name)).not.toContain(theirs);
  }, 60_000);

  it("getVolumeConfig answers docker volume inspect of one's own volume", async () => {
    const response = await platform.query("dockerVolume.getVolumeConfig", { volumeName: mine }, as(owner));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ Name: mine, Driver: "local" });
  });

  it("listVolumeFiles, readVolumeFile, writeVolumeFile and deleteVolumeFile work inside one's own volume", async () => {
    const input = { volumeName: mine, serverId: "local" };
    const root = await platform.query("dockerVolume.listVolumeFiles", { ...input, path: "/" }, as(member));
    expect(root.status, JSON.stringify(root.body)).toBe(200);
    expect(root.body).toEqual([{ name: "conf", isDirectory: true }]);
    const read = await platform.query(
      "dockerVolume.readVolumeFile",
      { ...input, path: "/conf/app.ini" },
      as(member),
    );
    expect(read.status).toBe(200);
    expect(Buffer.from(read.body.content, "base64").toString()).toBe("mine\n");
    expect(read.body).toMatchObject({ truncated: false, binary: false });

    const content = "key = value\n";
    const write = await platform.mutate(
      "dockerVolume.writeVolumeFile",
      { ...input, path: "/conf/new.ini", content },
      as(member),
    );
    expect(write.status, JSON.stringify(write.body)).toBe(200);
    expect(await volumeFileText(mine, "/conf/new.ini")).toBe(content.trim());
    const remove = await platform.mutate(
      "dockerVolume.deleteVolumeFile",
      { ...input, path: "/conf/new.ini" },
      as(member),
    );
    expect(remove.status, JSON.stringify(remove.body)).toBe(200);
    await expect(volumeFileText(mine, "/conf/new.ini")).rejects.toThrow();
    expect(await volumeFileText(mine, "/conf/app.ini")).toBe("mine");
  }, 60_000);

  it("another organization's volume is a 404 to every procedure, and its files and itself stay", async () => {
    for (const session of [owner, member]) {
      const calls = [
        () => platform.query("dockerVolume.getVolumeConfig", { volumeName: theirs }, as(session)),
        () => platform.query("dockerVolume.listVolumeFiles", { volumeName: theirs, path: "/" }, as(session)),
        () =>
          platform.query(
            "dockerVolume.readVolumeFile",
            { volumeName: theirs, path: "/conf/app.ini" },
            as(session),
          ),
        () =>
          platform.mutate(
            "dockerVolume.writeVolumeFile",
            { volumeName: theirs, path: "/conf/app.ini", content: "overwritten" },
            as(session),
          ),
        () =>
          platform.mutate(
            "dockerVolume.deleteVolumeFile",
            { volumeName: theirs, path: "/conf" },
            as(session),
          ),
        () => platform.mutate("dockerVolume.removeVolume", { volumeName: theirs }, as(session)),
      ];
      for (const call of calls) {
        const response = await call();
        expect(response.status, JSON.stringify(response.body)).toBe(404);
        expect(JSON.stringify(response.body)).not.toContain("theirs\\n");
      }
    }
    // A plain member does not reach the unlabelled rest of the engine either.
    const unlabelled = await platform.query(
      "dockerVolume.getVolumeConfig",
      { volumeName: plain },
      as(member),
    );
    expect(unlabelled.status).toBe(404);
    expect(await volumeFileText(theirs, "/conf/app.ini")).toBe("theirs");
    expect(await dockerCli(["volume", "inspect", "-f", "{{.Name}}", theirs])).toBe(theirs);
  }, 60_000);

  it("removeVolume refuses a volume in use with a 409 and removes it once free", async () => {
    const used = await platform.mutate("dockerVolume.removeVolume", { volumeName: inUse }, as(owner));
    expect(used.status, JSON.stringify(used.body)).toBe(409);
    expect(used.body.error.message).toContain("in use");
    await dockerCli(["rm", "-f", containers[2]!]);
    const removed = await platform.mutate("dockerVolume.removeVolume", { volumeName: inUse }, as(owner));
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    await expect(dockerCli(["volume", "inspect", inUse])).rejects.toThrow();
  }, 60_000);

  it("bad input is a 400 naming the field, before anything is touched", async () => {
    const cases: [string, "query" | "mutate", Record<string, unknown>, string][] = [
      ["dockerVolume.getVolumeConfig", "query", { volumeName: "-v" }, "volumeName"],
      ["dockerVolume.removeVolume", "mutate", { volumeName: "../etc" }, "volumeName"],
      ["dockerVolume.listVolumeFiles", "query", { volumeName: mine, path: "conf" }, "path"],
      ["dockerVolume.readVolumeFile", "query", { volumeName: mine, path: "/conf/../../etc/passwd" }, "path"],
      ["dockerVolume.readVolumeFile", "query", { volumeName: mine, path: "/conf/\0" }, "path"],
      ["dockerVolume.writeVolumeFile", "mutate", { volumeName: mine, path: "/", content: "x" }, "path"],
      [
        "dockerVolume.writeVolumeFile",
        "mutate",
        { volumeName: mine, path: "/x", content: "x".repeat(600_000) },
        "content",
      ],
      ["dockerVolume.deleteVolumeFile", "mutate", { volumeName: mine, path: "//./" }, "path"],
      ["dockerVolume.getVolumes", "query", { serverId: "a b" }, "serverId"],
      ["dockerVolume.getVolumesSize", "query", { serverId: "a b" }, "serverId"],
    ];
    for (const [name, verb, input, field] of cases) {
      const response = await platform[verb](name, input, as(owner));
      expect(response.status, `${name} ${JSON.stringify(response.body)}`).toBe(400);
      expect(fieldsOf(response.body), name).toEqual([field]);
    }
    expect(await volumeFileText(mine, "/conf/app.ini")).toBe("mine");
  });
});

describe("dockerImage.*", () => {
  it("getImages answers one's labelled images, never another organization's", async () => {
    const rows = async (session: Session) => {
      const response = await platform.query("dockerImage.getImages", { serverId: "local" }, as(session));
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body as { Repository: string; Tag: string; ID: string; Size: string }[];
    };
    const [repository, tag] = ownImage.split(":");
    const own = (await rows(member)).find((row) => row.Repository === repository);
    expect(own).toMatchObject({ Tag: tag, ID: expect.stringMatching(/^[a-f0-9]{12}$/) });
    for (const session of [owner, member]) {
      expect((await rows(session)).map((row) => `${row.Repository}:${row.Tag}`)).not.toContain(theirImage);
    }
  });

  it("getImageConfig and removeImage of another organization's image are 404s, and it stays", async () => {
    const [repository, tag] = theirImage.split(":");
    const id = await dockerCli(["image", "inspect", "-f", "{{.Id}}", theirImage]);
    const config = await platform.query("dockerImage.getImageConfig", { imageRef: theirImage }, as(owner));
    expect(config.status).toBe(404);
    const remove = await platform.mutate(
      "dockerImage.removeImage",
      { repository, tag, id, force: true, serverId: "local" },
      as(owner),
    );
    expect(remove.status, JSON.stringify(remove.body)).toBe(404);
    const byId = await platform.mutate(
      "dockerImage.removeImage",
      { repository: "<none>", tag: "<none>", id },
      as(owner),
    );
    expect(byId.status).toBe(404);
    expect(await dockerCli(["image", "inspect", "-f", "{{.Id}}", theirImage])).toBe(id);
  });

  it("removeImage refuses (409) an image another organization's container uses, whatever force says", async () => {
    const user = `${prefix}-image-user`;
    containers.push(user);
    await dockerCli([
      "create",
      "--name",
      user,
      ...labelArgs(ownershipLabels(applicationOwner(stranger.user.organizationId, "app-theirs"))),
      ownImage,
      "true",
    ]);
    const [repository, tag] = ownImage.split(":");
    const id = await dockerCli(["image", "inspect", "-f", "{{.Id}}", ownImage]);
    const config = await platform.query("dockerImage.getImageConfig", { imageRef: ownImage }, as(owner));
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({ Id: id });
    const refused = await platform.mutate(
      "dockerImage.removeImage",
      { repository, tag, id, force: true },
      as(owner),
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(await dockerCli(["image", "inspect", "-f", "{{.Id}}", ownImage])).toBe(id);
    await dockerCli(["rm", "-f", user]);
    const removed = await platform.mutate("dockerImage.removeImage", { repository, tag, id }, as(owner));
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    await expect(dockerCli(["image", "inspect", ownImage])).rejects.toThrow();
  }, 60_000);

  it("bad input is a 400 naming the field", async () => {
    const cases: [string, "query" | "mutate", Record<string, unknown>, string[]][] = [
      ["dockerImage.getImageConfig", "query", { imageRef: "Bad Ref" }, ["imageRef"]],
      [
        "dockerImage.removeImage",
        "mutate",
        { repository: "<none>", tag: "<none>", id: "not an id!" },
        ["id"],
      ],
      [
        "dockerImage.removeImage",
        "mutate",
        { repository: "UPPER case", tag: "x", id: "0123456789ab" },
        ["repository", "tag"],
      ],
      ["dockerImage.removeImage", "mutate", { repository: "a", tag: "b", id: "c", force: "yes" }, ["force"]],
      ["dockerImage.getImages", "query", { serverId: "a b" }, ["serverId"]],
    ];
    for (const [name, verb, input, fields] of cases) {
      const response = await platform[verb](name, input, as(owner));
      expect(response.status, `${name} ${JSON.stringify(response.body)}`).toBe(400);
      expect(fieldsOf(response.body), name).toEqual(fields);
    }
  });
});

describe("dockerDiskUsage.*", () => {
  it("getDiskUsage counts the caller's objects; the build cache row only for an owner or admin", async () => {
    const usage = async (session: Session) => {
      const response = await platform.query(
        "dockerDiskUsage.getDiskUsage",
        { serverId: "local" },
        as(session),
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body as {
        type: string;
        totalCount: number;
        size: string;
        reclaimable: string;
        sizeBytes: number;
      }[];
    };
    const ownerRows = await usage(owner);
    expect(ownerRows.map((row) => row.type)).toEqual([
      "Images",
      "Containers",
      "Local Volumes",
      "Build Cache",
    ]);
    const memberRows = await usage(member);
    expect(memberRows.map((row) => row.type)).toEqual(["Images", "Containers", "Local Volumes"]);
    const memberVolumes = memberRows.find((row) => row.type === "Local Volumes");
    // The member's organization holds `mine` (and `inUse` until removed above): never `plain` nor `theirs`.
    expect(memberVolumes?.totalCount).toBeLessThanOrEqual(2);
    expect(memberVolumes?.totalCount).toBeGreaterThanOrEqual(1);
    expect(ownerRows.find((row) => row.type === "Local Volumes")!.totalCount).toBeGreaterThan(
      memberVolumes!.totalCount,
    );
  }, 60_000);

  it("getBuildCache answers the engine's records to an owner, none to a member; pruneBuildCache is refused to a member", async () => {
    const ownerCache = await platform.query(
      "dockerDiskUsage.getBuildCache",
      { serverId: "local" },
      as(owner),
    );
    expect(ownerCache.status, JSON.stringify(ownerCache.body)).toBe(200);
    expect(Array.isArray(ownerCache.body)).toBe(true);
    const memberCache = await platform.query("dockerDiskUsage.getBuildCache", {}, as(member));
    expect(memberCache.status).toBe(200);
    expect(memberCache.body).toEqual([]);
    const prune = await platform.mutate("dockerDiskUsage.pruneBuildCache", { serverId: "local" }, as(member));
    expect(prune.status, JSON.stringify(prune.body)).toBe(403);
    const bad = await platform.mutate("dockerDiskUsage.pruneBuildCache", { serverId: "a b" }, as(owner));
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad.body)).toEqual(["serverId"]);
    const badCache = await platform.query("dockerDiskUsage.getBuildCache", { serverId: "a b" }, as(owner));
    expect(fieldsOf(badCache.body)).toEqual(["serverId"]);
    const badUsage = await platform.query("dockerDiskUsage.getDiskUsage", { serverId: "a b" }, as(owner));
    expect(fieldsOf(badUsage.body)).toEqual(["serverId"]);
  }, 60_000);

  it("needs a session", async () => {
    for (const name of ["dockerVolume.getVolumes", "dockerImage.getImages", "dockerDiskUsage.getDiskUsage"]) {
      expect((await platform.query(name, {})).status).toBe(401);
    }
  });
});

describe("a member granted some services (accessedServices)", () => {
  const grantedVolume = `${prefix}-granted`;
  const ungrantedVolume = `${prefix}-ungranted`;
  let restricted: Session;

  beforeAll(async () => {
    const organizationId = owner.user.organizationId;
    const project = await platform.mutateOk("project.create", { name: "volume-grants" }, as(owner));
    const environmentId = project.environment.environmentId as string;
    const create = (name: string) =>
      platform.mutateOk("application.create", { name, environmentId }, as(owner));
    const grantedApp = await create("granted");
    const ungrantedApp = await create("ungranted");
    restricted = await createUserDirectly(platform, {
      email: "volume-restricted@example.com",
      organizationId,
    });
    const assigned = await platform.mutate(
      "user.assignPermissions",
      { id: restricted.user.userId, canAccessToDocker: true, accessedServices: [grantedApp.applicationId] },
      as(owner),
    );
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    const labels = (applicationId: string) =>
      labelArgs(ownershipLabels(applicationOwner(organizationId, applicationId)));
    await dockerCli(["volume", "create", ...labels(grantedApp.applicationId), grantedVolume]);
    await dockerCli(["volume", "create", ...labels(ungrantedApp.applicationId), ungrantedVolume]);
    await runOnVolume(ungrantedVolume, "echo private > /data/secret.txt");
  }, 60_000);

  // Removed by the file's afterAll, after the container that wrote into it.
  volumes.push(grantedVolume, ungrantedVolume);

  it("sees only the volumes of its granted services; another service's volume is a 404 and stays", async () => {
    const listed = await platform.query("dockerVolume.getVolumes", {}, as(restricted));
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const names = (listed.body as { Name: string }[]).map((volume) => volume.Name);
    expect(names).toContain(grantedVolume);
    expect(names).not.toContain(ungrantedVolume);
    expect(names).not.toContain(mine);
    for (const call of [
      () => platform.query("dockerVolume.getVolumeConfig", { volumeName: ungrantedVolume }, as(restricted)),
      () =>
        platform.query(
          "dockerVolume.readVolumeFile",
          { volumeName: ungrantedVolume, path: "/secret.txt" },
          as(restricted),
        ),
      () =>
        platform.mutate(
          "dockerVolume.deleteVolumeFile",
          { volumeName: ungrantedVolume, path: "/secret.txt" },
          as(restricted),
        ),
      () => platform.mutate("dockerVolume.removeVolume", { volumeName: ungrantedVolume }, as(restricted)),
    ]) {
      const response = await call();
      expect(response.status, JSON.stringify(response.body)).toBe(404);
    }
    expect(await volumeFileText(ungrantedVolume, "/secret.txt")).toBe("private");
  }, 60_000);
});
