/**
 * Instance settings of issue 39 on the real database and deployment queue: cleanSSHPrivateKey,
 * cleanAllDeploymentQueue (an organization's administrator drops only its own waiting
 * deployments, the instance administrator every one; running ones go on), updateRemoteServersOnly
 * (this machine then takes no new deployment), getDockerDiskUsage (this machine's engine),
 * getReleaseTag and getUpdateData (a release document served on 127.0.0.1 through the outbound
 * guard; none configured answers no update).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AGENT_VERSION } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";
import { compareVersions } from "./instance-settings.ts";

let platform: TestPlatform;
let owner: Session;
let tenant: Session;
let tenantServerId: string;
/** Each started run waits here until released: the first deployment of a service stays running. */
const held: (() => void)[] = [];
const as = (session: Session) => ({ token: session.token });

beforeAll(async () => {
  platform = await startTestPlatform(
    {},
    {
      deployments: {
        concurrency: 4,
        runner: () =>
          new Promise((resolve) => held.push(() => resolve({ imageName: "platform-test/busybox:latest" }))),
      },
    },
  );
  owner = await platform.registerOwner();
  tenant = await platform.addMember(owner, "member", "tenant@example.com");
  const created = await platform.mutateOk("organization.create", { name: "Tenant" }, as(tenant));
  await platform.mutateOk("organization.setActive", { organizationId: created.id }, as(tenant));
  tenant = { ...tenant, user: { ...tenant.user, organizationId: created.id } };
  tenantServerId = await insertServer(platform.ctx.db, created.id, { name: "tenant-node" });
});

afterAll(async () => {
  for (const release of held.splice(0)) release();
  await platform?.close();
});

async function applicationOf(session: Session, name: string, serverId?: string): Promise<string> {
  const project = await platform.mutateOk("project.create", { name: `${name} project` }, as(session));
  const { applicationId } = await platform.mutateOk(
    "application.create",
    { name, environmentId: project.environment.environmentId, ...(serverId ? { serverId } : {}) },
    as(session),
  );
  return applicationId;
}

const statusOf = async (deploymentId: string) =>
  (
    await platform.ctx.db
      .selectFrom("deployments")
      .select(["status", "errorMessage"])
      .where("deploymentId", "=", deploymentId)
      .executeTakeFirstOrThrow()
  ).status;

async function waitForStatus(deploymentId: string, status: string): Promise<void> {
  // A deployment's worker may wait behind others on a loaded machine: a minute, not 10 s.
  for (let attempt = 0; attempt < 1_200; attempt++) {
    if ((await statusOf(deploymentId)) === status) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`deployment ${deploymentId} never became ${status}`);
}

/** One running deployment (held by the runner) and one waiting behind it. */
async function runningAndWaiting(session: Session, applicationId: string) {
  const running = await platform.mutateOk("application.deploy", { applicationId }, as(session));
  await waitForStatus(running.deploymentId, "running");
  const waiting = await platform.mutateOk("application.deploy", { applicationId }, as(session));
  expect(await statusOf(waiting.deploymentId)).toBe("idle");
  return { running: running.deploymentId, waiting: waiting.deploymentId };
}

describe("settings.cleanAllDeploymentQueue", () => {
  it("drops only the caller's organization's waiting deployments; the instance administrator's drops every one", async () => {
    const ownerApp = await runningAndWaiting(owner, await applicationOf(owner, "owner-app"));
    const tenantApp = await runningAndWaiting(
      tenant,
      await applicationOf(tenant, "tenant-app", tenantServerId),
    );

    const member = await platform.addMember(owner, "member", "queue-member@example.com");
    expect((await platform.mutate("settings.cleanAllDeploymentQueue", {}, as(member))).status).toBe(403);

    const byTenant = await platform.mutate("settings.cleanAllDeploymentQueue", {}, as(tenant));
    expect(byTenant.status, JSON.stringify(byTenant.body)).toBe(200);
    expect(byTenant.body).toEqual({ success: true });
    expect(await statusOf(tenantApp.waiting)).toBe("error");
    expect(await statusOf(ownerApp.waiting)).toBe("idle");
    expect(await statusOf(tenantApp.running)).toBe("running");

    const byOwner = await platform.mutate("settings.cleanAllDeploymentQueue", {}, as(owner));
    expect(byOwner.status, JSON.stringify(byOwner.body)).toBe(200);
    expect(await statusOf(ownerApp.waiting)).toBe("error");
    expect(await statusOf(ownerApp.running)).toBe("running");

    // The dropped ones never run: releasing the running ones ends them, nothing else starts.
    for (const release of held.splice(0)) release();
    await waitForStatus(ownerApp.running, "done");
    await waitForStatus(tenantApp.running, "done");
    expect(held).toHaveLength(0);
    expect(await statusOf(ownerApp.waiting)).toBe("error");
  });
});

