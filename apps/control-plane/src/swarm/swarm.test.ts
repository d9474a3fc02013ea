/**
 * swarm.* against this machine's engine (a single-node Swarm manager) through the in-process
 * agent. getNodes and getNodeInfo answer what `docker node ls` / `docker node inspect` answer;
 * getNodeApps and getContainerStats answer what `docker service ls` / `docker stats` show, for
 * the services and containers the caller may see: the owner (instance organization) its own and
 * the unmanaged ones, a member with canAccessToDocker only its organization's, nobody another
 * organization's or the platform's own. A member without the grant is refused; an unknown
 * serverId is a 404, a malformed one or a bad nodeId a 400 naming the field.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { applicationOwner, INTERNAL_LABEL, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { bytesSize, ioSize } from "./index.ts";

const prefix = uniqueName("cp-swarm");
const mine = `${prefix}-mine`;
const theirs = `${prefix}-theirs`;
const plain = `${prefix}-plain`;
const internal = `${prefix}-internal`;
const SERVICES = [mine, theirs, plain, internal];

let platform: TestPlatform;
let owner: Session;
let member: Session;
let ungranted: Session;
let mainDirectory: string;

const as = (session: Session) => ({ token: session.token });
const labelArgs = (labels: Record<string, string>) =>
  Object.entries(labels).flatMap(([key, value]) => [
    "--label",
    `${key}=${value}`,
    "--container-label",
    `${key}=${value}`,
  ]);

async function createService(name: string, labels: Record<string, string>) {
  await dockerCli([
    "service",
    "create",
    "--detach",
    "--no-resolve-image",
    "--name",
    name,
    ...labelArgs(labels),
    "--limit-memory",
    "64m",
    TEST_IMAGE,
    "sleep",
    "600",
  ]);
}

const cliRows = async (args: string[]) =>
  (await dockerCli(args))
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-swarm-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
  const organizationId = owner.user.organizationId;
  member = await createUserDirectly(platform, { email: "swarm-member@example.com", organizationId });
  const granted = await platform.mutate(
    "user.assignPermissions",
    { id: member.user.userId, canAccessToDocker: true },
    as(owner),
  );
  expect(granted.status, JSON.stringify(granted.body)).toBe(200);
  ungranted = await createUserDirectly(platform, { email: "swarm-ungranted@example.com", organizationId });
  const stranger = await createUserDirectly(platform, { email: "swarm-stranger@example.com" });
  await createService(mine, ownershipLabels(applicationOwner(organizationId, "app-mine")));
  await createService(theirs, ownershipLabels(applicationOwner(stranger.user.organizationId, "app-theirs")));
  await createService(plain, {});
  await createService(internal, { [INTERNAL_LABEL]: "true" });
  // Every task running: `docker service ls` then says 1/1 for each.
  await vi.waitFor(
    async () => {
      for (const name of SERVICES) {
        const replicas = await dockerCli([
          "service",
          "ls",
          "--filter",
          `name=${name}`,
          "--format",
          "{{.Replicas}}",
        ]);
        expect(replicas.trim(), name).toBe("1/1");
      }
    },
    { timeout: 90_000, interval: 500 },
  );
}, 120_000);

afterAll(async () => {
  await dockerCli(["service", "rm", ...SERVICES]).catch(() => {});
  await platform?.close();
  await rm(mainDirectory, { recursive: true, force: true });
});

describe("swarm.getNodes and swarm.getNodeInfo", () => {
  it("getNodes answers the rows `docker node ls --format json` prints, for this machine and for serverId local", async () => {
    const expected = await cliRows(["node", "ls", "--format", "{{json .}}"]);
    for (const input of [{}, { serverId: "local" }]) {
      const response = await platform.query("swarm.getNodes", input, as(owner));
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toEqual(expected);
    }
    const granted = await platform.query("swarm.getNodes", {}, as(member));
    expect(granted.body).toEqual(expected);
  });

  it("getNodeInfo answers `docker node inspect` of a nodeId or host name; an unknown node is a 404", async () => {
    const [self] = await cliRows(["node", "inspect", "self", "--format", "{{json .}}"]);
    const nodeId = self?.ID as string;
    const hostname = (self?.Description as { Hostname: string } | undefined)?.Hostname;
    for (const input of [{ nodeId }, { nodeId: hostname, serverId: "local" }]) {
      const response = await platform.query("swarm.getNodeInfo", input, as(owner));
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.ID).toBe(nodeId);
      expect(response.body.Description.Hostname).toBe(hostname);
      expect(response.body.Spec).toEqual(self?.Spec);
    }
    const unknown = await platform.query("swarm.getNodeInfo", { nodeId: "nosuchnode0000" }, as(owner));
    expect(unknown.status).toBe(404);
  });
});

describe("swarm.getNodeApps", () => {
  it("answers `docker service ls` rows: the owner its organization's and the unmanaged services", async () => {
    const response = await platform.query("swarm.getNodeApps", { serverId: "local" }, as(owner));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const names = (response.body as { Name: string }[]).map((row) => row.Name);
    expect(names).toContain(mine);
    expect(names).toContain(plain);
    expect(names).not.toContain(theirs);
    expect(names).not.toContain(internal);
    // No platform-internal service at all (the proxy, monitoring).
    expect(names.filter((name) => name.startsWith("platform-"))).toEqual([]);
    const [cli] = await cliRows(["service", "ls", "--filter", `name=${mine}`, "--format", "{{json .}}"]);
    expect(response.body.find((row: { Name: string }) => row.Name === mine)).toEqual(cli);
  });

  it("a member with canAccessToDocker sees only its organization's services", async () => {
    const response = await platform.query("swarm.getNodeApps", {}, as(member));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const names = (response.body as { Name: string }[]).map((row) => row.Name);
    expect(names).toContain(mine);
    expect(names).not.toContain(plain);
    expect(names).not.toContain(theirs);
    expect(names).not.toContain(internal);
  });
});

describe("swarm.getContainerStats", () => {
  it("answers `docker stats --no-stream` rows of the containers the caller may see", async () => {
    const containerOf = async (service: string) =>
      (
        await dockerCli([
          "ps",
          "--filter",
          `label=com.docker.swarm.service.name=${service}`,
          "--format",
          "{{.ID}} {{.Names}}",
        ])
      )
        .trim()
        .split(" ");
    const [mineId, mineName] = await containerOf(mine);
    const [plainId] = await containerOf(plain);
    const [theirId] = await containerOf(theirs);
    const [internalId] = await containerOf(internal);

    const response = await platform.query("swarm.getContainerStats", { serverId: "local" }, as(owner));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const rows = response.body as Record<string, string>[];
    const ids = rows.map((row) => row.ID);
    expect(ids).toContain(plainId);
    expect(ids).not.toContain(theirId);
    expect(ids).not.toContain(internalId);
    const row = rows.find((candidate) => candidate.ID === mineId);
    expect(row).toMatchObject({ Container: mineId, Name: mineName });
    // The 64m limit, as `docker stats` shows it.
    expect(row?.MemUsage).toMatch(/^[\d.]+(B|KiB|MiB) \/ 64MiB$/);
    expect(row?.CPUPerc).toMatch(/^\d+\.\d\d%$/);
    expect(row?.MemPerc).toMatch(/^\d+\.\d\d%$/);
    expect(row?.NetIO).toMatch(/^[\d.]+[kMG]?B \/ [\d.]+[kMG]?B$/);
    expect(row?.BlockIO).toMatch(/^[\d.]+[kMG]?B \/ [\d.]+[kMG]?B$/);

    const granted = await platform.query("swarm.getContainerStats", {}, as(member));
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    const grantedIds = (granted.body as { ID: string }[]).map((entry) => entry.ID);
    expect(grantedIds).toContain(mineId);
    expect(grantedIds).not.toContain(plainId);
    expect(grantedIds).not.toContain(theirId);
  }, 60_000);

  it("formats sizes as the docker CLI does", () => {
    expect(bytesSize(64 * 1024 * 1024)).toBe("64MiB");
    expect(bytesSize(10.5 * 1024 * 1024)).toBe("10.5MiB");
    expect(bytesSize(2087354368)).toBe("1.944GiB");
    expect(ioSize(0)).toBe("0B");
    expect(ioSize(1234)).toBe("1.23kB");
    expect(ioSize(648)).toBe("648B");
  });
});

describe("swarm.* access and input", () => {
  it.each(["getNodes", "getNodeApps", "getContainerStats"])(
    "%s: refused to a member without canAccessToDocker, unknown serverId is a 404, a bad one a 400",
    async (procedure) => {
      const refused = await platform.query(`swarm.${procedure}`, {}, as(ungranted));
      expect(refused.status).toBe(403);
      const unknown = await platform.query(`swarm.${procedure}`, { serverId: "no-such-server" }, as(owner));
      expect(unknown.status).toBe(404);
      const bad = await platform.query(`swarm.${procedure}`, { serverId: "a b" }, as(owner));
      expect(bad.status).toBe(400);
      expect(bad.body.error.data.fields).toEqual(["serverId"]);
    },
  );

  it("getNodeInfo: a nodeId that is no node id or host name is a 400 naming nodeId", async () => {
    const bad = await platform.query("swarm.getNodeInfo", { nodeId: "a;rm -rf /" }, as(owner));
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(["nodeId"]);
    const refused = await platform.query("swarm.getNodeInfo", { nodeId: "abc" }, as(ungranted));
    expect(refused.status).toBe(403);
  });
});

describe("a member granted some services (accessedServices)", () => {
  const granted = `${prefix}-granted`;
  let restricted: Session;

  beforeAll(async () => {
    const organizationId = owner.user.organizationId;
    const project = await platform.mutateOk("project.create", { name: "swarm-grants" }, as(owner));
    const environmentId = project.environment.environmentId as string;
    const grantedApp = await platform.mutateOk(
      "application.create",
      { name: "granted", environmentId },
      as(owner),
    );
    restricted = await createUserDirectly(platform, {
      email: "swarm-restricted@example.com",
      organizationId,
    });
    const assigned = await platform.mutate(
      "user.assignPermissions",
      { id: restricted.user.userId, canAccessToDocker: true, accessedServices: [grantedApp.applicationId] },
      as(owner),
    );
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    SERVICES.push(granted);
    await createService(granted, ownershipLabels(applicationOwner(organizationId, grantedApp.applicationId)));
    await vi.waitFor(
      async () => {
        const replicas = await dockerCli([
          "service",
          "ls",
          "--filter",
          `name=${granted}`,
          "--format",
          "{{.Replicas}}",
        ]);
        expect(replicas.trim()).toBe("1/1");
      },
      { timeout: 90_000, interval: 500 },
    );
  }, 120_000);

  it("sees only the services and containers of its granted services", async () => {
    const apps = await platform.query("swarm.getNodeApps", {}, as(restricted));
    expect(apps.status, JSON.stringify(apps.body)).toBe(200);
    expect((apps.body as { Name: string }[]).map((row) => row.Name)).toEqual([granted]);
    const stats = await platform.query("swarm.getContainerStats", {}, as(restricted));
    expect(stats.status, JSON.stringify(stats.body)).toBe(200);
    const names = (stats.body as { Name: string }[]).map((row) => row.Name);
    expect(names).toHaveLength(1);
    expect(names[0]?.startsWith(`${granted}.1.`)).toBe(true);
  }, 60_000);
});
