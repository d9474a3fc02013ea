/**
 * settings.* that tell about the instance (Dokploy 0.30.7's getDokployVersion, getIp,
 * updateServerIp, health, checkInfrastructureHealth, isCloud, getDokployCloudIps,
 * isUserSubscribed, getLogCleanupStatus) and read the proxy's service as Docker runs it
 * (haveTraefikDashboardPortEnabled, getTraefikPorts, readTraefikEnv), against the in-process local
 * agent, the real Docker Engine and the Traefik stand-in image: the answers follow what is
 * stored and what runs, instance-wide ones are the instance administrator's alone.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { requireDocker } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { AGENT_VERSION } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type ProxyTestPlatform, startProxyTestPlatform } from "../proxy/test-support.ts";
import { startTestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";

const run = promisify(execFile);
const STANDIN_IMAGE = "platform-test/traefik-standin:latest";
const buildScript = fileURLToPath(
  new URL("../../../../scripts/build-traefik-standin-image.sh", import.meta.url),
);

let test: ProxyTestPlatform;
let docker: Awaited<ReturnType<typeof requireDocker>>;
let dashboardPort: number;
const as = (session = test.owner) => ({ token: session.token });

beforeAll(async () => {
  docker = await requireDocker();
  await run("bash", [buildScript], { maxBuffer: 16 * 1024 * 1024 });
  test = await startProxyTestPlatform();
  dashboardPort = await freePort();
  await test.platform.ctx.db
    .updateTable("webServerSettings")
    .set({
      traefikImage: STANDIN_IMAGE,
      proxyHttpPort: await freePort(),
      proxyHttpsPort: await freePort(),
      proxyDashboardPort: dashboardPort,
    })
    .where("id", "=", 1)
    .execute();
}, 180_000);

afterAll(async () => {
  if (docker && test)
    await docker
      .getService(test.proxyServiceName)
      .remove()
      .catch(() => {});
  await test?.close();
});

describe("what the instance is", () => {
  it("getDokployVersion answers this platform's version to any member", async () => {
    const member = await test.platform.addMember(test.owner, "member", "info-member@example.com");
    for (const session of [test.owner, member, test.stranger]) {
      const answer = await test.platform.query("settings.getDokployVersion", {}, as(session));
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toBe(AGENT_VERSION);
    }
  });

  it("isCloud and health answer without credentials: not cloud, and ok while the database answers", async () => {
    expect((await test.platform.query("settings.isCloud", {})).body).toBe(false);
    const health = await test.platform.query("settings.health", {});
    expect(health.status, JSON.stringify(health.body)).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
  });

  it("getDokployCloudIps lists no address (agents connect out), for administrators only", async () => {
    expect((await test.platform.query("settings.getDokployCloudIps", {}, as())).body).toEqual([]);
    const member = await test.platform.addMember(test.owner, "member", "cloud-ips-member@example.com");
    expect((await test.platform.query("settings.getDokployCloudIps", {}, as(member))).status).toBe(403);
  });

  it("getOpenApiDocument answers the document /api/openapi.json serves, to any member", async () => {
    const member = await test.platform.addMember(test.owner, "member", "openapi-member@example.com");
    const answer = await test.platform.query("settings.getOpenApiDocument", {}, as(member));
    expect(answer.status).toBe(200);
    const served = await test.platform.request("/api/openapi.json", { method: "GET" });
    expect(answer.body).toEqual(served.body);
    expect(answer.body.paths["/api/settings.getOpenApiDocument"]).toBeDefined();
  });

  it("getLogCleanupStatus says no request log cleanup is scheduled", async () => {
    const answer = await test.platform.query("settings.getLogCleanupStatus", {}, as());
    expect(answer.body).toEqual({ enabled: false, cronExpression: null });
  });

  it("isUserSubscribed answers whether the organization has a server or a project", async () => {
    const fresh = await createUserDirectly(test.platform, { email: "info-fresh@example.com" });
    expect((await test.platform.query("settings.isUserSubscribed", {}, as(fresh))).body).toBe(false);
    await insertServer(test.platform.ctx.db, fresh.user.organizationId, { name: "first" });
    expect((await test.platform.query("settings.isUserSubscribed", {}, as(fresh))).body).toBe(true);
    const another = await createUserDirectly(test.platform, { email: "info-another@example.com" });
    await test.platform.mutateOk("project.create", { name: "First" }, as(another));
    expect((await test.platform.query("settings.isUserSubscribed", {}, as(another))).body).toBe(true);
  });
});

describe("the address this machine is known by (serverIp)", () => {
  const settingsRow = () =>
    test.platform.ctx.db.selectFrom("webServerSettings").selectAll().executeTakeFirstOrThrow();

  it("updateServerIp stores it: getIp, getWebServerSettings and domain.canGenerateTraefikMeDomains use it", async () => {
    expect((await test.platform.query("settings.getIp", {}, as())).body).toBe("");
    const updated = await test.platform.mutate("settings.updateServerIp", { serverIp: "203.0.113.7" }, as());
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ serverIp: "203.0.113.7", sshPrivateKey: null });
    const member = await test.platform.addMember(test.owner, "member", "ip-member@example.com");
    expect((await test.platform.query("settings.getIp", {}, as(member))).body).toBe("203.0.113.7");
    expect((await test.platform.query("settings.getWebServerSettings", {}, as())).body.serverIp).toBe(
      "203.0.113.7",
    );
    // Domains generated for this machine point at it.
    const generated = await test.platform.query(
      "domain.canGenerateTraefikMeDomains",
      { serverId: "local" },
      as(),
    );
    expect(generated.body).toBe("203.0.113.7");

    const v6 = await test.platform.mutate("settings.updateServerIp", { serverIp: "2001:db8::7" }, as());
    expect(v6.body.serverIp).toBe("2001:db8::7");
    const cleared = await test.platform.mutate("settings.updateServerIp", { serverIp: "" }, as());
    expect(cleared.body.serverIp).toBeNull();
    expect((await test.platform.query("settings.getIp", {}, as())).body).toBe("");
  });

  it("refuses a serverIp that is not an address (400 naming it) and changes nothing", async () => {
    await test.platform.mutateOk("settings.updateServerIp", { serverIp: "203.0.113.8" }, as());
    const before = await settingsRow();
    for (const serverIp of ["example.com", "203.0.113.300", "203.0.113.8; rm -rf /", " "]) {
      const refused = await test.platform.mutate("settings.updateServerIp", { serverIp }, as());
      expect(refused.status, serverIp).toBe(400);
      expect(refused.body.error.data.fields, serverIp).toEqual(["serverIp"]);
    }
    expect(await settingsRow()).toEqual(before);
  });

  it("belongs to the instance administrator: another organization gets '' and 403, a member 403", async () => {
    await test.platform.mutateOk("settings.updateServerIp", { serverIp: "203.0.113.9" }, as());
    const before = await settingsRow();
    expect((await test.platform.query("settings.getIp", {}, as(test.stranger))).body).toBe("");
    const stranger = await test.platform.mutate(
      "settings.updateServerIp",
      { serverIp: "198.51.100.66" },
      as(test.stranger),
    );
    expect(stranger.status).toBe(403);
    const member = await test.platform.addMember(test.owner, "member", "ip-member-2@example.com");
    const byMember = await test.platform.mutate(
      "settings.updateServerIp",
      { serverIp: "198.51.100.66" },
      as(member),
    );
    expect(byMember.status).toBe(403);
    expect(await settingsRow()).toEqual(before);
  });
});

describe("the proxy's service as Docker runs it", () => {
  it("before the proxy is installed: the reads are a 404 and the infrastructure check says so", async () => {
    for (const name of [
      "settings.haveTraefikDashboardPortEnabled",
      "settings.getTraefikPorts",
      "settings.readTraefikEnv",
    ]) {
      const answer = await test.platform.query(name, {}, as());
      expect(answer.status, `${name} ${JSON.stringify(answer.body)}`).toBe(404);
      expect(answer.body.error.message).toMatch(/proxy is not installed/);
    }
    const health = await test.platform.query("settings.checkInfrastructureHealth", {}, as());
    expect(health.status, JSON.stringify(health.body)).toBe(200);
    expect(health.body).toEqual({
      postgres: { status: "healthy" },
      traefik: { status: "unhealthy", message: "The proxy's service is not installed" },
    });
  });

  it("follows toggleDashboard: the dashboard port is published, then not", async () => {
    await test.platform.mutateOk("settings.toggleDashboard", { enableDashboard: true }, as());
    expect((await test.platform.query("settings.haveTraefikDashboardPortEnabled", {}, as())).body).toBe(true);
    expect((await test.platform.query("settings.getTraefikPorts", {}, as())).body).toEqual([
      { targetPort: 8080, publishedPort: dashboardPort, protocol: "tcp" },
    ]);
    await test.platform.mutateOk("settings.toggleDashboard", { enableDashboard: false }, as());
    expect((await test.platform.query("settings.haveTraefikDashboardPortEnabled", {}, as())).body).toBe(
      false,
    );
    expect((await test.platform.query("settings.getTraefikPorts", {}, as())).body).toEqual([]);
  });

  it("readTraefikEnv answers the service's environment as KEY=VALUE lines", async () => {
    expect((await test.platform.query("settings.readTraefikEnv", {}, as())).body).toBe("");
    for (let attempt = 1; ; attempt++) {
      const service = await docker.getService(test.proxyServiceName).inspect();
      try {
        await docker.getService(test.proxyServiceName).update({
          ...service.Spec,
          version: service.Version.Index,
          TaskTemplate: {
            ...service.Spec.TaskTemplate,
            ContainerSpec: {
              ...service.Spec.TaskTemplate.ContainerSpec,
              Env: ["TZ=UTC", "CF_DNS_API_TOKEN=x"],
            },
          },
        });
        break;
      } catch (error) {
        if (attempt >= 10 || !/out of sequence/.test(String(error))) throw error;
      }
    }
    expect((await test.platform.query("settings.readTraefikEnv", {}, as())).body).toBe(
      "TZ=UTC\nCF_DNS_API_TOKEN=x",
    );
  });

  it("checkInfrastructureHealth finds the database and the proxy's running task healthy", async () => {
    let health: any;
    // The proxy's task was just replaced (the environment changed): ask until Swarm runs it.
    for (let attempt = 0; attempt < 120; attempt++) {
      health = await test.platform.query("settings.checkInfrastructureHealth", {}, as());
      if (health.body?.traefik?.status === "healthy") break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(health.status, JSON.stringify(health.body)).toBe(200);
    expect(health.body).toEqual({ postgres: { status: "healthy" }, traefik: { status: "healthy" } });
  });

  it("updateTraefikPorts publishes the port in host mode, kept by toggleDashboard; writeTraefikEnv sets the environment", async () => {
    const extra = await freePort();
    const reserved = await test.platform.mutate(
      "settings.updateTraefikPorts",
      { additionalPorts: [{ targetPort: 9000, publishedPort: 22, protocol: "tcp" }] },
      as(),
    );
    expect(reserved.status, JSON.stringify(reserved.body)).toBe(400);
    expect(reserved.body.error.data.fields).toEqual(["additionalPorts"]);
    const updated = await test.platform.mutate(
      "settings.updateTraefikPorts",
      { additionalPorts: [{ targetPort: 9000, publishedPort: extra, protocol: "tcp" }] },
      as(),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const published = async () =>
      ((await docker.getService(test.proxyServiceName).inspect()).Spec.EndpointSpec.Ports ?? []).find(
        (port: { TargetPort: number }) => port.TargetPort === 9000,
      );
    expect(await published()).toEqual({
      Protocol: "tcp",
      TargetPort: 9000,
      PublishedPort: extra,
      PublishMode: "host",
    });
    await test.platform.mutateOk("settings.toggleDashboard", { enableDashboard: true }, as());
    expect((await test.platform.query("settings.getTraefikPorts", {}, as())).body).toEqual(
      expect.arrayContaining([
        { targetPort: 9000, publishedPort: extra, protocol: "tcp" },
        { targetPort: 8080, publishedPort: dashboardPort, protocol: "tcp" },
      ]),
    );
    await test.platform.mutateOk("settings.toggleDashboard", { enableDashboard: false }, as());
    expect(await published()).toMatchObject({ PublishedPort: extra, PublishMode: "host" });

    const bad = await test.platform.mutate("settings.writeTraefikEnv", { env: "NOT A VARIABLE" }, as());
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(["env"]);
    const written = await test.platform.mutate(
      "settings.writeTraefikEnv",
      { env: "# tokens\nCF_DNS_API_TOKEN=abc $(id)\n\nTZ=UTC\n" },
      as(),
    );
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect((await test.platform.query("settings.readTraefikEnv", {}, as())).body).toBe(
      "CF_DNS_API_TOKEN=abc $(id)\nTZ=UTC",
    );
    await test.platform.mutateOk("settings.updateTraefikPorts", { additionalPorts: [] }, as());
    expect(await published()).toBeUndefined();
    expect((await test.platform.query("settings.readTraefikEnv", {}, as())).body).toBe(
      "CF_DNS_API_TOKEN=abc $(id)\nTZ=UTC",
    );
    expect(
      (await test.platform.mutate("settings.writeTraefikEnv", { env: "A=1" }, as(test.stranger))).status,
    ).toBe(403);
  });

  it("are the instance administrator's for this machine; another organization names a server of its own", async () => {
    const member = await test.platform.addMember(test.owner, "member", "proxy-read-member@example.com");
    for (const name of [
      "settings.haveTraefikDashboardPortEnabled",
      "settings.getTraefikPorts",
      "settings.readTraefikEnv",
      "settings.checkInfrastructureHealth",
    ]) {
      expect((await test.platform.query(name, {}, as(test.stranger))).status, name).toBe(403);
      expect((await test.platform.query(name, {}, as(member))).status, name).toBe(403);
    }
    const ownServer = await insertServer(test.platform.ctx.db, test.stranger.user.organizationId, {
      name: "stranger-proxy",
    });
    for (const name of [
      "settings.haveTraefikDashboardPortEnabled",
      "settings.getTraefikPorts",
      "settings.readTraefikEnv",
    ]) {
      const theirs = await test.platform.query(name, { serverId: ownServer }, as(test.stranger));
      // Their server has no agent here: not refused, but not answered either.
      expect(theirs.status, `${name} ${JSON.stringify(theirs.body)}`).not.toBe(403);
      expect(theirs.status, name).not.toBe(200);
      // The serverId names whose proxy is read: for our owner that server is another organization's.
      expect((await test.platform.query(name, { serverId: ownServer }, as())).status, name).toBe(404);
    }
  });
});

describe("on the cloud edition", () => {
  it("isCloud is true, getIp is empty, and this machine's serverIp and health are refused", async () => {
    const cloud = await startTestPlatform({ PLATFORM_EDITION: "cloud" }, { agents: { localAgent: false } });
    try {
      const owner = await cloud.registerOwner();
      expect((await cloud.query("settings.isCloud", {})).body).toBe(true);
      expect((await cloud.query("settings.getIp", {}, { token: owner.token })).body).toBe("");
      const update = await cloud.mutate(
        "settings.updateServerIp",
        { serverIp: "203.0.113.7" },
        { token: owner.token },
      );
      expect(update.status).toBe(403);
      const health = await cloud.query("settings.checkInfrastructureHealth", {}, { token: owner.token });
      expect(health.status).toBe(403);
    } finally {
      await cloud.close();
    }
  });
});
