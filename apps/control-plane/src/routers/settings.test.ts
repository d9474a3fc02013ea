/**
 * settings.* (web server and proxy) against the in-process local agent, the real Docker Engine
 * and the Traefik stand-in image (scripts/build-traefik-standin-image.sh, run here): the proxy
 * service Docker reports, the static configuration on disk checked against Traefik's schema,
 * the administrator and edition rules.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { requireDocker } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import {
  CONTROL_PLANE_ROUTER_PRIORITY,
  parseStaticConfig,
  validateDynamicConfig,
  validateStaticConfig,
} from "@platform/traefik-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  dynamicFile,
  type ProxyTestPlatform,
  readIfExists,
  startProxyTestPlatform,
  staticFile,
} from "../proxy/test-support.ts";
import { createTestDatabase, startTestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";

const run = promisify(execFile);
const STANDIN_IMAGE = "platform-test/traefik-standin:latest";
const buildScript = fileURLToPath(
  new URL("../../../../scripts/build-traefik-standin-image.sh", import.meta.url),
);

let test: ProxyTestPlatform;
let docker: Awaited<ReturnType<typeof requireDocker>>;
let ports: { http: number; https: number; dashboard: number };
const as = (session = test.owner) => ({ token: session.token });

async function proxyService(): Promise<any> {
  return docker.getService(test.proxyServiceName).inspect();
}

beforeAll(async () => {
  docker = await requireDocker();
  await run("bash", [buildScript], { maxBuffer: 16 * 1024 * 1024 });
  test = await startProxyTestPlatform();
  ports = { http: await freePort(), https: await freePort(), dashboard: await freePort() };
  await test.platform.ctx.db
    .updateTable("webServerSettings")
    .set({
      traefikImage: STANDIN_IMAGE,
      proxyHttpPort: ports.http,
      proxyHttpsPort: ports.https,
      proxyDashboardPort: ports.dashboard,
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

describe("settings: proxy service and static configuration", () => {
  it("getWebServerSettings starts with the defaults and no SSH key", async () => {
    const response = await test.platform.query("settings.getWebServerSettings", {}, as());
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({
      host: null,
      letsEncryptEmail: null,
      certificateType: "none",
      https: false,
      serverIp: null,
      sshPrivateKey: null,
      enableDockerCleanup: false,
      metricsConfig: null,
      enableDashboard: false,
      traefikImage: STANDIN_IMAGE,
      wildcardDomain: "traefik.me",
      remoteServersOnly: false,
      buildsConcurrency: null,
      logCleanupCron: null,
    });
  });

  it("getWebServerSettings shows a stored SSH key redacted", async () => {
    const sealed = test.platform.ctx.secrets.encrypt("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret", {
      table: "web_server_settings",
      rowId: "1",
      organizationId: "instance",
    });
    await test.platform.ctx.db
      .updateTable("webServerSettings")
      .set({ sshPrivateKeySealed: sealed })
      .where("id", "=", 1)
      .execute();
    const response = await test.platform.query("settings.getWebServerSettings", {}, as());
    expect(response.body.sshPrivateKey).toBe("[redacted]");
    expect(JSON.stringify(response.body)).not.toContain("secret");
    expect(JSON.stringify(response.body)).not.toContain(sealed);
  });

  it("toggleDashboard installs the proxy service with the configured image, ports, mounts and arguments", async () => {
    const response = await test.platform.mutate("settings.toggleDashboard", { enableDashboard: true }, as());
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const service = await proxyService();
    const container = service.Spec.TaskTemplate.ContainerSpec;
    expect(container.Image.split("@")[0]).toBe(STANDIN_IMAGE);
    expect(container.Args).toEqual(["--configFile=/etc/traefik/traefik.yml"]);
    expect(container.Mounts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Type: "bind",
          Source: expect.stringMatching(/traefik$/),
          Target: "/etc/traefik",
        }),
      ]),
    );
    const published = service.Spec.EndpointSpec.Ports.map(
      (port: { TargetPort: number; PublishedPort: number; PublishMode: string }) => [
        port.TargetPort,
        port.PublishedPort,
        port.PublishMode,
      ],
    );
    expect(published).toEqual([
      [80, ports.http, "host"],
      [443, ports.https, "host"],
      [8080, ports.dashboard, "host"],
    ]);
    const staticText = await readIfExists(staticFile(test));
    const config = parse(staticText!);
    expect(validateStaticConfig(config)).toEqual([]);
    expect(config.api).toEqual({ dashboard: true, insecure: true });
    expect(config.entryPoints.traefik).toEqual({ address: ":8080" });
    expect(config.providers.file).toEqual({ directory: "/etc/traefik/dynamic", watch: true });
    expect(config.accessLog).toEqual({ filePath: "/etc/traefik/access.log", format: "json" });
    expect(config.certificatesResolvers.letsencrypt.acme).toEqual({
      storage: "/etc/traefik/acme.json",
      httpChallenge: { entryPoint: "web" },
    });
    const settings = await test.platform.query("settings.getWebServerSettings", {}, as());
    expect(settings.body.enableDashboard).toBe(true);
  });

  it("toggleDashboard off unpublishes 8080 and drops the dashboard from traefik.yml", async () => {
    // enableDashboard is optional (Dokploy's default false).
    const response = await test.platform.mutate("settings.toggleDashboard", {}, as());
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const service = await proxyService();
    expect(service.Spec.EndpointSpec.Ports.map((port: { TargetPort: number }) => port.TargetPort)).toEqual([
      80, 443,
    ]);
    const config = parse((await readIfExists(staticFile(test)))!);
    expect(validateStaticConfig(config)).toEqual([]);
    expect(config.api).toBeUndefined();
    expect(config.entryPoints.traefik).toBeUndefined();
  });

  it("readTraefikConfig answers traefik.yml as it is on disk", async () => {
    const response = await test.platform.query("settings.readTraefikConfig", {}, as());
    expect(response.status).toBe(200);
    expect(response.body).toBe(await readIfExists(staticFile(test)));
  });

  it.each([
    ["invalid YAML", "entryPoints: [\n"],
    ["an unknown key", "entryPoints:\n  web:\n    address: ':80'\nevil: true\n"],
    ["a misspelt key", "entryPoint:\n  web:\n    address: ':80'\n"],
    ["an empty document", ""],
  ])(
    "updateTraefikConfig with %s is a 400 naming traefikConfig and traefik.yml stays",
    async (_case, text) => {
      const before = await readIfExists(staticFile(test));
      const response = await test.platform.mutate(
        "settings.updateTraefikConfig",
        { traefikConfig: text },
        as(),
      );
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.data.fields).toEqual(["traefikConfig"]);
      expect(await readIfExists(staticFile(test))).toBe(before);
    },
  );

  it("updateTraefikConfig writes a valid configuration and restarts the proxy", async () => {
    const before = (await proxyService()).Version.Index;
    const text = [
      "entryPoints:",
      "  web:",
      "    address: ':80'",
      "  websecure:",
      "    address: ':443'",
      "providers:",
      "  file:",
      "    directory: /etc/traefik/dynamic",
      "    watch: true",
      "log:",
      "  level: DEBUG",
      "",
    ].join("\n");
    expect(parseStaticConfig(text).ok).toBe(true);
    const response = await test.platform.mutate(
      "settings.updateTraefikConfig",
      { traefikConfig: text },
      as(),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(await readIfExists(staticFile(test))).toBe(text);
    // Restarting is a service update (a forced one): the engine's version of the service moves on.
    expect((await proxyService()).Version.Index).toBeGreaterThan(before);
  });

  it("reloadTraefik restarts the proxy's task", async () => {
    const before = await proxyService();
    const response = await test.platform.mutate("settings.reloadTraefik", {}, as());
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const after = await proxyService();
    expect(after.Version.Index).toBeGreaterThan(before.Version.Index);
    expect(after.Spec.TaskTemplate.ForceUpdate).not.toBe(before.Spec.TaskTemplate.ForceUpdate);
  });

  it("toggleDashboard keeps an administrator's edits of traefik.yml", async () => {
    const response = await test.platform.mutate("settings.toggleDashboard", { enableDashboard: true }, as());
    expect(response.status).toBe(200);
    const config = parse((await readIfExists(staticFile(test)))!);
    expect(config.log).toEqual({ level: "DEBUG" });
    expect(config.api).toEqual({ dashboard: true, insecure: true });
    expect(validateStaticConfig(config)).toEqual([]);
  });

  it("assignDomainServer routes the control plane's host through the proxy", async () => {
    const refused = await test.platform.mutate(
      "settings.assignDomainServer",
      { host: "cp.example.com", certificateType: "letsencrypt", https: true },
      as(),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.data.fields).toEqual(["letsEncryptEmail"]);
    const injected = await test.platform.mutate(
      "settings.assignDomainServer",
      { host: "cp.example.com`) || Host(`x", certificateType: "none", https: false },
      as(),
    );
    expect(injected.status).toBe(400);
    expect(injected.body.error.data.fields).toEqual(["host"]);
    expect(await readIfExists(dynamicFile(test, "platform-control-plane.yml"))).toBeUndefined();

    // https is optional (Dokploy's default false).
    const plain = await test.platform.mutate(
      "settings.assignDomainServer",
      { host: "cp.example.com", certificateType: "none" },
      as(),
    );
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect((await test.platform.query("settings.getWebServerSettings", {}, as())).body.https).toBe(false);

    const response = await test.platform.mutate(
      "settings.assignDomainServer",
      {
        host: "cp.example.com",
        certificateType: "letsencrypt",
        https: true,
        letsEncryptEmail: "ops@example.com",
      },
      as(),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const config = parse((await readIfExists(dynamicFile(test, "platform-control-plane.yml")))!);
    expect(validateDynamicConfig(config)).toEqual([]);
    expect(config.http.routers["platform-control-plane-router-websecure-dashboard"]).toMatchObject({
      rule: "Host(`cp.example.com`)",
      tls: { certResolver: "letsencrypt" },
      // Above every tenant's and application's router (issue 22, finding 1).
      priority: CONTROL_PLANE_ROUTER_PRIORITY,
    });
    expect(config.http.routers["platform-control-plane-router-dashboard"].priority).toBe(
      CONTROL_PLANE_ROUTER_PRIORITY,
    );
    expect(config.http.services["platform-control-plane-service-dashboard"].loadBalancer.servers).toEqual([
      { url: `http://platform-control-plane:${test.platform.ctx.config.port}` },
    ]);
    const staticConfig = parse((await readIfExists(staticFile(test)))!);
    expect(staticConfig.certificatesResolvers.letsencrypt.acme.email).toBe("ops@example.com");
    const settings = await test.platform.query("settings.getWebServerSettings", {}, as());
    expect(settings.body).toMatchObject({
      host: "cp.example.com",
      certificateType: "letsencrypt",
      https: true,
      letsEncryptEmail: "ops@example.com",
    });
  });

  it("settings need an administrator, and another organization's server is a 404", async () => {
    const member = await test.platform.addMember(test.owner, "member");
    for (const [name, input] of [
      ["settings.toggleDashboard", { enableDashboard: true }],
      ["settings.reloadTraefik", {}],
      ["settings.updateTraefikConfig", { traefikConfig: "entryPoints: {}\n" }],
      ["settings.assignDomainServer", { host: "x.example.com", certificateType: "none", https: false }],
    ] as const) {
      expect((await test.platform.mutate(name, input, as(member))).status, name).toBe(403);
    }
    expect((await test.platform.query("settings.getWebServerSettings", {}, as(member))).status).toBe(403);
    expect((await test.platform.query("settings.readTraefikConfig", {}, as(member))).status).toBe(403);
    const strangersServer = await insertServer(test.platform.ctx.db, test.stranger.user.organizationId, {
      name: "theirs",
    });
    for (const [name, input] of [
      ["settings.reloadTraefik", { serverId: strangersServer }],
      ["settings.toggleDashboard", { enableDashboard: true, serverId: strangersServer }],
      ["settings.updateTraefikConfig", { traefikConfig: "entryPoints: {}\n", serverId: strangersServer }],
    ] as const) {
      expect((await test.platform.mutate(name, input, as())).status, name).toBe(404);
    }
    const read = await test.platform.query("settings.readTraefikConfig", { serverId: strangersServer }, as());
    expect(read.status).toBe(404);
  });
});

describe("finding 6: instance-wide settings belong to the instance administrator", () => {
  it("another organization's owner gets 403 for this machine and the settings row, but acts on a server of their own", async () => {
    const before = await test.platform.ctx.db
      .selectFrom("webServerSettings")
      .selectAll()
      .executeTakeFirstOrThrow();
    const stranger = as(test.stranger);
    const refused = [
      await test.platform.query("settings.getWebServerSettings", {}, stranger),
      await test.platform.query("settings.readTraefikConfig", {}, stranger),
      await test.platform.query("settings.readTraefikConfig", { serverId: "local" }, stranger),
      await test.platform.mutate(
        "settings.updateTraefikConfig",
        { traefikConfig: "entryPoints: {}\n" },
        stranger,
      ),
      await test.platform.mutate("settings.toggleDashboard", { enableDashboard: false }, stranger),
      await test.platform.mutate(
        "settings.assignDomainServer",
        { host: "evil.example.com", certificateType: "none", https: false },
        stranger,
      ),
      await test.platform.mutate("settings.reloadTraefik", {}, stranger),
      await test.platform.mutate("settings.reloadTraefik", { serverId: "local" }, stranger),
    ];
    for (const response of refused) {
      expect(response.status, JSON.stringify(response.body)).toBe(403);
      expect(response.body.error.message).toMatch(/instance administrator/);
    }
    // Nothing changed: the row and this machine's traefik.yml are as they were.
    expect(
      await test.platform.ctx.db.selectFrom("webServerSettings").selectAll().executeTakeFirstOrThrow(),
    ).toEqual(before);

    // An administrator (not the owner) of the instance organization is an instance administrator.
    const instanceAdmin = await test.platform.addMember(test.owner, "admin");
    expect((await test.platform.query("settings.getWebServerSettings", {}, as(instanceAdmin))).status).toBe(
      200,
    );

    // The stranger's own server: access is not refused (the server has no agent yet, so 503/404).
    const ownServer = await insertServer(test.platform.ctx.db, test.stranger.user.organizationId, {
      name: "mine",
      ipAddress: "198.51.100.21",
    });
    const own = await test.platform.mutate("settings.reloadTraefik", { serverId: ownServer }, stranger);
    expect(own.status, JSON.stringify(own.body)).not.toBe(403);
    expect(own.status).not.toBe(200);
    const read = await test.platform.query("settings.readTraefikConfig", { serverId: ownServer }, stranger);
    expect(read.status, JSON.stringify(read.body)).not.toBe(403);
  });
});

describe("settings on the cloud edition", () => {
  it("are refused with 403", async () => {
    const cloud = await startTestPlatform({ PLATFORM_EDITION: "cloud" }, { agents: { localAgent: false } });
    try {
      const owner = await cloud.registerOwner();
      const response = await cloud.query("settings.getWebServerSettings", {}, { token: owner.token });
      expect(response.status).toBe(403);
      const toggle = await cloud.mutate(
        "settings.toggleDashboard",
        { enableDashboard: true },
        { token: owner.token },
      );
      expect(toggle.status).toBe(403);
    } finally {
      await cloud.close();
    }
  });
});

describe("the proxy of this machine at start (PLATFORM_LOCAL_PROXY)", () => {
  it("is installed with the stored settings when the control plane starts, and a failure only logs why", async () => {
    const { target: database, drop } = await createTestDatabase({ migrated: true });
    const mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-local-proxy-"));
    const proxyServiceName = `cp-local-proxy-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const localAgent = { mainDirectory, proxyServiceName };
    const localPorts = { http: await freePort(), https: await freePort(), dashboard: await freePort() };
    try {
      // The settings a first run stored: the stand-in image and free ports.
      const first = await startTestPlatform({}, { database, agents: { localAgent } });
      await first.ctx.db
        .updateTable("webServerSettings")
        .set({
          traefikImage: STANDIN_IMAGE,
          proxyHttpPort: localPorts.http,
          proxyHttpsPort: localPorts.https,
          proxyDashboardPort: localPorts.dashboard,
          host: "cp-start.example.com",
        })
        .where("id", "=", 1)
        .execute();
      await first.close();
      // The control plane's route as an earlier version wrote it: no priority (issue 22, finding 1).
      const route = path.join(mainDirectory, "traefik", "dynamic", "platform-control-plane.yml");
      await mkdir(path.dirname(route), { recursive: true });
      await writeFile(
        route,
        "http:\n  routers:\n    platform-control-plane-router-dashboard:\n      entryPoints: [web]\n      rule: Host(`cp-start.example.com`)\n      service: platform-control-plane-service-dashboard\n",
      );
      expect(await docker.listServices({ filters: { name: [proxyServiceName] } })).toEqual([]);

      const second = await startTestPlatform(
        { PLATFORM_LOCAL_PROXY: "true" },
        { database, agents: { localAgent } },
      );
      await second.close();
      expect(second.logLines.join("\n")).toContain("the proxy of this machine is installed");
      const service = await docker.getService(proxyServiceName).inspect();
      expect(service.Spec.TaskTemplate.ContainerSpec.Image.split("@")[0]).toBe(STANDIN_IMAGE);
      expect(service.Spec.EndpointSpec.Ports.map((p: { PublishedPort: number }) => p.PublishedPort)).toEqual([
        localPorts.http,
        localPorts.https,
      ]);
      expect(await readIfExists(path.join(mainDirectory, "traefik", "traefik.yml"))).toContain("entryPoints");
      // The start rewrote the route with the priority above every other router.
      expect(
        parse((await readIfExists(route))!).http.routers["platform-control-plane-router-dashboard"],
      ).toMatchObject({
        rule: "Host(`cp-start.example.com`)",
        priority: CONTROL_PLANE_ROUTER_PRIORITY,
      });

      // Without a Docker Engine the control plane still starts and says why there is no proxy.
      const withoutDocker = await startTestPlatform(
        { PLATFORM_LOCAL_PROXY: "true" },
        {
          database,
          agents: { localAgent: { ...localAgent, dockerSocket: path.join(mainDirectory, "no.sock") } },
        },
      );
      expect((await withoutDocker.request("/health")).status).toBe(200);
      await withoutDocker.close();
      expect(withoutDocker.logLines.join("\n")).toMatch(/the proxy of this machine was not installed: .+/);
    } finally {
      await docker
        .getService(proxyServiceName)
        .remove()
        .catch(() => {});
      await drop();
      await rm(mainDirectory, { recursive: true, force: true });
    }
  }, 120_000);
});
