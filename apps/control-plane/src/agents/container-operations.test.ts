/**
 * docker.startContainer, stopContainer, killContainer, removeContainer, listContainerFiles,
 * readContainerFile, writeContainerFile, deleteContainerFile and getEvents (issue 39) end to end: a control plane with
 * its embedded agent on the real Docker Engine. The caller acts on its organization's containers
 * only: another organization's container answers 404 and is neither stopped, read nor written;
 * paths are checked (a `..` segment or NUL is a 400 naming path); binary files are refused.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, removeContainer, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { applicationOwner, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertTestServer } from "./testing/agents.ts";

const image = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
const prefix = uniqueName("cp-container-ops");
const mine = `${prefix}-mine`;
const theirs = `${prefix}-theirs`;
const internal = `${prefix}-internal`;
const stoppedMine = `${prefix}-stopped`;
const SETUP = [
  "mkdir -p /data/sub",
  "printf 'hello\\n' > /data/hello.txt",
  "printf 'a\\000b' > /data/binary.bin",
  "printf 'secret' > /data/theirs.txt",
  "trap 'exit 0' TERM",
  "while true; do sleep 1; done",
].join("; ");
let mainDirectory: string;
let platform: TestPlatform;
let owner: Session;
let stranger: Session;
let member: Session;

const run = (name: string, labels: Record<string, string>) =>
  dockerCli([
    "run",
    "-d",
    "--name",
    name,
    ...Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]),
    image,
    "sh",
    "-c",
    SETUP,
  ]);

const status = (name: string) => dockerCli(["inspect", "-f", "{{.State.Status}}", name]);

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-container-ops-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
  stranger = await createUserDirectly(platform, { email: "container-ops-stranger@example.com" });
  member = await createUserDirectly(platform, {
    email: "container-ops-member@example.com",
    organizationId: owner.user.organizationId,
  });
  await run(mine, ownershipLabels(applicationOwner(owner.user.organizationId, "app-mine")));
  await run(theirs, ownershipLabels(applicationOwner(stranger.user.organizationId, "app-theirs")));
  await run(internal, { "platform.internal": "true" });
  await dockerCli([
    "create",
    "--name",
    stoppedMine,
    ...Object.entries(ownershipLabels(applicationOwner(owner.user.organizationId, "app-mine"))).flatMap(
      ([key, value]) => ["--label", `${key}=${value}`],
    ),
    image,
    "sleep",
    "300",
  ]);
  for (let i = 0; i < 100; i += 1) {
    const listed = await dockerCli(["exec", theirs, "ls", "/data"]).catch(() => "");
    const own = await dockerCli(["exec", mine, "ls", "/data"]).catch(() => "");
    if (listed.includes("theirs.txt") && own.includes("theirs.txt")) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 90_000);

afterAll(async () => {
  for (const name of [mine, theirs, internal, stoppedMine]) await removeContainer(name);
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

const as = (session: Session) => ({ token: session.token });

/** A multipart docker.uploadFileToContainer: the text fields, the file (none when undefined), as `token`'s caller. */
async function uploadFile(
  fields: Record<string, string>,
  bytes: Uint8Array | undefined,
  name: string,
  route = "/api/docker.uploadFileToContainer",
  token: string | null = owner.token,
) {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.set(key, value);
  if (bytes) form.set("file", new Blob([new Uint8Array(bytes)]), name);
  const response = await platform.app.request(route, {
    method: "POST",
    body: form,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

describe("a member granted one application (accessedServices)", () => {
  const granted = `${prefix}-granted`;
  const ungranted = `${prefix}-ungranted`;
  let restricted: Session;

  beforeAll(async () => {
    const organizationId = owner.user.organizationId;
    const project = await platform.mutateOk("project.create", { name: "container-ops" }, as(owner));
    const environmentId = project.environment.environmentId as string;
    const create = (name: string) =>
      platform.mutateOk("application.create", { name, environmentId }, as(owner));
    const grantedApp = await create("granted");
    const ungrantedApp = await create("ungranted");
    restricted = await createUserDirectly(platform, {
      email: "container-ops-restricted@example.com",
      organizationId,
    });
    const assigned = await platform.mutate(
      "user.assignPermissions",
      { id: restricted.user.userId, canAccessToDocker: true, accessedServices: [grantedApp.applicationId] },
      as(owner),
    );
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    await run(granted, ownershipLabels(applicationOwner(organizationId, grantedApp.applicationId)));
    await run(ungranted, ownershipLabels(applicationOwner(organizationId, ungrantedApp.applicationId)));
  }, 60_000);

  afterAll(async () => {
    for (const name of [granted, ungranted]) await removeContainer(name);
  });

  it("stops, reads and writes only the granted application's container; the ungranted one's are 404s and unchanged", async () => {
    for (const containerId of [ungranted, theirs, internal]) {
      const stop = await platform.mutate("docker.stopContainer", { containerId }, as(restricted));
      expect(stop.status, containerId).toBe(404);
      expect(await status(containerId)).toBe("running");
      const listed = await platform.query(
        "docker.listContainerFiles",
        { containerId, path: "/" },
        as(restricted),
      );
      expect(listed.status, containerId).toBe(404);
      const written = await platform.mutate(
        "docker.writeContainerFile",
        { containerId, path: "/probe.txt", content: "x" },
        as(restricted),
      );
      expect(written.status, containerId).toBe(404);
    }
    expect(
      (await platform.query("docker.listContainerFiles", { containerId: granted, path: "/" }, as(restricted)))
        .status,
    ).toBe(200);
    expect(
      (await platform.mutate("docker.stopContainer", { containerId: granted }, as(restricted))).status,
    ).toBe(200);
    expect(await status(granted)).toBe("exited");
  }, 60_000);
});

describe("docker container operations through the agent", () => {
  it("docker.stopContainer {containerId} of another organization's container answers 404 and stops nothing", async () => {
    for (const containerId of [theirs, internal]) {
      for (const procedure of [
        "docker.stopContainer",
        "docker.killContainer",
        "docker.removeContainer",
        "docker.startContainer",
      ]) {
        const response = await platform.mutate(procedure, { containerId }, as(owner));
        expect(response.status, `${procedure} ${containerId}`).toBe(404);
        expect(await status(containerId)).toBe("running");
      }
    }
  }, 60_000);

  it("serverId of another organization's server is a 404; another organization on this machine must name a serverId (400)", async () => {
    const otherServer = await insertTestServer(platform, stranger.user.organizationId);
    for (const [procedure, input] of [
      ["docker.stopContainer", { containerId: mine, serverId: otherServer }],
      [
        "docker.writeContainerFile",
        { containerId: mine, path: "/data/x.txt", content: "x", serverId: otherServer },
      ],
    ] as const) {
      expect((await platform.mutate(procedure, input, as(owner))).status, procedure).toBe(404);
    }
    for (const [procedure, input] of [
      ["docker.listContainerFiles", { containerId: mine, path: "/", serverId: otherServer }],
      ["docker.getEvents", { serverId: otherServer }],
    ] as const) {
      expect((await platform.query(procedure, input, as(owner))).status, procedure).toBe(404);
    }
    const noServer = await platform.mutate("docker.stopContainer", { containerId: theirs }, as(stranger));
    expect(noServer.status).toBe(400);
    expect(noServer.body.error.data.fields).toEqual(["serverId"]);
    expect(await status(mine)).toBe("running");
    expect(await status(theirs)).toBe("running");
  }, 60_000);

  it("a member without the docker permission is refused and changes nothing", async () => {
    const response = await platform.mutate("docker.stopContainer", { containerId: mine }, as(member));
    expect(response.status).toBe(403);
    expect(await status(mine)).toBe("running");
  });

  it("files of another organization's container are 404s: nothing listed, read or written", async () => {
    const listed = await platform.query(
      "docker.listContainerFiles",
      { containerId: theirs, path: "/data" },
      as(owner),
    );
    expect(listed.status).toBe(404);
    const read = await platform.query(
      "docker.readContainerFile",
      { containerId: theirs, path: "/data/theirs.txt" },
      as(owner),
    );
    expect(read.status).toBe(404);
    expect(JSON.stringify(read.body)).not.toContain(Buffer.from("secret").toString("base64"));
    const written = await platform.mutate(
      "docker.writeContainerFile",
      { containerId: theirs, path: "/data/theirs.txt", content: "taken" },
      as(owner),
    );
    expect(written.status).toBe(404);
    expect(await dockerCli(["exec", theirs, "cat", "/data/theirs.txt"])).toBe("secret");
  }, 60_000);

  it("listContainerFiles, readContainerFile and writeContainerFile work on the caller's container", async () => {
    const listed = await platform.query(
      "docker.listContainerFiles",
      { containerId: mine, path: "/data" },
      as(owner),
    );
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body).toEqual([
      { name: "sub", isDirectory: true },
      { name: "binary.bin", isDirectory: false },
      { name: "hello.txt", isDirectory: false },
      { name: "theirs.txt", isDirectory: false },
    ]);
    const written = await platform.mutate(
      "docker.writeContainerFile",
      { containerId: mine, path: "/data/sub/new.txt", content: "written through the archive API\n" },
      as(owner),
    );
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    const read = await platform.query(
      "docker.readContainerFile",
      { containerId: mine, path: "/data/sub/new.txt" },
      as(owner),
    );
    expect(read.status).toBe(200);
    expect(Buffer.from(read.body.content, "base64").toString("utf8")).toBe(
      "written through the archive API\n",
    );
    expect(read.body.truncated).toBe(false);
  }, 60_000);

  it("a path with a '..' segment or NUL is a 400 naming path; a binary file is a 400 saying so; content over 512 KiB a 400 naming content", async () => {
    for (const bad of ["/data/../etc/passwd", "/data/hello.txt\u0000"]) {
      const response = await platform.query(
        "docker.readContainerFile",
        { containerId: mine, path: bad },
        as(owner),
      );
      expect(response.status, bad).toBe(400);
      expect(response.body.error.data.fields).toEqual(["path"]);
    }
    const binary = await platform.query(
      "docker.readContainerFile",
      { containerId: mine, path: "/data/binary.bin" },
      as(owner),
    );
    expect(binary.status).toBe(400);
    expect(binary.body.error.message).toContain("binary");
    const tooLarge = await platform.mutate(
      "docker.writeContainerFile",
      { containerId: mine, path: "/data/large.txt", content: "x".repeat(512 * 1024 + 1) },
      as(owner),
    );
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error.data.fields).toEqual(["content"]);
    expect(await dockerCli(["exec", mine, "ls", "/data"])).not.toContain("large.txt");
  }, 60_000);

  it("deleteContainerFile {containerId, path} removes the caller's file; another organization's container is a 404 and its file stays", async () => {
    await dockerCli(["exec", mine, "sh", "-c", "printf 'bye' > /data/delete-me.txt"]);
    const deleted = await platform.mutate(
      "docker.deleteContainerFile",
      { containerId: mine, path: "/data/delete-me.txt" },
      as(owner),
    );
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(await dockerCli(["exec", mine, "ls", "/data"])).not.toContain("delete-me.txt");

    const theirsDeleted = await platform.mutate(
      "docker.deleteContainerFile",
      { containerId: theirs, path: "/data/theirs.txt" },
      as(owner),
    );
    expect(theirsDeleted.status).toBe(404);
    expect(await dockerCli(["exec", theirs, "cat", "/data/theirs.txt"])).toBe("secret");
  }, 60_000);

  it("deleteContainerFile runs no shell: '/tmp/x; touch /tmp/pwned' removes that literal name only and /tmp/pwned never appears", async () => {
    await dockerCli([
      "exec",
      mine,
      "sh",
      "-c",
      "mkdir -p '/tmp/x; touch /tmp' && printf 'l' > '/tmp/x; touch /tmp/pwned' && printf 'keep' > /tmp/x",
    ]);
    const deleted = await platform.mutate(
      "docker.deleteContainerFile",
      { containerId: mine, path: "/tmp/x; touch /tmp/pwned" },
      as(owner),
    );
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(await dockerCli(["exec", mine, "ls", "/tmp/x; touch /tmp"])).toBe("");
    expect(await dockerCli(["exec", mine, "ls", "/tmp"])).not.toContain("pwned");
    expect(await dockerCli(["exec", mine, "cat", "/tmp/x"])).toBe("keep");
  }, 60_000);

  it("deleteContainerFile: /, a system directory, '..' are 400s naming path; a stopped container is a 409 saying it is not running", async () => {
    for (const bad of ["/", "/etc", "/proc/1", "/dev/null", "/data/../etc"]) {
      const response = await platform.mutate(
        "docker.deleteContainerFile",
        { containerId: mine, path: bad },
        as(owner),
      );
      expect(response.status, bad).toBe(400);
      expect(response.body.error.data.fields).toEqual(["path"]);
    }
    expect(await dockerCli(["exec", mine, "ls", "/etc"])).toContain("hostname");
    const stopped = await platform.mutate(
      "docker.deleteContainerFile",
      { containerId: stoppedMine, path: "/etc/hostname" },
      as(owner),
    );
    expect(stopped.status).toBe(409);
    expect(stopped.body.error.message).toContain("not running");
  }, 60_000);

  it("uploadFileToContainer (multipart: containerId, file, destinationPath) writes any bytes; a destinationPath ending in / keeps the file's name; both prefixes answer", async () => {
    const bytes = new Uint8Array([0x00, 0xff, 0x41, 0x0a, 0x00]);
    const plain = await uploadFile(
      { containerId: mine, destinationPath: "/data/sub/up.bin" },
      bytes,
      "ignored",
    );
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body).toEqual({ success: true });
    expect(await dockerCli(["exec", mine, "od", "-An", "-tx1", "/data/sub/up.bin"])).toBe("00 ff 41 0a 00");

    const intoDirectory = await uploadFile(
      { containerId: mine, destinationPath: "/data/sub/" },
      new TextEncoder().encode("named"),
      "kept-name.txt",
      "/api/trpc/docker.uploadFileToContainer",
    );
    expect(intoDirectory.status, JSON.stringify(intoDirectory.body)).toBe(200);
    expect(intoDirectory.body.result.data.json ?? intoDirectory.body.result.data).toEqual({ success: true });
    expect(await dockerCli(["exec", mine, "cat", "/data/sub/kept-name.txt"])).toBe("named");
  }, 60_000);

  it("uploadFileToContainer: another organization's container is a 404 and its file stays; bad containerId, destinationPath, serverId or file are 400s naming them; over 512 KiB a 413 naming file; anonymous a 401", async () => {
    const taken = await uploadFile(
      { containerId: theirs, destinationPath: "/data/theirs.txt" },
      new TextEncoder().encode("taken"),
      "x",
    );
    expect(taken.status).toBe(404);
    expect(await dockerCli(["exec", theirs, "cat", "/data/theirs.txt"])).toBe("secret");

    for (const [fields, expected] of [
      [{ containerId: mine, destinationPath: "/data/../etc/passwd" }, "destinationPath"],
      [{ containerId: mine, destinationPath: "/data/x\u0000" }, "destinationPath"],
      [{ containerId: "bad id;", destinationPath: "/data/x" }, "containerId"],
      [{ destinationPath: "/data/x" }, "containerId"],
      [{ containerId: mine, destinationPath: "/data/x", serverId: "bad id;" }, "serverId"],
    ] as const) {
      const response = await uploadFile(fields, new Uint8Array([1]), "x");
      expect(response.status, JSON.stringify(fields)).toBe(400);
      expect(response.body.error.data.fields).toEqual([expected]);
    }
    const noFile = await uploadFile({ containerId: mine, destinationPath: "/data/nofile" }, undefined, "x");
    expect(noFile.status).toBe(400);
    expect(noFile.body.error.data.fields).toEqual(["file"]);
    const large = await uploadFile(
      { containerId: mine, destinationPath: "/data/large.bin" },
      new Uint8Array(512 * 1024 + 1),
      "x",
    );
    expect(large.status).toBe(413);
    expect(large.body.error.data.fields).toEqual(["file"]);
    expect(await dockerCli(["exec", mine, "ls", "/data"])).not.toContain("large.bin");
    const anonymous = await uploadFile(
      { containerId: mine, destinationPath: "/data/anon" },
      new Uint8Array([1]),
      "x",
      undefined,
      null,
    );
    expect(anonymous.status).toBe(401);
    expect(await dockerCli(["exec", mine, "ls", "/data"])).not.toContain("anon");
  }, 60_000);

  it("stopContainer, startContainer, killContainer, then getEvents {minutes} lists them (the caller's containers only), and removeContainer removes it", async () => {
    expect((await platform.mutate("docker.stopContainer", { containerId: mine }, as(owner))).status).toBe(
      200,
    );
    expect(await status(mine)).toBe("exited");
    expect((await platform.mutate("docker.startContainer", { containerId: mine }, as(owner))).status).toBe(
      200,
    );
    expect(await status(mine)).toBe("running");
    expect((await platform.mutate("docker.killContainer", { containerId: mine }, as(owner))).status).toBe(
      200,
    );
    expect(await status(mine)).toBe("exited");

    const events = await platform.query("docker.getEvents", { minutes: 5 }, as(owner));
    expect(events.status, JSON.stringify(events.body)).toBe(200);
    const names = events.body.events.map(
      (event: { Actor: { Attributes: { name: string } } }) => event.Actor.Attributes.name,
    );
    expect(names).toContain(mine);
    expect(names).not.toContain(theirs);
    expect(names).not.toContain(internal);
    const actions = events.body.events
      .filter((event: { Actor: { Attributes: { name: string } } }) => event.Actor.Attributes.name === mine)
      .map((event: { Action: string }) => event.Action);
    expect(actions).toEqual(expect.arrayContaining(["stop", "start", "kill"]));
    const tooLong = await platform.query("docker.getEvents", { minutes: 100_000 }, as(owner));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.data.fields).toEqual(["minutes"]);

    expect((await platform.mutate("docker.removeContainer", { containerId: mine }, as(owner))).status).toBe(
      200,
    );
    await expect(status(mine)).rejects.toThrow();
  }, 90_000);
});
