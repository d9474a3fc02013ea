/**
 * network.* through the API and the embedded agent on the real engine: the owner's organization
 * creates attachable overlays in its own namespace, reads, inspects and removes them; reserved
 * names (platform-network, ingress) are a 400 naming `name`; another organization's network is
 * a 404 to every procedure and stays, on the engine and in the table; a network a container uses
 * is a 409 naming that container.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { organizationNetworkName } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../crypto/ids.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const image = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
const prefix = uniqueName("cp-net");
let mainDirectory: string;
let platform: TestPlatform;
let owner: Session;
let member: Session;
let stranger: Session;
let theirNetworkId: string;
let theirDockerName: string;
const dockerNames: string[] = [];
const containers: string[] = [];

const as = (session: Session) => ({ token: session.token });
const fieldsOf = (body: { error?: { data?: { fields?: string[] } } }) => body.error?.data?.fields ?? [];
const engineNetwork = async (name: string) =>
  JSON.parse(await dockerCli(["network", "inspect", name, "--format", "{{json .}}"])) as {
    Name: string;
    Driver: string;
    Attachable: boolean;
    Internal: boolean;
    Labels: Record<string, string>;
  };
const onEngine = (name: string) =>
  dockerCli(["network", "inspect", name]).then(
    () => true,
    () => false,
  );

async function goneEventually(name: string): Promise<boolean> {
  for (let attempt = 0; attempt < 60; attempt++) {
    if (!(await onEngine(name))) return true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-net-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
  member = await createUserDirectly(platform, {
    email: "network-member@example.com",
    organizationId: owner.user.organizationId,
  });
  stranger = await createUserDirectly(platform, { email: "network-stranger@example.com" });
  // Another organization's network on this engine, with its row (as its own network.create makes).
  theirNetworkId = newId();
  theirDockerName = organizationNetworkName(stranger.user.organizationId, `${prefix}-theirs`);
  dockerNames.push(theirDockerName);
  await dockerCli([
    "network",
    "create",
    "--driver",
    "overlay",
    "--attachable",
    "--label",
    `platform.organization=${stranger.user.organizationId}`,
    theirDockerName,
  ]);
  await platform.ctx.db
    .insertInto("networks")
    .values({
      networkId: theirNetworkId,
      organizationId: stranger.user.organizationId,
      serverId: null,
      name: `${prefix}-theirs`,
      dockerName: theirDockerName,
      driver: "overlay",
      dockerId: null,
      createdAt: new Date().toISOString(),
    })
    .execute();
}, 120_000);

afterAll(async () => {
  for (const name of containers) await dockerCli(["rm", "-f", name]).catch(() => {});
  for (const name of dockerNames) await dockerCli(["network", "rm", name]).catch(() => {});
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

describe("network.*", () => {
  let networkId: string;
  let dockerName: string;

  it("create makes an attachable overlay named in the organization's namespace and labelled with it; all, one and inspect answer it", async () => {
    const created = await platform.mutate(
      "network.create",
      { name: `${prefix}-backend`, serverId: "local" },
      as(owner),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    networkId = created.body.networkId;
    dockerName = created.body.dockerName;
    dockerNames.push(dockerName);
    expect(dockerName).toBe(organizationNetworkName(owner.user.organizationId, `${prefix}-backend`));
    expect(created.body).toMatchObject({ name: `${prefix}-backend`, driver: "overlay", attachable: true });
    const engine = await engineNetwork(dockerName);
    expect(engine).toMatchObject({ Driver: "overlay", Attachable: true, Internal: false });
    expect(engine.Labels["platform.organization"]).toBe(owner.user.organizationId);

    const all = await platform.query("network.all", { serverId: "local" }, as(member));
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect((all.body as { networkId: string }[]).map((network) => network.networkId)).toContain(networkId);
    expect((all.body as { networkId: string }[]).map((network) => network.networkId)).not.toContain(
      theirNetworkId,
    );
    const one = await platform.query("network.one", { networkId }, as(member));
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ networkId, dockerName });
    const inspect = await platform.query("network.inspect", { networkId }, as(member));
    expect(inspect.status, JSON.stringify(inspect.body)).toBe(200);
    expect(inspect.body).toMatchObject({ Name: dockerName, Driver: "overlay" });
  }, 60_000);

  it("create takes driver bridge and internal", async () => {
    const created = await platform.mutate(
      "network.create",
      { name: `${prefix}-internal`, driver: "bridge", internal: true },
      as(owner),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    dockerNames.push(created.body.dockerName);
    expect(await engineNetwork(created.body.dockerName)).toMatchObject({ Driver: "bridge", Internal: true });
    const removed = await platform.mutate("network.remove", { networkId: created.body.networkId }, as(owner));
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
  }, 60_000);

  it("create takes mtu (as the CLI's text or a number): the engine's network has the driver option, one answers it; a bad one is a 400 naming mtu", async () => {
    const created = await platform.mutate(
      "network.create",
      { name: `${prefix}-mtu`, mtu: "1400" },
      as(owner),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    dockerNames.push(created.body.dockerName);
    expect(created.body.mtu).toBe(1400);
    const engine = (await engineNetwork(created.body.dockerName)) as unknown as {
      Options: Record<string, string>;
    };
    expect(engine.Options["com.docker.network.driver.mtu"]).toBe("1400");
    const one = await platform.query("network.one", { networkId: created.body.networkId }, as(owner));
    expect(one.body).toMatchObject({ mtu: 1400 });
    const plain = await platform.mutate(
      "network.create",
      { name: `${prefix}-nomtu`, driver: "bridge" },
      as(owner),
    );
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    dockerNames.push(plain.body.dockerName);
    expect(plain.body.mtu).toBeNull();
    const plainEngine = (await engineNetwork(plain.body.dockerName)) as unknown as {
      Options: Record<string, string> | null;
    };
    expect(plainEngine.Options?.["com.docker.network.driver.mtu"]).toBeUndefined();
    for (const mtu of ["abc", 20, 70000]) {
      const refused = await platform.mutate("network.create", { name: `${prefix}-badmtu`, mtu }, as(owner));
      expect(refused.status).toBe(400);
      expect(fieldsOf(refused.body)).toContain("mtu");
    }
    for (const network of [created, plain]) {
      const removed = await platform.mutate(
        "network.remove",
        { networkId: network.body.networkId },
        as(owner),
      );
      expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    }
  }, 60_000);

  it("reserved names (platform-network, ingress, platform-*), a duplicate name and a member's create are refused, and nothing is created", async () => {
    for (const name of ["platform-network", "ingress", "Platform-net", "bridge", "-x"]) {
      const response = await platform.mutate("network.create", { name }, as(owner));
      expect(response.status, name).toBe(400);
      expect(fieldsOf(response.body)).toContain("name");
    }
    const again = await platform.mutate("network.create", { name: `${prefix}-backend` }, as(owner));
    expect(again.status).toBe(409);
    expect(fieldsOf(again.body)).toContain("name");
    const byMember = await platform.mutate("network.create", { name: `${prefix}-member` }, as(member));
    expect(byMember.status).toBe(403);
    const rows = await platform.ctx.db
      .selectFrom("networks")
      .select("name")
      .where("organizationId", "=", owner.user.organizationId)
      .execute();
    expect(rows.map((row) => row.name)).toEqual([`${prefix}-backend`]);
    expect(await onEngine(organizationNetworkName(owner.user.organizationId, `${prefix}-member`))).toBe(
      false,
    );
  });

  it("another organization's network is a 404 to one, inspect and remove, and stays on the engine and in the table", async () => {
    for (const procedure of ["network.one", "network.inspect"]) {
      const response = await platform.query(procedure, { networkId: theirNetworkId }, as(owner));
      expect(response.status, procedure).toBe(404);
    }
    const removed = await platform.mutate("network.remove", { networkId: theirNetworkId }, as(owner));
    expect(removed.status).toBe(404);
    expect(await onEngine(theirDockerName)).toBe(true);
    const row = await platform.ctx.db
      .selectFrom("networks")
      .select("networkId")
      .where("networkId", "=", theirNetworkId)
      .executeTakeFirst();
    expect(row).toBeDefined();
    // The stranger's own organization cannot act on this machine's engine at all (not its server).
    const strangerCreate = await platform.mutate("network.create", { name: "mine" }, as(stranger));
    expect(strangerCreate.status).toBe(400);
    expect(fieldsOf(strangerCreate.body)).toContain("serverId");
  });

  it("remove is a 409 naming the container that uses the network; once unused it goes from the engine and the table", async () => {
    const user = `${prefix}-user`;
    containers.push(user);
    await dockerCli(["run", "-d", "--name", user, "--network", dockerName, image, "sleep", "300"]);
    const refused = await platform.mutate("network.remove", { networkId }, as(owner));
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain(user);
    expect(await onEngine(dockerName)).toBe(true);
    await dockerCli(["rm", "-f", user]);
    const removed = await platform.mutate("network.remove", { networkId }, as(owner));
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(await goneEventually(dockerName)).toBe(true);
    const one = await platform.query("network.one", { networkId }, as(owner));
    expect(one.status).toBe(404);
  }, 60_000);
});