describe("settings.updateRemoteServersOnly", () => {
  it("makes this machine take no new deployment (a 400 naming serverId) until turned off; servers still deploy", async () => {
    const local = await applicationOf(owner, "local-app");
    const remote = await applicationOf(tenant, "remote-app", tenantServerId);
    expect(
      (await platform.mutate("settings.updateRemoteServersOnly", { remoteServersOnly: true }, as(tenant)))
        .status,
    ).toBe(403);
    const on = await platform.mutate(
      "settings.updateRemoteServersOnly",
      { remoteServersOnly: true },
      as(owner),
    );
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(
      (await platform.query("settings.getWebServerSettings", {}, as(owner))).body.remoteServersOnly,
    ).toBe(true);

    const refused = await platform.mutate("application.deploy", { applicationId: local }, as(owner));
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.data.fields).toEqual(["serverId"]);
    const onServer = await platform.mutate("application.deploy", { applicationId: remote }, as(tenant));
    expect(onServer.status, JSON.stringify(onServer.body)).toBe(200);

    await platform.mutateOk("settings.updateRemoteServersOnly", { remoteServersOnly: false }, as(owner));
    const allowed = await platform.mutate("application.deploy", { applicationId: local }, as(owner));
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    await waitForStatus(allowed.body.deploymentId, "running");
    await waitForStatus(onServer.body.deploymentId, "running");
    for (const release of held.splice(0)) release();
    await waitForStatus(allowed.body.deploymentId, "done");
    await waitForStatus(onServer.body.deploymentId, "done");
  });

  it("refuses a value that is not a boolean, naming the field", async () => {
    const bad = await platform.mutate(
      "settings.updateRemoteServersOnly",
      { remoteServersOnly: "yes" },
      as(owner),
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("remoteServersOnly");
  });
});

describe("settings.cleanSSHPrivateKey", () => {
  it("forgets the stored key (getWebServerSettings shows none); instance administrators only", async () => {
    const pair = await platform.mutateOk("sshKey.generate", { type: "ed25519" }, as(owner));
    await platform.mutateOk("settings.saveSSHPrivateKey", { sshPrivateKey: pair.privateKey }, as(owner));
    expect((await platform.query("settings.getWebServerSettings", {}, as(owner))).body.sshPrivateKey).toBe(
      "[redacted]",
    );
    expect((await platform.mutate("settings.cleanSSHPrivateKey", {}, as(tenant))).status).toBe(403);
    const cleaned = await platform.mutate("settings.cleanSSHPrivateKey", {}, as(owner));
    expect(cleaned.status, JSON.stringify(cleaned.body)).toBe(200);
    expect(
      (await platform.query("settings.getWebServerSettings", {}, as(owner))).body.sshPrivateKey,
    ).toBeNull();
    const row = await platform.ctx.db
      .selectFrom("webServerSettings")
      .select("sshPrivateKeySealed")
      .executeTakeFirstOrThrow();
    expect(row.sshPrivateKeySealed).toBeNull();
  });
});

describe("settings.getDockerDiskUsage", () => {
  it("answers this machine's engine usage (the build cache row too) to the instance administrator only", async () => {
    const usage = await platform.query("settings.getDockerDiskUsage", {}, as(owner));
    expect(usage.status, JSON.stringify(usage.body)).toBe(200);
    const types = usage.body.map((item: { type: string }) => item.type);
    expect(types).toEqual(expect.arrayContaining(["Images", "Containers", "Local Volumes", "Build Cache"]));
    const images = usage.body.find((item: { type: string }) => item.type === "Images");
    expect(images.totalCount).toBeGreaterThan(0);
    expect(images.sizeBytes).toBeGreaterThan(0);
    expect((await platform.query("settings.getDockerDiskUsage", {}, as(tenant))).status).toBe(403);
  });
});

describe("settings.getReleaseTag and settings.getUpdateData", () => {
  let releaseServer: Server;
  let document = JSON.stringify({ version: "99.0.0" });

  beforeAll(async () => {
    releaseServer = createServer((_request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(document);
    });
    await new Promise<void>((resolve) => releaseServer.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => releaseServer.close(resolve));
  });

  it("without a release URL: the version as tag, and no update known", async () => {
    const member = await platform.addMember(owner, "member", "release-member@example.com");
    expect((await platform.query("settings.getReleaseTag", {}, as(member))).body).toBe(AGENT_VERSION);
    const data = await platform.mutate("settings.getUpdateData", {}, as(member));
    expect(data.status, JSON.stringify(data.body)).toBe(200);
    expect(data.body).toEqual({ updateAvailable: false, latestVersion: null });
  });

  it("reads the configured release document through the outbound guard", async () => {
    const { port } = releaseServer.address() as AddressInfo;
    const configured = await startTestPlatform({
      PLATFORM_RELEASE_URL: `http://127.0.0.1:${port}/release.json`,
      PLATFORM_RELEASE_TAG: "v7-stable",
      PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
    });
    const refused = await startTestPlatform({
      PLATFORM_RELEASE_URL: `http://127.0.0.1:${port}/release.json`,
    });
    try {
      const admin = await configured.registerOwner();
      expect((await configured.query("settings.getReleaseTag", {}, as(admin))).body).toBe("v7-stable");
      document = JSON.stringify({ version: "99.0.0" });
      expect((await configured.mutate("settings.getUpdateData", {}, as(admin))).body).toEqual({
        updateAvailable: true,
        latestVersion: "99.0.0",
      });
      document = JSON.stringify({ version: AGENT_VERSION });
      expect((await configured.mutate("settings.getUpdateData", {}, as(admin))).body).toEqual({
        updateAvailable: false,
        latestVersion: AGENT_VERSION,
      });
      document = "not json";
      expect((await configured.mutate("settings.getUpdateData", {}, as(admin))).status).toBe(503);

      // Loopback is not allowed there: the guard refuses before any request is sent.
      const other = await refused.registerOwner();
      const answer = await refused.mutate("settings.getUpdateData", {}, as(other));
      expect(answer.status).toBe(503);
      expect(answer.body.error.message).toMatch(/release document could not be read/);
    } finally {
      await configured.close();
      await refused.close();
    }
  });

  it("compares versions by number", () => {
    expect(
      [
        ["0.10.0", "0.9.9", 1],
        ["v1.2.3", "1.2.3", 0],
        ["1.2.3", "1.10.0", -1],
        ["2.0.0", "10.0.0", -1],
      ].map(([a, b]) => compareVersions(a as string, b as string)),
    ).toEqual([1, 0, -1, -1]);
  });
});
