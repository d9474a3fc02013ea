/**
 * sshKey.* and server.* without SSH: key generation and validation, the private key never
 * leaving the control plane, input that must be refused with a 400 naming the field, another
 * organization's ids as 404, totalSum and the refused removal, publicIp, and validate/security
 * answering an error quickly for a server without an agent; server.one's monitoring configuration
 * with its token for the owner and administrators only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeMonitoringConfig } from "../monitoring/monitoring-config.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { controlPlanePublicIp } from "../servers/public-ip.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let owner: Session;
let member: Session;
let stranger: Session;
const as = (session: Session) => ({ token: session.token });

async function generateKey(type: "rsa" | "ed25519" = "ed25519") {
  const generated = await platform.mutate("sshKey.generate", { type }, as(owner));
  expect(generated.status).toBe(200);
  return generated.body as { privateKey: string; publicKey: string };
}

async function createKey(session = owner, name = "deploy key") {
  const pair = await generateKey();
  const created = await platform.mutate("sshKey.create", { name, ...pair }, as(session));
  expect(created.status).toBe(200);
  return { ...pair, sshKeyId: created.body.sshKeyId as string, body: created.body };
}

async function createServer(input: Record<string, unknown> = {}, session = owner) {
  const created = await platform.mutate(
    "server.create",
    { name: "edge-1", ipAddress: "10.0.0.5", username: "root", ...input },
    as(session),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body;
}

beforeAll(async () => {
  platform = await startTestPlatform({ PLATFORM_URL: "http://127.0.0.1:3000" });
  owner = await platform.registerOwner();
  member = await platform.addMember(owner, "member");
  stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
});

afterAll(async () => {
  await platform?.close();
});

describe("sshKey", () => {
  it("generates OpenSSH key pairs of both types", async () => {
    for (const type of ["ed25519", "rsa"] as const) {
      const pair = await generateKey(type);
      expect(pair.privateKey).toMatch(
        /^-----BEGIN OPENSSH PRIVATE KEY-----\n[\s\S]+-----END OPENSSH PRIVATE KEY-----/,
      );
      expect(pair.publicKey).toMatch(
        type === "rsa" ? /^ssh-rsa AAAA\S+ platform$/ : /^ssh-ed25519 AAAA\S+ platform$/,
      );
    }
  });

  it("stores the private key sealed and never shows it", async () => {
    const key = await createKey(owner, "never shown");
    const responses = [
      key.body,
      (await platform.query("sshKey.one", { sshKeyId: key.sshKeyId }, as(owner))).body,
      (await platform.query("sshKey.all", {}, as(member))).body,
      (await platform.mutate("sshKey.update", { sshKeyId: key.sshKeyId, name: "renamed" }, as(owner))).body,
    ];
    const privateBody = key.privateKey.split("\n")[1]!;
    for (const body of responses) {
      expect(JSON.stringify(body)).not.toContain("PRIVATE KEY");
      expect(JSON.stringify(body)).not.toContain(privateBody);
    }
    expect(responses[0]).toMatchObject({ name: "never shown", publicKey: key.publicKey, description: null });
    expect(responses[3]).toMatchObject({ name: "renamed" });
    const row = await platform.ctx.db
      .selectFrom("sshKeys")
      .selectAll()
      .where("sshKeyId", "=", key.sshKeyId)
      .executeTakeFirstOrThrow();
    expect(row.privateKeySealed).not.toContain(privateBody);
    expect(row.privateKeySealed).toMatch(/^v1:1:/);
    expect(platform.logLines.join("\n")).not.toContain(privateBody);
  });

  it("refuses keys that do not parse or do not match, naming the field", async () => {
    const pair = await generateKey();
    const other = await generateKey();
    const cases: Array<[Record<string, string>, string]> = [
      [{ privateKey: "not a key", publicKey: pair.publicKey }, "privateKey"],
      [{ privateKey: pair.publicKey, publicKey: pair.publicKey }, "privateKey"],
      [{ privateKey: pair.privateKey, publicKey: "ssh-ed25519 garbage" }, "publicKey"],
      [{ privateKey: pair.privateKey, publicKey: other.publicKey }, "publicKey"],
      [{ privateKey: "", publicKey: pair.publicKey }, "privateKey"],
    ];
    for (const [keys, field] of cases) {
      const response = await platform.mutate("sshKey.create", { name: "bad", ...keys }, as(owner));
      expect(response.status, JSON.stringify(keys).slice(0, 80)).toBe(400);
      expect(response.body.error.data.fields).toEqual([field]);
    }
    const all = await platform.query("sshKey.all", {}, as(owner));
    expect(all.body.map((k: { name: string }) => k.name)).not.toContain("bad");
  });

  it("lets members read keys only with canAccessToSSHKeys, and never write them", async () => {
    const pair = await generateKey();
    expect((await platform.mutate("sshKey.create", { name: "m", ...pair }, as(member))).status).toBe(403);
    const refused = await platform.query("sshKey.all", {}, as(member));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("canAccessToSSHKeys");
    // allForApps (to pick an application's Git key): any member, id and name only, newest first.
    const first = await createKey(owner, "for apps 1");
    const second = await createKey(owner, "for apps 2");
    const forApps = await platform.query("sshKey.allForApps", {}, as(member));
    expect(forApps.status, JSON.stringify(forApps.body)).toBe(200);
    const listed = forApps.body as { sshKeyId: string; name: string }[];
    expect(listed.slice(0, 2)).toEqual([
      { sshKeyId: second.sshKeyId, name: "for apps 2" },
      { sshKeyId: first.sshKeyId, name: "for apps 1" },
    ]);
    expect(Object.keys(listed[0]!).sort()).toEqual(["name", "sshKeyId"]);
    expect((await platform.query("sshKey.allForApps", {}, as(stranger))).body).toEqual([]);
    const grant = (value: boolean) =>
      platform.mutate(
        "user.assignPermissions",
        { id: member.user.userId, canAccessToSSHKeys: value },
        as(owner),
      );
    expect((await grant(true)).status).toBe(200);
    expect((await platform.query("sshKey.all", {}, as(member))).status).toBe(200);
    expect((await grant(false)).status).toBe(200);
  });

  it("hides another organization's keys (404)", async () => {
    const key = await createKey(owner, "ours");
    expect((await platform.query("sshKey.one", { sshKeyId: key.sshKeyId }, as(stranger))).status).toBe(404);
    expect(
      (await platform.mutate("sshKey.update", { sshKeyId: key.sshKeyId, name: "x" }, as(stranger))).status,
    ).toBe(404);
    expect((await platform.mutate("sshKey.remove", { sshKeyId: key.sshKeyId }, as(stranger))).status).toBe(
      404,
    );
    expect((await platform.query("sshKey.all", {}, as(stranger))).body).toEqual([]);
    expect((await platform.query("sshKey.one", { sshKeyId: key.sshKeyId }, as(owner))).status).toBe(200);
  });

  it("removes a key; its servers keep their row without one", async () => {
    const key = await createKey(owner, "to remove");
    const server = await createServer({ sshKeyId: key.sshKeyId });
    expect((await platform.mutate("sshKey.remove", { sshKeyId: key.sshKeyId }, as(owner))).body).toEqual({
      success: true,
    });
    expect((await platform.query("sshKey.one", { sshKeyId: key.sshKeyId }, as(owner))).status).toBe(404);
    const after = await platform.query("server.one", { serverId: server.serverId }, as(owner));
    expect(after.body.sshKeyId).toBeNull();
  });
});

describe("server", () => {
  it("creates an inactive server with Dokploy's defaults", async () => {
    const key = await createKey();
    const server = await createServer({ sshKeyId: key.sshKeyId, ipAddress: "server-1.example.com" });
    expect(server).toMatchObject({
      name: "edge-1",
      ipAddress: "server-1.example.com",
      port: 22,
      username: "root",
      sshKeyId: key.sshKeyId,
      serverType: "deploy",
      serverStatus: "inactive",
      totalSum: 0,
      online: false,
      lastHeartbeatAt: null,
      hostKeyFingerprint: null,
      enableDockerCleanup: false,
    });
    const one = await platform.query("server.one", { serverId: server.serverId }, as(member));
    expect(one.body).toMatchObject({ serverId: server.serverId, setupLog: "", metricsConfig: null });
  });

  it("answers the daily Docker cleanup flag settings.updateDockerCleanup stored for the server", async () => {
    const server = await createServer({ name: "cleaned" });
    const other = await createServer({ name: "not cleaned" });
    const flagOf = async (serverId: string) => {
      const one = await platform.query("server.one", { serverId }, as(member));
      expect(one.status).toBe(200);
      const all = await platform.query("server.all", {}, as(owner));
      const listed = all.body.find((s: { serverId: string }) => s.serverId === serverId);
      expect(listed.enableDockerCleanup).toBe(one.body.enableDockerCleanup);
      return one.body.enableDockerCleanup;
    };
    expect(await flagOf(server.serverId)).toBe(false);
    const turn = (enableDockerCleanup: boolean, session = owner) =>
      platform.mutate(
        "settings.updateDockerCleanup",
        { enableDockerCleanup, serverId: server.serverId },
        as(session),
      );
    try {
      expect((await turn(true)).body).toEqual({ success: true });
      expect(await flagOf(server.serverId)).toBe(true);
      expect(await flagOf(other.serverId)).toBe(false);
      // Another organization can neither turn it off nor read it; a member may not change it.
      expect((await turn(false, stranger)).status).toBe(404);
      expect((await turn(false, member)).status).toBe(403);
      expect((await platform.query("server.one", { serverId: server.serverId }, as(stranger))).status).toBe(
        404,
      );
      expect(await flagOf(server.serverId)).toBe(true);
      expect((await turn(false)).body).toEqual({ success: true });
      expect(await flagOf(server.serverId)).toBe(false);
    } finally {
      platform.ctx.dockerCleanup.set(server.serverId, false);
    }
  });

  it("answers a server's monitoring in server.one, its token to the owner and administrators only", async () => {
    const server = await createServer({ name: "monitored" });
    const metricsConfig = {
      server: {
        refreshRate: 5,
        port: 4510,
        token: "remote-monitoring-token-0123456789",
        urlCallback: "http://10.0.0.9/threshold",
        retentionDays: 3,
        cronJob: "0 3 * * *",
        thresholds: { cpu: 80, memory: 90 },
      },
      containers: { refreshRate: 5, services: { include: ["web"] } },
    };
    // Stored as server.setupMonitoring stores it (no agent here to apply it).
    await storeMonitoringConfig(platform.ctx, owner.user.organizationId, server.serverId, metricsConfig);
    const admin = await platform.addMember(owner, "admin");
    for (const session of [owner, admin]) {
      const one = await platform.query("server.one", { serverId: server.serverId }, as(session));
      expect(one.body.metricsConfig).toEqual(metricsConfig);
    }
    const seen = await platform.query("server.one", { serverId: server.serverId }, as(member));
    expect(seen.body.metricsConfig).toEqual({
      ...metricsConfig,
      server: { ...metricsConfig.server, token: "[redacted]" },
    });
    expect(JSON.stringify(seen.body)).not.toContain(metricsConfig.server.token);
    expect((await platform.query("server.one", { serverId: server.serverId }, as(stranger))).status).toBe(
      404,
    );
  });

  it("refuses bad addresses, user names, ports and types with a 400 naming the field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ipAddress: "10.0.0.5; rm -rf /" }, "ipAddress"],
      [{ ipAddress: "$(reboot)" }, "ipAddress"],
      [{ ipAddress: "host`id`.example.com" }, "ipAddress"],
      [{ ipAddress: "http://10.0.0.5/" }, "ipAddress"],
      [{ ipAddress: "../etc/passwd" }, "ipAddress"],
      [{ ipAddress: "169.254.169.254" }, "ipAddress"],
      [{ ipAddress: "fe80::1" }, "ipAddress"],
      [{ ipAddress: "0.0.0.0" }, "ipAddress"],
      [{ ipAddress: "" }, "ipAddress"],
      [{ username: "root;id" }, "username"],
      [{ username: "-oProxyCommand=sh" }, "username"],
      [{ username: "Root User" }, "username"],
      [{ username: "a".repeat(33) }, "username"],
      [{ port: 0 }, "port"],
      [{ port: 65536 }, "port"],
      [{ port: 22.5 }, "port"],
      [{ port: "22" }, "port"],
      [{ serverType: "worker" }, "serverType"],
      [{ name: "  " }, "name"],
    ];
    for (const [input, field] of cases) {
      const response = await platform.mutate(
        "server.create",
        { name: "bad", ipAddress: "10.0.0.9", username: "root", ...input },
        as(owner),
      );
      expect(response.status, JSON.stringify(input)).toBe(400);
      expect(response.body.error.data.fields, JSON.stringify(input)).toEqual([field]);
    }
    const all = await platform.query("server.all", {}, as(owner));
    expect(all.body.map((s: { name: string }) => s.name)).not.toContain("bad");
  });

  it("accepts IPv6 addresses and POSIX user names", async () => {
    const server = await createServer({ ipAddress: "2001:db8::10", username: "deploy_user-1", port: 2222 });
    expect(server).toMatchObject({ ipAddress: "2001:db8::10", username: "deploy_user-1", port: 2222 });
  });

  it("needs an SSH key of the caller's organization", async () => {
    const theirs = await createKey(stranger, "theirs");
    const response = await platform.mutate(
      "server.create",
      { name: "x", ipAddress: "10.0.0.5", username: "root", sshKeyId: theirs.sshKeyId },
      as(owner),
    );
    expect(response.status).toBe(404);
    expect(response.body.error.data.fields).toEqual(["sshKeyId"]);
  });

  it("updates the fields Dokploy allows and forgets the host key when the address changes", async () => {
    const server = await createServer();
    await platform.ctx.db
      .updateTable("servers")
      .set({ hostKeySha256: "SHA256:trusted" })
      .where("serverId", "=", server.serverId)
      .execute();
    const renamed = await platform.mutate(
      "server.update",
      { serverId: server.serverId, name: "edge-renamed", serverType: "build", description: "builds" },
      as(owner),
    );
    expect(renamed.body).toMatchObject({
      name: "edge-renamed",
      serverType: "build",
      description: "builds",
      hostKeyFingerprint: "SHA256:trusted",
    });
    const moved = await platform.mutate(
      "server.update",
      { serverId: server.serverId, ipAddress: "10.0.0.6", port: 2200, username: "deploy" },
      as(owner),
    );
    expect(moved.body).toMatchObject({
      ipAddress: "10.0.0.6",
      port: 2200,
      username: "deploy",
      hostKeyFingerprint: null,
    });
    const bad = await platform.mutate(
      "server.update",
      { serverId: server.serverId, ipAddress: "10.0.0.7 && id" },
      as(owner),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(["ipAddress"]);
    const unchanged = await platform.query("server.one", { serverId: server.serverId }, as(owner));
    expect(unchanged.body.ipAddress).toBe("10.0.0.6");
  });

  it("hides another organization's servers (404) and keeps members to reading", async () => {
    const server = await createServer();
    const { serverId } = server;
    for (const [name, kind] of [
      ["server.one", "query"],
      ["server.validate", "query"],
      ["server.security", "query"],
      ["server.update", "mutate"],
      ["server.remove", "mutate"],
      ["server.setup", "mutate"],
    ] as const) {
      const response =
        kind === "query"
          ? await platform.query(name, { serverId }, as(stranger))
          : await platform.mutate(
              name,
              { serverId, ...(name === "server.update" ? { name: "stolen" } : {}) },
              as(stranger),
            );
      expect(response.status, name).toBe(404);
    }
    expect((await platform.query("server.all", {}, as(stranger))).body).toEqual([]);
    expect((await platform.mutate("server.remove", { serverId }, as(member))).status).toBe(403);
    expect((await platform.query("server.one", { serverId }, as(owner))).body.name).toBe("edge-1");
  });

  it("counts services in totalSum and refuses to remove a server that has some", async () => {
    const server = await createServer({ name: "busy" });
    const project = await platform.mutate("project.create", { name: "on busy" }, as(owner));
    const { environmentId } = project.body.environment;
    const applicationIds: string[] = [];
    for (const name of ["web", "worker"]) {
      const created = await platform.mutate(
        "application.create",
        { name, environmentId, serverId: server.serverId },
        as(owner),
      );
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      applicationIds.push(created.body.applicationId);
    }
    const all = await platform.query("server.all", {}, as(owner));
    const busy = all.body.find((s: { serverId: string }) => s.serverId === server.serverId);
    expect(busy.totalSum).toBe(2);
    expect(all.body.filter((s: { totalSum: number }) => s.totalSum > 0)).toHaveLength(1);
    const refused = await platform.mutate("server.remove", { serverId: server.serverId }, as(owner));
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/has 2 services/);
    expect((await platform.query("server.one", { serverId: server.serverId }, as(owner))).status).toBe(200);

    for (const applicationId of applicationIds) {
      const deleted = await platform.mutate("application.delete", { applicationId }, as(owner));
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    }
    const removed = await platform.mutate("server.remove", { serverId: server.serverId }, as(owner));
    expect(removed.body).toEqual({ success: true });
    expect((await platform.query("server.one", { serverId: server.serverId }, as(owner))).status).toBe(404);
  });

  it("answers validate and security of a server without an agent with a clear error, quickly", async () => {
    const server = await createServer();
    const started = Date.now();
    const validate = await platform.query("server.validate", { serverId: server.serverId }, as(owner));
    expect(validate.status).toBe(503);
    expect(validate.body.error.message).toMatch(/agent of server .* is not connected/);
    const security = await platform.query("server.security", { serverId: server.serverId }, as(owner));
    expect(security.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("refuses setup without an SSH key, naming sshKeyId, and runs nothing", async () => {
    const server = await createServer();
    const response = await platform.mutate("server.setup", { serverId: server.serverId }, as(owner));
    expect(response.status).toBe(400);
    expect(response.body.error.data.fields).toEqual(["sshKeyId"]);
    expect((await platform.query("server.one", { serverId: server.serverId }, as(owner))).body.setupLog).toBe(
      "",
    );
  });

  it("refuses setup on a control plane without NATS, where no agent can enroll", async () => {
    const key = await createKey();
    const server = await createServer({ sshKeyId: key.sshKeyId });
    const response = await platform.mutate("server.setup", { serverId: server.serverId }, as(owner));
    expect(response.status).toBe(409);
    expect(response.body.error.message).toMatch(/without NATS/);
    expect((await platform.query("server.one", { serverId: server.serverId }, as(owner))).body.setupLog).toBe(
      "",
    );
  });
});

describe("server.publicIp", () => {
  it("answers this machine's address, PLATFORM_PUBLIC_IP when set, and nothing on cloud", async () => {
    const response = await platform.query("server.publicIp", {}, as(member));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ publicIp: controlPlanePublicIp(platform.ctx.config) });

    const interfaces = {
      lo: [{ address: "127.0.0.1", family: "IPv4", internal: true }],
      eth0: [
        { address: "fe80::1", family: "IPv6", internal: false },
        { address: "203.0.113.7", family: "IPv4", internal: false },
      ],
    } as unknown as ReturnType<typeof import("node:os").networkInterfaces>;
    expect(controlPlanePublicIp({ edition: "self-hosted", publicIp: undefined }, interfaces)).toBe(
      "203.0.113.7",
    );
    expect(controlPlanePublicIp({ edition: "self-hosted", publicIp: "198.51.100.1" }, interfaces)).toBe(
      "198.51.100.1",
    );
    expect(controlPlanePublicIp({ edition: "cloud", publicIp: "198.51.100.1" }, interfaces)).toBe("");
    expect(controlPlanePublicIp({ edition: "self-hosted", publicIp: undefined }, { lo: interfaces.lo })).toBe(
      "",
    );
  });
});
