/**
 * Forward auth (forwardAuth.*, issue 41 item 6) on the real Docker Engine: the authentication
 * service is the stand-in for oauth2-proxy (scripts/build-forward-auth-standin-image.sh, set as
 * PLATFORM_FORWARD_AUTH_IMAGE), deployed through the local agent as a Swarm service with the
 * organization's labels; an application deployed from an image is requested by its host through
 * the routing stand-in for Traefik (scripts/build-traefik-router-image.sh), which applies the
 * forwardAuth middleware of the application's file as Traefik does. The domain answers 401
 * without the session cookie and 200 with it once protected, and 200 to anyone after disable.
 * Secrets are sealed and never answered; another organization reaches none of it.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { dockerCli, removeDeployedApps, requireDocker, TEST_IMAGE } from "@platform/agent/testing/docker.ts";
import { parseDynamicConfig } from "@platform/traefik-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const run = promisify(execFile);
const scripts = path.join(import.meta.dirname, "../../../../scripts");
const ROUTER_IMAGE = "platform-test/traefik-router:latest";
const AUTH_IMAGE = "platform-test/forward-auth:latest";
const CLIENT_SECRET = `client-secret-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
const APP_HOST = `app.fa${process.pid}.test`;
const AUTH_HOST = `auth.fa${process.pid}.test`;
const SECOND_HOST = `second.fa${process.pid}.test`;

let platform: TestPlatform;
let owner: Session;
let stranger: Session;
let directory: string;
let routerPort: number;
let applicationId: string;
const router = `fa-router-${process.pid}`;
const appName = `fa-app-${process.pid}`;
const services: string[] = [appName];

const as = (session: Session) => ({ token: session.token });

beforeAll(async () => {
  await requireDocker();
  for (const script of ["build-forward-auth-standin-image.sh", "build-traefik-router-image.sh"]) {
    await run("bash", [path.join(scripts, script)], { timeout: 300_000 });
  }
  directory = await mkdtemp(path.join(tmpdir(), "forward-auth-e2e-"));
  platform = await startTestPlatform(
    { PLATFORM_FORWARD_AUTH_IMAGE: AUTH_IMAGE },
    { agents: { localAgent: { mainDirectory: directory } } },
  );
  owner = await platform.registerOwner();
  stranger = await createUserDirectly(platform, { email: `stranger-fa-${process.pid}@example.com` });
  routerPort = await startRouter();
}, 420_000);

afterAll(async () => {
  await dockerCli(["rm", "-f", router]).catch(() => {});
  await platform?.close();
  await removeDeployedApps(services);
  if (directory) await rm(directory, { recursive: true, force: true });
}, 120_000);

/** The routing stand-in on the platform network, reading the agent's dynamic files; its port. */
async function startRouter(): Promise<number> {
  const staticFile = path.join(directory, "router-static.yml");
  await writeFile(
    staticFile,
    `entryPoints:\n  web:\n    address: ":80"\nproviders:\n  file:\n    directory: /etc/traefik/dynamic\n    watch: true\n`,
  );
  await dockerCli([
    "run",
    "-d",
    "--name",
    router,
    "--label",
    "platform.test=forward-auth",
    "--network",
    "platform-network",
    "-p",
    "127.0.0.1::80",
    "-v",
    `${path.join(directory, "traefik", "dynamic")}:/etc/traefik/dynamic:ro`,
    "-v",
    `${staticFile}:/etc/traefik/traefik.yml:ro`,
    ROUTER_IMAGE,
    "traefik",
    "--configFile=/etc/traefik/traefik.yml",
  ]);
  const mapping = await dockerCli(["port", router, "80/tcp"]);
  return Number(mapping.split("\n")[0]!.split(":").at(-1));
}

function get(host: string, cookie?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host };
    if (cookie) headers.cookie = cookie;
    const request = http.get({ host: "127.0.0.1", port: routerPort, path: "/", headers }, (response) => {
      let body = "";
      response.on("data", (chunk) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
  });
}

