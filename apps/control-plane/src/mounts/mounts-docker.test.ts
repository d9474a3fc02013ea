/**
 * Mounts and Swarm settings on real Docker (issue 27): a volume keeps a file across a redeploy,
 * a file mount's content is served by the test image's httpd (and a new content reaches it on
 * the next deploy), a tenant's bind mount or another organization's volume is a 400, and a
 * Global mode with an endpointSpecSwarm port reaches the Swarm service (docker service inspect).
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
import { freePort, servedBody } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const appName = uniqueName("mnt-web");
const globalApp = uniqueName("mnt-global");
const volumeName = uniqueName("mnt-data");
let platform: TestPlatform;
let owner: Session;
let mainDirectory: string;

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "mounts-e2e-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await removeDeployedApps([appName, globalApp]);
  // The volume goes once the service's containers have.
  for (let attempt = 0; attempt < 30; attempt++) {
    if (
      await dockerCli(["volume", "rm", volumeName]).then(
        () => true,
        (error) => /no such volume/i.test(String(error)),
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 90_000);

const ok = (name: string, input: Record<string, unknown>, session = owner) =>
  platform.mutateOk(name, input, { token: session.token });

async function deploy(applicationId: string) {
  const { deploymentId } = await ok("application.deploy", { applicationId });
  const row = await platform.waitForDeployment(deploymentId);
  expect(row.status, row.logs ?? "").toBe("done");
}

describe("mounts on real Docker", () => {
  it("a volume keeps its file across a redeploy and a file mount is served, its new content on the next deploy", async () => {
    const project = await ok("project.create", { name: "Mounts" });
    const { applicationId } = await ok("application.create", {
      name: "web",
      appName,
      environmentId: project.environment.environmentId,
    });
    await ok("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    // The first task writes a random stamp into the volume; later ones find it there.
    await ok("application.update", {
      applicationId,
      command:
        "sh -c 'test -f /www/data/stamp.txt || head -c 12 /dev/urandom | od -An -tx1 | tr -d \" \\n\" > /www/data/stamp.txt; exec httpd -f -p 8080 -h /www'",
    });
    const port = await freePort();
    await ok("port.create", { applicationId, publishedPort: port, targetPort: 8080, publishMode: "host" });
    const volume = await ok("mounts.create", {
      type: "volume",
      volumeName,
      mountPath: "/www/data",
      serviceType: "application",
      serviceId: applicationId,
    });
    expect(volume).toMatchObject({ type: "volume", volumeName, applicationId, postgresId: null });
    const file = await ok("mounts.create", {
      type: "file",
      content: "first content\n",
      filePath: "conf/page.txt",
      mountPath: "/www/page.txt",
      serviceType: "application",
      serviceId: applicationId,
    });

    await deploy(applicationId);
    expect(await servedBody(port, "/page.txt", "first content")).toBe("first content");
    const stamp = (await (await fetch(`http://127.0.0.1:${port}/data/stamp.txt`)).text()).trim();
    expect(stamp).toMatch(/^[0-9a-f]{24}$/);
    // listByServiceId lists the service's mounts; allNamedByApplicationId what Docker mounted.
    const listed = await platform.query(
      "mounts.listByServiceId",
      { serviceId: applicationId, serviceType: "application" },
      { token: owner.token },
    );
    expect(listed.body.map((mount: { mountId: string }) => mount.mountId)).toEqual([
      volume.mountId,
      file.mountId,
    ]);
    const named = await platform.query(
      "mounts.allNamedByApplicationId",
      { applicationId },
      { token: owner.token },
    );
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    expect(named.body).toContainEqual(
      expect.objectContaining({ Type: "volume", Name: volumeName, Destination: "/www/data", RW: true }),
    );
    expect(named.body.every((mount: { Type: string }) => mount.Type === "volume")).toBe(true);
    const stranger = await createUserDirectly(platform, { email: "mounts-stranger@example.com" });
    for (const [name, input] of [
      ["mounts.allNamedByApplicationId", { applicationId }],
      ["mounts.listByServiceId", { serviceId: applicationId, serviceType: "application" }],
    ] as const) {
      expect((await platform.query(name, input, { token: stranger.token })).status).toBe(404);
    }
    const labels = JSON.parse(
      await dockerCli(["volume", "inspect", "--format", "{{json .Labels}}", volumeName]),
    );
    expect(labels).toMatchObject({
      "platform.managed": "true",
      "platform.resource": `application:${applicationId}`,
    });

    await ok("mounts.update", { mountId: file.mountId, content: "second content\n" });
    await deploy(applicationId);
    expect(await servedBody(port, "/page.txt", "second content")).toBe("second content");
    expect(await servedBody(port, "/data/stamp.txt", stamp)).toBe(stamp);
    // The Swarm name never changed.
    expect((await dockerCli(["service", "inspect", "--format", "{{.Spec.Name}}", appName])).trim()).toBe(
      appName,
    );
  }, 240_000);

  it("refuses a tenant's bind mount, the Docker socket and another organization's volume with a 400", async () => {
    const tenant = await platform.addMember(owner, "member");
    const created = await ok("organization.create", { name: "Tenant" }, tenant);
    await ok("organization.setActive", { organizationId: created.id }, tenant);
    const project = await ok("project.create", { name: "Tenant project" }, tenant);
    const { applicationId } = await ok(
      "application.create",
      { name: "t", appName: uniqueName("mnt-tenant"), environmentId: project.environment.environmentId },
      tenant,
    );
    const attempt = (input: Record<string, unknown>) =>
      platform.mutate(
        "mounts.create",
        { serviceType: "application", serviceId: applicationId, mountPath: "/data", ...input },
        { token: tenant.token },
      );
    for (const hostPath of ["/var/run/docker.sock", "/etc", "/home"]) {
      const refused = await attempt({ type: "bind", hostPath });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["hostPath"]);
    }
    const foreign = await attempt({ type: "volume", volumeName });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.data.fields).toEqual(["volumeName"]);
    const outside = await attempt({ type: "file", content: "x", filePath: "../../etc/passwd" });
    expect(outside.status).toBe(400);
    expect(outside.body.error.data.fields).toEqual(["filePath"]);
    // A volume of its own is fine; the owner's mounts are not the tenant's to see.
    const own = await attempt({ type: "volume", volumeName: uniqueName("mnt-own") });
    expect(own.status).toBe(200);
    // mounts.update's owner fields (Dokploy's CLI sends them) must be the mount's own.
    const update = (input: Record<string, unknown>) =>
      platform.mutate("mounts.update", { mountId: own.body.mountId, ...input }, { token: tenant.token });
    const same = await update({
      serviceType: "application",
      applicationId,
      postgresId: null,
      libsqlId: null,
      mountPath: "/kept",
    });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body).toMatchObject({ mountPath: "/kept", applicationId, serviceType: "application" });
    const movedType = await update({ serviceType: "compose", mountPath: "/moved" });
    expect(movedType.status).toBe(400);
    expect(movedType.body.error.data.fields).toEqual(["serviceType"]);
    // An owner id is looked up first: one the tenant has no such service by is a 404, like any unknown id.
    for (const input of [
      { applicationId: "another-application" },
      ...(["postgresId", "mysqlId", "mariadbId", "mongoId", "redisId", "libsqlId", "composeId"] as const).map(
        (key) => ({
          [key]: applicationId,
        }),
      ),
    ]) {
      const moved = await update({ ...input, mountPath: "/moved" });
      expect(moved.status, JSON.stringify(input)).toBe(404);
    }
    expect(
      (await platform.query("mounts.one", { mountId: own.body.mountId }, { token: tenant.token })).body
        .mountPath,
    ).toBe("/kept");
    const ownerMount = await platform.ctx.db
      .selectFrom("mounts")
      .select("mountId")
      .where("organizationId", "!=", created.id)
      .executeTakeFirstOrThrow();
    const seen = await platform.query("mounts.one", { mountId: ownerMount.mountId }, { token: tenant.token });
    expect(seen.status).toBe(404);
    const nothing = await platform.mutate(
      "mounts.create",
      {
        type: "volume",
        volumeName: uniqueName("mnt-x"),
        mountPath: "/d",
        serviceType: "application",
        serviceId: "nope",
      },
      { token: tenant.token },
    );
    expect(nothing.status).toBe(404);
  }, 60_000);
});

describe("Swarm settings on real Docker", () => {
  it("modeSwarm Global and an endpointSpecSwarm port reach the service; a reserved port is a 400", async () => {
    const project = await ok("project.create", { name: "Swarm" });
    const { applicationId } = await ok("application.create", {
      name: "global",
      appName: globalApp,
      environmentId: project.environment.environmentId,
    });
    await ok("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    const reserved = await platform.mutate(
      "application.update",
      {
        applicationId,
        endpointSpecSwarm: { Ports: [{ TargetPort: 8080, PublishedPort: 22, PublishMode: "host" }] },
      },
      { token: owner.token },
    );
    expect(reserved.status).toBe(400);
    expect(reserved.body.error.data.fields).toEqual(["endpointSpecSwarm"]);
    const port = await freePort();
    await ok("application.update", {
      applicationId,
      command: "httpd -f -p 8080 -h /www",
      modeSwarm: { Global: {} },
      endpointSpecSwarm: { Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: "host" }] },
    });
    await deploy(applicationId);
    const spec = JSON.parse(await dockerCli(["service", "inspect", "--format", "{{json .Spec}}", globalApp]));
    expect(spec.Mode).toEqual({ Global: {} });
    expect(spec.EndpointSpec.Ports).toEqual([
      expect.objectContaining({ TargetPort: 8080, PublishedPort: port, PublishMode: "host" }),
    ]);
    expect(await servedBody(port, "/", "platform test image")).toBe("platform test image");
  }, 240_000);
});
