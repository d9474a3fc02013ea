/**
 * networkIds and network.import/resync/networksToSync/recreate on real Docker (issue 39 item 4):
 * an application whose networkIds names an organization network is deployed joined to it (docker
 * service inspect) and answers by its name on that network; removing the network is a
 * 409 naming the application; another organization's network in networkIds is a 400 naming the
 * field and changes nothing; import records an unlabelled engine network for the owner and
 * refuses the platform network and another organization's; resync records a labelled network the
 * table lacks and drops a row whose network is gone; recreate brings a removed network back.
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
import { organizationNetworkName } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../crypto/ids.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const NETCLIENT = "platform-test/netclient:latest";
const prefix = uniqueName("cp-natt");
const appName = uniqueName("natt-web");
let mainDirectory: string;
let platform: TestPlatform;
let owner: Session;
let stranger: Session;
let theirNetworkId: string;
let theirDockerName: string;
const dockerNames: string[] = [];

const as = (session: Session) => ({ token: session.token });
const ok = (name: string, input: Record<string, unknown>, session = owner) =>
  platform.mutateOk(name, input, as(session));
const fieldsOf = (body: { error?: { data?: { fields?: string[] } } }) => body.error?.data?.fields ?? [];
const onEngine = (name: string) =>
  dockerCli(["network", "inspect", name]).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-natt-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
  stranger = await createUserDirectly(platform, { email: "natt-stranger@example.com" });
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
    "platform.managed=true",
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
  await removeDeployedApps([appName]);
  for (const name of dockerNames) {
    for (let attempt = 0; attempt < 20; attempt++) {
      if (
        await dockerCli(["network", "rm", name]).then(
          () => true,
          () => false,
        )
      )
        break;
      if (!(await onEngine(name))) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 90_000);

describe("networkIds", () => {
  let networkId: string;
  let dockerName: string;
  let applicationId: string;

  it("another organization's network in networkIds is a 400 naming the field and nothing is stored; the organization's own is stored", async () => {
    const network = await ok("network.create", { name: `${prefix}-shared` });
    networkId = network.networkId;
    dockerName = network.dockerName;
    dockerNames.push(dockerName);
    const project = await ok("project.create", { name: "Networks" });
    ({ applicationId } = await ok("application.create", {
      name: "web",
      appName,
      environmentId: project.environment.environmentId,
    }));
    await ok("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    for (const ids of [[theirNetworkId], [networkId, theirNetworkId], ["no-such-network"]]) {
      const refused = await platform.mutate(
        "application.update",
        { applicationId, networkIds: ids, description: "changed" },
        as(owner),
      );
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(fieldsOf(refused.body)).toContain("networkIds");
    }
    const before = await platform.query("application.one", { applicationId }, as(owner));
    expect(before.body).toMatchObject({ networkIds: [] });
    expect(before.body.description).not.toBe("changed");

    await ok("application.update", {
      applicationId,
      networkIds: [networkId],
      command: "httpd -f -p 8080 -h /www",
    });
    const after = await platform.query("application.one", { applicationId }, as(owner));
    expect(after.body).toMatchObject({ networkIds: [networkId] });
  }, 60_000);

  it("the deployed service joins the network besides the platform network (docker service inspect); removing the network is a 409 naming the application", async () => {
    const { deploymentId } = await ok("application.deploy", { applicationId });
    const row = await platform.waitForDeployment(deploymentId);
    expect(row.status, row.logs ?? "").toBe("done");
    const engineId = (await dockerCli(["network", "inspect", dockerName, "--format", "{{.Id}}"])).trim();
    const targets = JSON.parse(
      await dockerCli(["service", "inspect", appName, "--format", "{{json .Spec.TaskTemplate.Networks}}"]),
    ) as { Target: string }[];
    expect(targets.map((target) => target.Target)).toContain(engineId);
    expect(targets.length).toBeGreaterThanOrEqual(2);

    // Reached by its name on the organization's network, as another of its services would:
    // curl from a container attached to that network (busybox's static wget crashes on any
    // request, so the netclient image asks). Any HTTP status proves name and route.
    let status = "";
    for (let attempt = 0; attempt < 20 && !/^\d{3}$/.test(status); attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
      status = await dockerCli([
        "run",
        "--rm",
        "--network",
        dockerName,
        NETCLIENT,
        "curl",
        "-sS",
        "-m",
        "5",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        `http://${appName}:8080/`,
      ]).then(
        (out) => out.trim(),
        (error: Error) => error.message,
      );
    }
    expect(status).toMatch(/^\d{3}$/);

    const refused = await platform.mutate("network.remove", { networkId }, as(owner));
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("application web");
    expect(await onEngine(dockerName)).toBe(true);
  }, 240_000);
});

describe("network.import, networksToSync, resync, recreate", () => {
  it("import records an unlabelled engine network for the owner; the platform network and another organization's are errors and nothing is recorded for them", async () => {
    const loose = `${prefix}-loose`;
    dockerNames.push(loose);
    await dockerCli(["network", "create", "--driver", "overlay", "--attachable", loose]);
    const sync = await platform.query("network.networksToSync", {}, as(owner));
    expect(sync.status, JSON.stringify(sync.body)).toBe(200);
    const importable = (sync.body.importable as { name: string }[]).map((network) => network.name);
    expect(importable).toContain(loose);
    expect(importable).not.toContain(theirDockerName);
    expect(importable).not.toContain("ingress");
    expect(importable.some((name) => name.startsWith("platform-"))).toBe(false);

    const platformNetwork = platform.ctx.config.platformNetwork ?? "platform-network";
    const result = await ok("network.import", {
      names: [loose, theirDockerName, platformNetwork, "ingress"],
    });
    expect(result.imported).toEqual([loose]);
    expect((result.errors as { name: string }[]).map((error) => error.name).sort()).toEqual(
      [theirDockerName, platformNetwork, "ingress"].sort(),
    );
    const rows = await platform.ctx.db
      .selectFrom("networks")
      .select(["dockerName", "organizationId"])
      .where("organizationId", "=", owner.user.organizationId)
      .execute();
    expect(rows.map((row) => row.dockerName)).toContain(loose);
    expect(rows.map((row) => row.dockerName)).not.toContain(theirDockerName);
    const theirs = await platform.ctx.db
      .selectFrom("networks")
      .select("organizationId")
      .where("dockerName", "=", theirDockerName)
      .execute();
    expect(theirs.map((row) => row.organizationId)).toEqual([stranger.user.organizationId]);
  }, 60_000);

  it("another organization's network id is a 404 to recreate and the stranger cannot import on this machine", async () => {
    const recreate = await platform.mutate("network.recreate", { networkId: theirNetworkId }, as(owner));
    expect(recreate.status).toBe(404);
    const strangerImport = await platform.mutate(
      "network.import",
      { names: [theirDockerName] },
      as(stranger),
    );
    expect(strangerImport.status).toBe(400);
    expect(fieldsOf(strangerImport.body)).toContain("serverId");
  });

  it("resync records a labelled network the table lacks and drops a row whose network is gone; recreate brings a removed network back", async () => {
    const lost = await ok("network.create", { name: `${prefix}-lost` });
    dockerNames.push(lost.dockerName);
    await platform.ctx.db.deleteFrom("networks").where("networkId", "=", lost.networkId).execute();
    const gone = await ok("network.create", { name: `${prefix}-gone` });
    await dockerCli(["network", "rm", gone.dockerName]);

    const sync = await platform.query("network.networksToSync", {}, as(owner));
    expect((sync.body.missing as { networkId: string }[]).map((row) => row.networkId)).toContain(
      gone.networkId,
    );
    expect((sync.body.importable as { name: string }[]).map((row) => row.name)).toContain(lost.dockerName);

    const recreated = await platform.mutate("network.recreate", { networkId: gone.networkId }, as(owner));
    expect(recreated.status, JSON.stringify(recreated.body)).toBe(200);
    dockerNames.push(gone.dockerName);
    expect(await onEngine(gone.dockerName)).toBe(true);
    await dockerCli(["network", "rm", gone.dockerName]);

    const resync = await ok("network.resync", {});
    expect((resync.imported as { dockerName: string }[]).map((row) => row.dockerName)).toContain(
      lost.dockerName,
    );
    expect((resync.removed as { networkId: string }[]).map((row) => row.networkId)).toContain(gone.networkId);
    const one = await platform.query("network.one", { networkId: gone.networkId }, as(owner));
    expect(one.status).toBe(404);
  }, 90_000);
});
