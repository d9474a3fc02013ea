/**
 * server.count, withSSHKey, buildServers, allForPermissions, getServerTime, getDefaultCommand and
 * getServices (Dokploy 0.30.7's): each lists only the caller's organization's servers, another
 * organization's serverId is a 404, getServices hides a restricted member's ungranted services,
 * and the cloud edition lists only active servers with an SSH key.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";

let platform: TestPlatform;
let owner: Session;
let admin: Session;
let member: Session;
let stranger: Session;
const as = (session: Session) => ({ token: session.token });

async function createKey(session: Session) {
  const pair = (await platform.mutate("sshKey.generate", { type: "ed25519" }, as(session))).body;
  const created = await platform.mutate("sshKey.create", { name: "key", ...pair }, as(session));
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.sshKeyId as string;
}

async function createServer(session: Session, input: Record<string, unknown>) {
  const created = await platform.mutate(
    "server.create",
    { ipAddress: "198.51.100.30", username: "root", ...input },
    as(session),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.serverId as string;
}

const names = (body: { name: string }[]) => body.map((server) => server.name);

beforeAll(async () => {
  platform = await startTestPlatform({ PLATFORM_URL: "http://127.0.0.1:3000" });
  owner = await platform.registerOwner();
  admin = await platform.addMember(owner, "admin");
  member = await platform.addMember(owner, "member");
  stranger = await createUserDirectly(platform, { email: "lists-stranger@example.com" });
});

afterAll(async () => {
  await platform?.close();
});

describe("server lists", () => {
  let ourKey: string;
  beforeAll(async () => {
    ourKey = await createKey(owner);
    const theirKey = await createKey(stranger);
    await createServer(owner, { name: "deploy-with-key", sshKeyId: ourKey });
    await createServer(owner, { name: "deploy-without-key" });
    await createServer(owner, { name: "build-with-key", sshKeyId: ourKey, serverType: "build" });
    await createServer(owner, { name: "build-without-key", serverType: "build" });
    await createServer(stranger, { name: "their-deploy", sshKeyId: theirKey });
    await createServer(stranger, { name: "their-build", sshKeyId: theirKey, serverType: "build" });
  });

  it("withSSHKey lists the organization's deploy servers that have an SSH key, newest first", async () => {
    await createServer(owner, { name: "deploy-newest", sshKeyId: ourKey });
    const listed = await platform.query("server.withSSHKey", {}, as(member));
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(names(listed.body)).toEqual(["deploy-newest", "deploy-with-key"]);
    expect(listed.body[0]).toMatchObject({ serverType: "deploy", sshKeyId: ourKey, totalSum: 0 });
    const theirs = await platform.query("server.withSSHKey", {}, as(stranger));
    expect(names(theirs.body)).toEqual(["their-deploy"]);
  });

  it("buildServers lists the organization's build servers that have an SSH key", async () => {
    const listed = await platform.query("server.buildServers", {}, as(member));
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(names(listed.body)).toEqual(["build-with-key"]);
    expect(names((await platform.query("server.buildServers", {}, as(stranger))).body)).toEqual([
      "their-build",
    ]);
  });

  it("allForPermissions answers id, name, address and type of every server, to administrators only", async () => {
    const listed = await platform.query("server.allForPermissions", {}, as(admin));
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.map((s: { name: string }) => s.name).sort()).toEqual(
      [
        "build-with-key",
        "build-without-key",
        "deploy-newest",
        "deploy-with-key",
        "deploy-without-key",
      ].sort(),
    );
    expect(Object.keys(listed.body[0]).sort()).toEqual(["ipAddress", "name", "serverId", "serverType"]);
    expect((await platform.query("server.allForPermissions", {}, as(member))).status).toBe(403);
  });

  it("count answers the servers of the organizations the caller owns (none for a member)", async () => {
    expect((await platform.query("server.count", {}, as(owner))).body).toBe(5);
    expect((await platform.query("server.count", {}, as(stranger))).body).toBe(2);
    expect((await platform.query("server.count", {}, as(member))).body).toBe(0);
    await createServer(owner, { name: "counted" });
    expect((await platform.query("server.count", {}, as(owner))).body).toBe(6);
  });
});

describe("server.getServerTime", () => {
  it("answers the control plane's clock and time zone", async () => {
    const before = Date.now();
    const answer = await platform.query("server.getServerTime", {}, as(member));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.timezone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    const time = Date.parse(answer.body.time);
    expect(time).toBeGreaterThanOrEqual(before - 1000);
    expect(time).toBeLessThanOrEqual(Date.now() + 1000);
  });
});

describe("server.getDefaultCommand", () => {
  it("answers the install script server.setup runs, for a serverId of the organization only", async () => {
    const serverId = await createServer(owner, { name: "commanded" });
    const answer = await platform.query("server.getDefaultCommand", { serverId }, as(member));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const script = await readFile(new URL("../../../../deploy/agent/install.sh", import.meta.url), "utf8");
    expect(answer.body).toBe(script);
    const refused = await platform.query("server.getDefaultCommand", { serverId }, as(stranger));
    expect(refused.status).toBe(404);
  });
});

describe("server.getServices", () => {
  it("lists the services placed on the server with project and environment, hiding ungranted ones", async () => {
    const serverId = await insertServer(platform.ctx.db, owner.user.organizationId, { name: "hosting" });
    const elsewhere = await insertServer(platform.ctx.db, owner.user.organizationId, {
      name: "elsewhere",
    });
    const project = await platform.mutateOk("project.create", { name: "Shop" }, as(owner));
    const environmentId = project.environment.environmentId as string;
    const app = await platform.mutateOk("application.create", { name: "web", environmentId }, as(owner));
    const hidden = await platform.mutateOk("application.create", { name: "admin", environmentId }, as(owner));
    const other = await platform.mutateOk("application.create", { name: "worker", environmentId }, as(owner));
    const compose = await platform.mutateOk(
      "compose.create",
      { name: "stack", appName: "stack", description: "", environmentId },
      as(owner),
    );
    // Placed on servers straight in the database: these servers have no agent to deploy to.
    const db = platform.ctx.db;
    await db
      .updateTable("applications")
      .set({ serverId })
      .where("applicationId", "in", [app.applicationId, hidden.applicationId])
      .execute();
    await db
      .updateTable("applications")
      .set({ serverId: elsewhere })
      .where("applicationId", "=", other.applicationId)
      .execute();
    await db.updateTable("compose").set({ serverId }).where("composeId", "=", compose.composeId).execute();

    const answer = await platform.query("server.getServices", { serverId }, as(member));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const shared = {
      projectId: project.project.projectId,
      projectName: "Shop",
      environmentId,
      environmentName: project.environment.name,
    };
    expect(answer.body).toEqual([
      {
        id: hidden.applicationId,
        type: "application",
        name: "admin",
        ...shared,
        url: `/#/application/${hidden.applicationId}`,
      },
      {
        id: app.applicationId,
        type: "application",
        name: "web",
        ...shared,
        url: `/#/application/${app.applicationId}`,
      },
      {
        id: compose.composeId,
        type: "compose",
        name: "stack",
        ...shared,
        url: `/#/compose/${compose.composeId}`,
      },
    ]);

    const restricted = await platform.addMember(owner, "member", "lists-restricted@example.com");
    const granted = await platform.mutate(
      "user.assignPermissions",
      {
        id: restricted.user.userId,
        accessedProjects: [project.project.projectId],
        accessedServices: [app.applicationId],
      },
      as(owner),
    );
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    const seen = await platform.query("server.getServices", { serverId }, as(restricted));
    expect(seen.body.map((service: { id: string }) => service.id)).toEqual([app.applicationId]);

    expect((await platform.query("server.getServices", { serverId }, as(stranger))).status).toBe(404);
  });
});

describe("on the cloud edition", () => {
  it("withSSHKey and buildServers list active servers only", async () => {
    const cloud = await startTestPlatform({ PLATFORM_EDITION: "cloud" }, { agents: { localAgent: false } });
    try {
      const cloudOwner = await cloud.registerOwner();
      const pair = (await cloud.mutate("sshKey.generate", { type: "ed25519" }, as(cloudOwner))).body;
      const key = (await cloud.mutateOk("sshKey.create", { name: "k", ...pair }, as(cloudOwner))).sshKeyId;
      for (const [name, serverType] of [
        ["active-deploy", "deploy"],
        ["inactive-deploy", "deploy"],
        ["active-build", "build"],
        ["inactive-build", "build"],
      ] as const) {
        const created = await cloud.mutateOk(
          "server.create",
          { name, ipAddress: "198.51.100.31", username: "root", sshKeyId: key, serverType },
          as(cloudOwner),
        );
        if (name.startsWith("active")) {
          await cloud.ctx.db
            .updateTable("servers")
            .set({ serverStatus: "active" })
            .where("serverId", "=", created.serverId)
            .execute();
        }
      }
      expect(names((await cloud.query("server.withSSHKey", {}, as(cloudOwner))).body)).toEqual([
        "active-deploy",
      ]);
      expect(names((await cloud.query("server.buildServers", {}, as(cloudOwner))).body)).toEqual([
        "active-build",
      ]);
    } finally {
      await cloud.close();
    }
  });
});