/** Polls until the answer has `status` (the router reads the files again on every request). */
async function expectAnswer(host: string, status: number, cookie?: string): Promise<string> {
  const deadline = Date.now() + 90_000;
  let last = { status: 0, body: "" };
  while (Date.now() < deadline) {
    last = await get(host, cookie).catch((error) => ({ status: -1, body: String(error) }));
    if (last.status === status) return last.body;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const logs = await dockerCli(["logs", router]).catch(String);
  expect(`${last.status} ${last.body}\nrouter log:\n${logs}`).toBe(`status ${status}`);
  return last.body;
}

async function appFile(): Promise<string> {
  return readFile(path.join(directory, "traefik", "dynamic", `${appName}.yml`), "utf8");
}

describe("forward auth on Docker through the routing stand-in", () => {
  let providerId: string;
  let domainId: string;

  it("keeps the provider's client secret sealed and write-only", async () => {
    const created = await platform.mutateOk(
      "forwardAuth.createProvider",
      {
        issuer: "https://idp.example.com/realms/main",
        clientId: "platform-client",
        clientSecret: CLIENT_SECRET,
        domain: "example.com",
        scopes: ["openid", "email", "groups"],
      },
      as(owner),
    );
    expect(created.clientSecret).toBe("********");
    providerId = created.providerId;
    const listed = await platform.query("forwardAuth.listProviders", {}, as(owner));
    expect(listed.body).toEqual([
      { providerId, issuer: "https://idp.example.com/realms/main", domain: "example.com" },
    ]);
    const badScope = await platform.mutate(
      "forwardAuth.createProvider",
      { issuer: "https://idp.example.com", clientId: "x", clientSecret: "y", scopes: ["openid profile"] },
      as(owner),
    );
    expect(badScope.status).toBe(400);
    const row = await platform.ctx.db
      .selectFrom("forwardAuthProviders")
      .selectAll()
      .where("providerId", "=", providerId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(CLIENT_SECRET);
    // Another organization does not see it.
    expect((await platform.query("forwardAuth.listProviders", {}, as(stranger))).body).toEqual([]);
  });

  it("deploys an application reachable by its host, unprotected", async () => {
    const project = await platform.mutateOk("project.create", { name: "Forward auth" }, as(owner));
    const app = await platform.mutateOk(
      "application.create",
      { name: "Protected", environmentId: project.environment.environmentId, appName },
      as(owner),
    );
    await platform.mutateOk(
      "application.saveDockerProvider",
      { applicationId: app.applicationId, dockerImage: TEST_IMAGE },
      as(owner),
    );
    await platform.mutateOk(
      "application.update",
      {
        applicationId: app.applicationId,
        command:
          'sh -c "mkdir -p /www && echo protected-page > /www/index.html && exec httpd -f -p 8080 -h /www"',
      },
      as(owner),
    );
    const { deploymentId } = await platform.mutateOk(
      "application.deploy",
      { applicationId: app.applicationId },
      as(owner),
    );
    const deployment = await platform.waitForDeployment(deploymentId);
    expect(deployment.status, deployment.errorMessage ?? "").toBe("done");
    applicationId = app.applicationId;
    const domain = await platform.mutateOk(
      "domain.create",
      {
        applicationId: app.applicationId,
        host: APP_HOST,
        port: 8080,
        https: false,
        certificateType: "none",
        domainType: "application",
      },
      as(owner),
    );
    domainId = domain.domainId;
    expect(await expectAnswer(APP_HOST, 200)).toContain("protected-page");
  }, 300_000);

  it("refuses to protect a domain before the server's service is deployed, naming the field", async () => {
    const early = await platform.mutate("forwardAuth.enable", { domainId }, as(owner));
    expect(early.status).toBe(400);
    expect(early.body.error.data.fields).toEqual(["domainId"]);
    const noDomain = await platform.mutate(
      "forwardAuth.deployOnServer",
      { serverId: null, providerId },
      as(owner),
    );
    expect(noDomain.status).toBe(400);
    expect(noDomain.body.error.data.fields).toEqual(["serverId"]);
    // domain.create/update's forwardAuthEnabled (Dokploy CLI 0.30.7) are refused the same way, naming it.
    const update = await platform.mutate("domain.update", { domainId, forwardAuthEnabled: true }, as(owner));
    expect(update.status).toBe(400);
    expect(update.body.error.data.fields).toEqual(["forwardAuthEnabled"]);
    const create = await platform.mutate(
      "domain.create",
      { applicationId, host: SECOND_HOST, port: 8080, domainType: "application", forwardAuthEnabled: true },
      as(owner),
    );
    expect(create.status).toBe(400);
    expect(create.body.error.data.fields).toEqual(["forwardAuthEnabled"]);
    const domains = await platform.query("domain.byApplicationId", { applicationId }, as(owner));
    expect(domains.body.map((domain: { host: string }) => domain.host)).toEqual([APP_HOST]);
    expect((await platform.query("forwardAuth.status", { domainId }, as(owner))).body).toEqual({
      enabled: false,
    });
  });

  it("sets the auth domain and deploys the service with the organization's labels", async () => {
    const noResolver = await platform.mutate(
      "forwardAuth.setAuthDomain",
      { serverId: null, authDomain: AUTH_HOST, https: true, certificateType: "custom" },
      as(owner),
    );
    expect(noResolver.status).toBe(400);
    expect(noResolver.body.error.data.fields).toEqual(["customCertResolver"]);
    await platform.mutateOk(
      "forwardAuth.setAuthDomain",
      {
        serverId: null,
        authDomain: AUTH_HOST,
        https: true,
        certificateType: "custom",
        customCertResolver: "myresolver",
      },
      as(owner),
    );
    const secured = await readdir(path.join(directory, "traefik", "dynamic"));
    const authFile = secured.find((name) => name.startsWith("forward-auth-"))!;
    const securedText = await readFile(path.join(directory, "traefik", "dynamic", authFile), "utf8");
    expect(securedText).toContain("certResolver: myresolver");
    expect(securedText).toContain("websecure");
    expect(parseDynamicConfig(securedText).ok).toBe(true);

    const set = await platform.mutateOk(
      "forwardAuth.setAuthDomain",
      { serverId: null, authDomain: AUTH_HOST.toUpperCase(), https: false, certificateType: "none" },
      as(owner),
    );
    expect(set).toEqual({ callbackUrl: `http://${AUTH_HOST}/oauth2/callback` });
    const read = await platform.query("forwardAuth.getAuthDomain", {}, as(owner));
    expect(read.body).toEqual({
      host: AUTH_HOST,
      https: false,
      certificateType: "none",
      customCertResolver: null,
      callbackUrl: `http://${AUTH_HOST}/oauth2/callback`,
    });
    expect(
      await platform.mutateOk("forwardAuth.deployOnServer", { serverId: null, providerId }, as(owner)),
    ).toEqual({ ok: true });

    const settings = await platform.ctx.db
      .selectFrom("forwardAuthSettings")
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(settings.providerId).toBe(providerId);
    const serviceNames = (await dockerCli(["service", "ls", "--format", "{{.Name}}"])).split("\n");
    const service = serviceNames.find((name) => name.startsWith("forward-auth-"))!;
    expect(service).toBeDefined();
    services.push(service);
    const labels = JSON.parse(
      await dockerCli(["service", "inspect", "--format", "{{json .Spec.Labels}}", service]),
    );
    expect(labels).toMatchObject({
      "platform.managed": "true",
      "platform.organization": owner.user.organizationId,
      "platform.resource": `forward-auth:${settings.forwardAuthSettingsId}`,
    });
    const image = await dockerCli([
      "service",
      "inspect",
      "--format",
      "{{.Spec.TaskTemplate.ContainerSpec.Image}}",
      service,
    ]);
    expect(image.trim()).toBe(AUTH_IMAGE);
    const env: string[] = JSON.parse(
      await dockerCli([
        "service",
        "inspect",
        "--format",
        "{{json .Spec.TaskTemplate.ContainerSpec.Env}}",
        service,
      ]),
    );
    expect(env).toEqual(
      expect.arrayContaining([
        "OAUTH2_PROXY_OIDC_ISSUER_URL=https://idp.example.com/realms/main",
        "OAUTH2_PROXY_CLIENT_ID=platform-client",
        `OAUTH2_PROXY_CLIENT_SECRET=${CLIENT_SECRET}`,
        "OAUTH2_PROXY_SCOPE=openid email groups",
        `OAUTH2_PROXY_REDIRECT_URL=http://${AUTH_HOST}/oauth2/callback`,
        `OAUTH2_PROXY_COOKIE_DOMAINS=.fa${process.pid}.test`,
        "OAUTH2_PROXY_COOKIE_SECURE=false",
      ]),
    );
    // The cookie secret is the sealed one: oauth2-proxy takes 32 characters.
    expect(env.find((entry) => entry.startsWith("OAUTH2_PROXY_COOKIE_SECRET="))).toMatch(/=[0-9a-f]{32}$/);
    // The auth domain's /oauth2/ routes are a file of the service's name.
    const files = await readdir(path.join(directory, "traefik", "dynamic"));
    expect(files).toContain(`${service}.yml`);

    const status = await platform.query("forwardAuth.serverStatus", {}, as(owner));
    expect(status.body).toContainEqual({
      serverId: null,
      name: "Platform server (local)",
      status: "running",
      authDomain: AUTH_HOST,
      https: false,
      certificateType: "none",
      customCertResolver: null,
      callbackUrl: `http://${AUTH_HOST}/oauth2/callback`,
    });
    // Nothing answered names a secret.
    expect(JSON.stringify([set, read.body, status.body])).not.toContain(CLIENT_SECRET);
  }, 240_000);

  it("keeps another organization out of the domain, the server and the provider", async () => {
    for (const [name, input] of [
      ["forwardAuth.enable", { domainId }],
      ["forwardAuth.disable", { domainId }],
    ] as const) {
      expect((await platform.mutate(name, input, as(stranger))).status, name).toBe(404);
    }
    expect((await platform.query("forwardAuth.status", { domainId }, as(stranger))).status).toBe(404);
    // The owner's provider is a 404 to anyone else, before anything else is checked.
    const foreign = await platform.mutate(
      "forwardAuth.deployOnServer",
      { serverId: null, providerId },
      as(stranger),
    );
    expect(foreign.status).toBe(404);
    // This machine is the instance organization's: another one must name its own server.
    const theirs = await platform.mutateOk(
      "forwardAuth.createProvider",
      { issuer: "https://idp.example.com", clientId: "stranger-client", clientSecret: "stranger-secret" },
      as(stranger),
    );
    const elsewhere = await platform.mutate(
      "forwardAuth.deployOnServer",
      { serverId: null, providerId: theirs.providerId },
      as(stranger),
    );
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.data.fields).toEqual(["serverId"]);
    expect((await platform.mutate("forwardAuth.removeProvider", { providerId }, as(stranger))).status).toBe(
      404,
    );
    // The owner's auth host cannot be taken as a domain by anyone else's settings.
    expect(
      (await platform.mutate("forwardAuth.removeOnServer", { serverId: "not-a-server" }, as(stranger)))
        .status,
    ).toBe(404);
  });

  it("protects the domain: 401 without the session, 200 with it; the file passes the schema", async () => {
    expect(await platform.mutateOk("forwardAuth.enable", { domainId }, as(owner))).toEqual({ ok: true });
    expect((await platform.query("forwardAuth.status", { domainId }, as(owner))).body).toEqual({
      enabled: true,
    });
    const parsed = parseDynamicConfig(await appFile());
    expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
    const text = await appFile();
    expect(text).toContain("forwardAuth:");
    expect(text).not.toContain(CLIENT_SECRET);

    expect(await expectAnswer(APP_HOST, 401)).toContain("forward-auth stand-in");
    expect(await expectAnswer(APP_HOST, 401, "_oauth2_proxy=wrong")).toContain("forward-auth stand-in");
    expect(await expectAnswer(APP_HOST, 200, `_oauth2_proxy=${CLIENT_SECRET}`)).toContain("protected-page");
  }, 180_000);

  it("domain.update and domain.create take forwardAuthEnabled as forwardAuth.disable/enable do", async () => {
    const off = await platform.mutate("domain.update", { domainId, forwardAuthEnabled: false }, as(owner));
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect((await platform.query("forwardAuth.status", { domainId }, as(owner))).body).toEqual({
      enabled: false,
    });
    expect(await expectAnswer(APP_HOST, 200)).toContain("protected-page");
    const on = await platform.mutate("domain.update", { domainId, forwardAuthEnabled: true }, as(owner));
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect((await platform.query("forwardAuth.status", { domainId }, as(owner))).body).toEqual({
      enabled: true,
    });
    expect(await expectAnswer(APP_HOST, 401)).toContain("forward-auth stand-in");

    const second = await platform.mutate(
      "domain.create",
      { applicationId, host: SECOND_HOST, port: 8080, domainType: "application", forwardAuthEnabled: true },
      as(owner),
    );
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(
      (await platform.query("forwardAuth.status", { domainId: second.body.domainId }, as(owner))).body,
    ).toEqual({ enabled: true });
    expect(await expectAnswer(SECOND_HOST, 401)).toContain("forward-auth stand-in");
    expect(await expectAnswer(SECOND_HOST, 200, `_oauth2_proxy=${CLIENT_SECRET}`)).toContain(
      "protected-page",
    );
    const removed = await platform.mutate("domain.delete", { domainId: second.body.domainId }, as(owner));
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
  }, 180_000);

  it("refuses to remove the service or its domain while a domain is protected", async () => {
    for (const name of ["forwardAuth.removeOnServer", "forwardAuth.removeAuthDomain"]) {
      const refused = await platform.mutate(name, { serverId: null }, as(owner));
      expect(refused.status, name).toBe(409);
    }
    const inUse = await platform.mutate("forwardAuth.removeProvider", { providerId }, as(owner));
    expect(inUse.status).toBe(409);
    expect(await expectAnswer(APP_HOST, 401)).toContain("forward-auth stand-in");
  });

  it("unprotects the domain on disable, then removes the service and its routes", async () => {
    expect(await platform.mutateOk("forwardAuth.disable", { domainId }, as(owner))).toEqual({ ok: true });
    expect((await platform.query("forwardAuth.status", { domainId }, as(owner))).body).toEqual({
      enabled: false,
    });
    expect(await appFile()).not.toContain("forwardAuth");
    expect(await expectAnswer(APP_HOST, 200)).toContain("protected-page");

    expect(await platform.mutateOk("forwardAuth.removeAuthDomain", { serverId: null }, as(owner))).toEqual({
      ok: true,
    });
    expect((await platform.query("forwardAuth.getAuthDomain", {}, as(owner))).body).toBeNull();
    const serviceNames = (await dockerCli(["service", "ls", "--format", "{{.Name}}"])).split("\n");
    expect(
      serviceNames.filter((name) => services.includes(name) && name.startsWith("forward-auth-")),
    ).toEqual([]);
    const files = await readdir(path.join(directory, "traefik", "dynamic"));
    expect(files.filter((name) => name.startsWith("forward-auth-"))).toEqual([]);
    expect(await platform.mutateOk("forwardAuth.removeProvider", { providerId }, as(owner))).toEqual({
      success: true,
    });
  }, 120_000);
});
