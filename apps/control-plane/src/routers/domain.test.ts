/**
 * domain.* and application.read/updateTraefikConfig against the in-process local agent, which
 * writes the proxy files into a temporary main directory: the files are read back from disk and
 * compared with what @platform/traefik-config generates, and checked against Traefik's schema.
 */
import { readdir } from "node:fs/promises";
import {
  dynamicConfigFor,
  GENERATED_ROUTER_PRIORITY_BASE,
  parseDynamicConfig,
  toYaml,
  validateDynamicConfig,
} from "@platform/traefik-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { newId } from "../crypto/ids.ts";
import { setDnsResolver } from "../domains/dns.ts";
import {
  certificateFile,
  createApplication,
  dynamicFile,
  type ProxyTestPlatform,
  readIfExists,
  selfSignedCertificate,
  startProxyTestPlatform,
} from "../proxy/test-support.ts";
import type { Session } from "../testing/harness.ts";
import { insertServer as insertServerRow } from "../testing/servers.ts";

const PUBLIC_IP = "203.0.113.7";
let test: ProxyTestPlatform;
const as = (session = test.owner) => ({ token: session.token });

async function createDomain(input: Record<string, unknown>, session = test.owner) {
  return test.platform.mutate("domain.create", { domainType: "application", ...input }, as(session));
}

async function domainsOf(applicationId: string) {
  const response = await test.platform.query("domain.byApplicationId", { applicationId }, as());
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as Array<Record<string, any>>;
}

beforeAll(async () => {
  test = await startProxyTestPlatform({ PLATFORM_PUBLIC_IP: PUBLIC_IP });
}, 60_000);

afterAll(async () => {
  setDnsResolver(undefined);
  await test?.close();
});

describe("domain.create / update / delete write the application's Traefik file", () => {
  let app: { applicationId: string; appName: string };
  let first: Record<string, any>;
  let second: Record<string, any>;

  beforeAll(async () => {
    app = await createApplication(test);
  });

  it("creating a domain writes <appName>.yml exactly as generated, valid against the schema", async () => {
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "Shop.Example.com",
      port: 8080,
      https: true,
      certificateType: "letsencrypt",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    first = created.body;
    expect(first).toMatchObject({
      domainId: expect.any(String),
      host: "shop.example.com",
      path: "/",
      port: 8080,
      https: true,
      certificateType: "letsencrypt",
      domainType: "application",
      applicationId: app.applicationId,
      composeId: null,
      certificate: null,
      uniqueConfigKey: expect.stringMatching(/^\d+$/),
      stripPath: true,
      internalPath: null,
    });
    const text = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
    const expected = dynamicConfigFor(
      {
        appName: app.appName,
        domains: [
          {
            uniqueConfigKey: Number(first.uniqueConfigKey),
            host: "shop.example.com",
            path: "/",
            port: 8080,
            https: true,
            certificateType: "letsencrypt",
          },
        ],
        credentials: [],
      },
      { certificatesDirectory: "/etc/traefik/dynamic/certificates" },
    );
    expect(text).toBe(toYaml(expected!));
    expect(validateDynamicConfig(parse(text!))).toEqual([]);
    const key = first.uniqueConfigKey;
    expect(parse(text!).http.routers[`${app.appName}-router-websecure-${key}`]).toEqual({
      entryPoints: ["websecure"],
      rule: "Host(`shop.example.com`)",
      service: `${app.appName}-service-${key}`,
      tls: { certResolver: "letsencrypt" },
      // The generated band: above every tenant router, longest rule first (issue 22, finding 1).
      priority: GENERATED_ROUTER_PRIORITY_BASE + "Host(`shop.example.com`)".length,
    });
  });

  it("a second domain with a path adds its routers and strip-prefix middleware to the same file", async () => {
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "shop.example.com",
      path: "/api",
      port: 3000,
      https: false,
      certificateType: "none",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    second = created.body;
    const config = parse((await readIfExists(dynamicFile(test, `${app.appName}.yml`)))!);
    expect(validateDynamicConfig(config)).toEqual([]);
    const key = second.uniqueConfigKey;
    expect(config.http.routers[`${app.appName}-router-${key}`]).toEqual({
      entryPoints: ["web"],
      rule: "Host(`shop.example.com`) && PathPrefix(`/api`)",
      service: `${app.appName}-service-${key}`,
      middlewares: [`stripprefix-${app.appName}-${key}`],
      priority: GENERATED_ROUTER_PRIORITY_BASE + "Host(`shop.example.com`) && PathPrefix(`/api`)".length,
    });
    expect(config.http.services[`${app.appName}-service-${key}`]).toEqual({
      loadBalancer: { servers: [{ url: `http://${app.appName}:3000` }], passHostHeader: true },
    });
    expect(Object.keys(config.http.routers)).toHaveLength(3);
  });

  it("byApplicationId lists the domains and one answers each", async () => {
    const list = await domainsOf(app.applicationId);
    expect(list.map((domain) => domain.domainId)).toEqual([first.domainId, second.domainId]);
    const one = await test.platform.query("domain.one", { domainId: second.domainId }, as());
    expect(one.status).toBe(200);
    expect(one.body).toEqual(second);
  });

  it("update rewrites the file", async () => {
    const updated = await test.platform.mutate(
      "domain.update",
      { domainId: first.domainId, host: "store.example.com", https: false },
      as(),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ host: "store.example.com", https: false, port: 8080 });
    const config = parse((await readIfExists(dynamicFile(test, `${app.appName}.yml`)))!);
    expect(config.http.routers[`${app.appName}-router-${first.uniqueConfigKey}`].rule).toBe(
      "Host(`store.example.com`)",
    );
    expect(config.http.routers[`${app.appName}-router-websecure-${first.uniqueConfigKey}`]).toBeUndefined();
  });

  it("deleting the last domain removes the file", async () => {
    expect((await test.platform.mutate("domain.delete", { domainId: first.domainId }, as())).status).toBe(
      200,
    );
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toContain("PathPrefix(`/api`)");
    const deleted = await test.platform.mutate("domain.delete", { domainId: second.domainId }, as());
    expect(deleted.status).toBe(200);
    expect(deleted.body.domainId).toBe(second.domainId);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBeUndefined();
    expect(await domainsOf(app.applicationId)).toEqual([]);
    expect((await test.platform.query("domain.one", { domainId: second.domainId }, as())).status).toBe(404);
  });
});

describe("refused input changes nothing", () => {
  let app: { applicationId: string; appName: string };
  let before: string | undefined;

  beforeAll(async () => {
    app = await createApplication(test);
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "safe.example.com",
      certificateType: "none",
    });
    expect(created.status).toBe(200);
    before = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
    expect(before).toBeDefined();
  });

  const expectRefused = async (input: Record<string, unknown>, field: string) => {
    const response = await createDomain({
      applicationId: app.applicationId,
      certificateType: "none",
      ...input,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toEqual([field]);
    expect(await domainsOf(app.applicationId)).toHaveLength(1);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBe(before);
  };

  it.each([
    ["a backtick (rule injection)", "evil.com`) || Host(`victim.com"],
    ["a closing parenthesis", "evil.com)"],
    ["a space", "evil .com"],
    ["a newline (YAML injection)", "evil.com\n    middlewares: [x]"],
    ["a quote", 'evil.com"'],
    ["a slash", "evil.com/x"],
    ["a colon", "evil.com:80"],
    ["a wildcard in the middle", "a.*.example.com"],
  ])("a host with %s is a 400 naming host", async (_case, host) => {
    await expectRefused({ host }, "host");
  });

  it.each([
    ["../../etc/x"],
    ["/../../etc/x"],
    ["/a/%2e%2e/b"],
    ["/x\nfoo: bar"],
    ["/x`) || Host(`y"],
    ["/x y"],
  ])("the path %j is a 400 naming path", async (path) => {
    await expectRefused({ host: "ok.example.com", path }, "path");
  });

  it("the same host and path again, on this application or another of the organization, is a 400 naming host", async () => {
    await expectRefused({ host: "safe.example.com" }, "host");
    await expectRefused({ host: "SAFE.example.com", path: "/" }, "host");
    const other = await createApplication(test);
    const again = await createDomain({
      applicationId: other.applicationId,
      host: "safe.example.com",
      certificateType: "none",
    });
    expect(again.status).toBe(400);
    expect(again.body.error.data.fields).toEqual(["host"]);
    expect(again.body.error.message).toContain("safe.example.com");
    // Another path of the same host is another route (as in Dokploy).
    const otherPath = await createDomain({
      applicationId: other.applicationId,
      host: "safe.example.com",
      path: "/api",
      certificateType: "none",
    });
    expect(otherPath.status, JSON.stringify(otherPath.body)).toBe(200);
  });

  it("an internalPath with `..` is a 400 naming internalPath", async () => {
    await expectRefused({ host: "ok.example.com", path: "/a", internalPath: "/x/../.." }, "internalPath");
  });

  it.each([[0], [65536], [1.5]])("port %j is a 400 naming port", async (port) => {
    await expectRefused({ host: "ok.example.com", port }, "port");
  });

  it("a wildcard host needs a custom certificate", async () => {
    await expectRefused({ host: "*.example.com", certificateType: "letsencrypt" }, "certificateType");
  });

  it("a custom certificate needs a certificate and its own key", async () => {
    const pair = selfSignedCertificate("custom.example.com");
    const otherPair = selfSignedCertificate("custom.example.com");
    await expectRefused({ host: "custom.example.com", certificateType: "custom" }, "certificate");
    await expectRefused(
      { host: "custom.example.com", certificateType: "custom", certificate: pair.certificate },
      "certificateKey",
    );
    await expectRefused(
      {
        host: "custom.example.com",
        certificateType: "custom",
        certificate: pair.certificate,
        certificateKey: otherPair.key,
      },
      "certificateKey",
    );
    await expectRefused(
      {
        host: "custom.example.com",
        certificateType: "custom",
        certificate: "not a pem",
        certificateKey: pair.key,
      },
      "certificate",
    );
  });

  it("a certificate resolver name that would break the YAML is refused", async () => {
    await expectRefused(
      { host: "r.example.com", certificateType: "custom", customCertResolver: "x\n  evil: 1" },
      "customCertResolver",
    );
  });

  it("an update with a bad host is a 400 and leaves domain and file as they were", async () => {
    const [domain] = await domainsOf(app.applicationId);
    const response = await test.platform.mutate(
      "domain.update",
      { domainId: domain!.domainId, host: "x`)" },
      as(),
    );
    expect(response.status).toBe(400);
    expect(response.body.error.data.fields).toEqual(["host"]);
    expect((await domainsOf(app.applicationId))[0]!.host).toBe("safe.example.com");
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBe(before);
  });

  it("domainType rules: applicationId required, compose services do not exist, preview is not created here", async () => {
    const missing = await createDomain({ host: "a.example.com", certificateType: "none" });
    expect(missing.status).toBe(400);
    expect(missing.body.error.data.fields).toEqual(["applicationId"]);
    const compose = await createDomain({
      domainType: "compose",
      composeId: "c1",
      serviceName: "web",
      host: "a.example.com",
      certificateType: "none",
    });
    expect(compose.status).toBe(404);
    const composeMissing = await createDomain({
      domainType: "compose",
      host: "a.example.com",
      certificateType: "none",
    });
    expect(composeMissing.status).toBe(400);
    expect(composeMissing.body.error.data.fields).toEqual(["composeId"]);
    const preview = await createDomain({
      domainType: "preview",
      applicationId: app.applicationId,
      host: "a.example.com",
      certificateType: "none",
    });
    expect(preview.status).toBe(400);
    expect(preview.body.error.data.fields).toEqual(["domainType"]);
    expect((await test.platform.query("domain.byComposeId", { composeId: "c1" }, as())).status).toBe(404);
  });

  // A real preview's previewDeploymentId is refused in previews/previews.test.ts (an unknown one is a 404).
  it("domain.create refuses the fields this domain would not use, naming each, and stores nothing", async () => {
    const base = { applicationId: app.applicationId, host: "unused.example.com", certificateType: "none" };
    // A stack of the caller's (an unknown or another organization's composeId is a 404 first).
    const { environmentId } = await test.platform.ctx.db
      .selectFrom("applications")
      .select("environmentId")
      .where("applicationId", "=", app.applicationId)
      .executeTakeFirstOrThrow();
    const stack = await test.platform.mutateOk(
      "compose.create",
      {
        name: "unused stack",
        appName: "unused-stack",
        environmentId,
        composeFile: "services:\n  web:\n    image: busybox\n",
      },
      as(),
    );
    expect((await createDomain({ ...base, composeId: "c1" })).status).toBe(404);
    for (const [input, name] of [
      [{ ...base, composeId: stack.composeId }, "composeId"],
      [{ ...base, domainType: "compose", composeId: "c1", serviceName: "web" }, "applicationId"],
      [{ ...base, serviceName: "web" }, "serviceName"],
      [{ ...base, customCertResolver: "letsencrypt" }, "customCertResolver"],
      [{ ...base, certificateType: "letsencrypt", certificate: "x" }, "certificate"],
    ] as const) {
      const response = await createDomain(input);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.data.fields).toEqual([name]);
    }
    expect((await domainsOf(app.applicationId)).map((domain) => domain.host)).not.toContain(
      "unused.example.com",
    );
  });
});

describe("Dokploy's defaults", () => {
  it("domain.create without domainType, certificateType or https makes an HTTP-only application domain", async () => {
    const app = await createApplication(test);
    const created = await test.platform.mutate(
      "domain.create",
      { applicationId: app.applicationId, host: "defaults.example.com" },
      as(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ domainType: "application", certificateType: "none", https: false });
    const config = parse((await readIfExists(dynamicFile(test, `${app.appName}.yml`)))!);
    expect(Object.values(config.http.routers).map((router: any) => router.entryPoints)).toEqual([["web"]]);
  });
});

describe("customEntrypoint and middlewares", () => {
  it("route the domain on its entry point with the extra middlewares; update changes and clears them", async () => {
    const app = await createApplication(test);
    const file = dynamicFile(test, `${app.appName}.yml`);
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "entry.example.com",
      https: true,
      certificateType: "letsencrypt",
      customEntrypoint: "internal",
      middlewares: ["ratelimit@file", "compress"],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      customEntrypoint: "internal",
      middlewares: ["ratelimit@file", "compress"],
    });
    let config = parse((await readIfExists(file))!);
    expect(validateDynamicConfig(config)).toEqual([]);
    let routers = Object.values(config.http.routers) as any[];
    expect(routers).toHaveLength(1);
    expect(routers[0]).toMatchObject({
      entryPoints: ["internal"],
      middlewares: ["ratelimit@file", "compress"],
      tls: { certResolver: "letsencrypt" },
    });

    const updated = await test.platform.mutate(
      "domain.update",
      { domainId: created.body.domainId, customEntrypoint: "", middlewares: [], domainType: "application" },
      as(),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ customEntrypoint: null, middlewares: [] });
    config = parse((await readIfExists(file))!);
    routers = Object.values(config.http.routers) as any[];
    expect(routers.map((router) => router.entryPoints[0]).sort()).toEqual(["web", "websecure"]);
    expect(JSON.stringify(routers)).not.toContain("ratelimit");
    const one = await test.platform.query("domain.one", { domainId: created.body.domainId }, as());
    expect(one.body).toMatchObject({ customEntrypoint: null, middlewares: [] });
  });

  // Each case its own host: one host and path routes to one service of the organization.
  let refusals = 0;
  it.each([
    [{ customEntrypoint: "web secure" }, "customEntrypoint"],
    [{ customEntrypoint: "x`) || Host(`y" }, "customEntrypoint"],
    [{ middlewares: ["ok", "bad name"] }, "middlewares.1"],
    [{ middlewares: ["a@file\nrule: x"] }, "middlewares.0"],
    [{ domainType: "compose" }, "domainType"],
    // Fields the domain would not use are refused, never stored unused (issue 27 item 1).
    [{ serviceName: "web" }, "serviceName"],
    [{ customCertResolver: "letsencrypt" }, "customCertResolver"],
    [{ certificate: "-----BEGIN CERTIFICATE-----" }, "certificate"],
    [{ certificateKey: "-----BEGIN PRIVATE KEY-----" }, "certificateKey"],
    [{ certificateType: "custom", customCertResolver: "myresolver", certificate: "x" }, "certificate"],
  ])("domain.update refuses %j with a 400 naming %s", async (change, fieldName) => {
    const app = await createApplication(test);
    refusals += 1;
    const created = await createDomain({
      applicationId: app.applicationId,
      host: `refuse-${refusals}.example.com`,
    });
    expect(created.status).toBe(200);
    const before = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
    const response = await test.platform.mutate(
      "domain.update",
      { domainId: created.body.domainId, ...change },
      as(),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toContain(fieldName);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBe(before);
  });
});

describe("domain.middlewares and customEntrypoint follow the tenant rules of Traefik files (issue 22, finding 6)", () => {
  let member: Session;
  let app: { applicationId: string; appName: string };
  let other: { applicationId: string; appName: string };

  beforeAll(async () => {
    // A member of the instance organization is not an instance administrator: the rules apply.
    member = await test.platform.addMember(test.owner, "member");
    app = await createApplication(test);
    other = await createApplication(test);
  });

  const cases: Array<[string, () => Record<string, unknown>, string]> = [
    ["another application's middleware", () => ({ middlewares: [`auth-${other.appName}`] }), "middlewares.0"],
    [
      "a @file middleware",
      () => ({ middlewares: [`${app.appName}-headers`, "ratelimit@file"] }),
      "middlewares.1",
    ],
    ["a @docker middleware", () => ({ middlewares: [`${app.appName}-headers@docker`] }), "middlewares.0"],
    ["Traefik's own middleware", () => ({ middlewares: ["dashboard_redirect@internal"] }), "middlewares.0"],
    ["the platform's middleware", () => ({ middlewares: ["platform-control-plane-auth"] }), "middlewares.0"],
    ["the dashboard's entry point", () => ({ customEntrypoint: "traefik" }), "customEntrypoint"],
    ["an entry point of the instance's", () => ({ customEntrypoint: "internal" }), "customEntrypoint"],
  ];

  it.each(cases)(
    "domain.create by a member with %s is a 400 naming the field, and nothing is written",
    async (_case, fields, name) => {
      const before = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
      const response = await createDomain(
        { applicationId: app.applicationId, host: "member-routing.example.com", ...fields() },
        member,
      );
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.data.fields).toEqual([name]);
      expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBe(before);
      expect(await domainsOf(app.applicationId)).toEqual([]);
    },
  );

  it("a member may add the application's own middlewares on web or websecure; update is held to the same rule", async () => {
    const created = await createDomain(
      {
        applicationId: app.applicationId,
        host: "member-routing.example.com",
        customEntrypoint: "websecure",
        middlewares: [`${app.appName}-headers`, `auth-${app.appName}`],
      },
      member,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const before = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
    for (const [, fields, name] of cases) {
      const response = await test.platform.mutate(
        "domain.update",
        { domainId: created.body.domainId, ...fields() },
        as(member),
      );
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.data.fields).toEqual([name]);
    }
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBe(before);
  });

  it("the instance administrator may attach any; a member sending those values back unchanged is not refused", async () => {
    const created = await createDomain({
      applicationId: other.applicationId,
      host: "admin-routing.example.com",
      customEntrypoint: "internal",
      middlewares: ["ratelimit@file", `auth-${app.appName}`],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const resent = await test.platform.mutate(
      "domain.update",
      {
        domainId: created.body.domainId,
        port: 8081,
        customEntrypoint: "internal",
        middlewares: ["ratelimit@file", `auth-${app.appName}`],
      },
      as(member),
    );
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    expect(resent.body).toMatchObject({ port: 8081, customEntrypoint: "internal" });
    const added = await test.platform.mutate(
      "domain.update",
      { domainId: created.body.domainId, middlewares: ["ratelimit@file", "compress@file"] },
      as(member),
    );
    expect(added.status, JSON.stringify(added.body)).toBe(400);
    expect(added.body.error.data.fields).toEqual(["middlewares.1"]);
  });
});

describe("hosts and certificates", () => {
  it("an internationalized host is stored and routed in punycode", async () => {
    const app = await createApplication(test);
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "bücher.example",
      certificateType: "letsencrypt",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.host).toBe("xn--bcher-kva.example");
    const text = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
    expect(text).toContain("Host(`xn--bcher-kva.example`)");
    expect(text).not.toContain("bücher");
  });

  it("a wildcard host with a custom certificate writes the PEM files the configuration names", async () => {
    const app = await createApplication(test);
    const pair = selfSignedCertificate("*.wild.example.com");
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "*.wild.example.com",
      https: true,
      certificateType: "custom",
      certificate: pair.certificate,
      certificateKey: pair.key,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.certificate).toBe(pair.certificate);
    expect(JSON.stringify(created.body)).not.toContain("PRIVATE KEY");
    const key = created.body.uniqueConfigKey;
    const base = `${app.appName}-${key}`;
    expect(await readIfExists(certificateFile(test, `${base}.crt`))).toBe(pair.certificate);
    expect(await readIfExists(certificateFile(test, `${base}.key`))).toBe(pair.key);
    const config = parse((await readIfExists(dynamicFile(test, `${app.appName}.yml`)))!);
    expect(validateDynamicConfig(config)).toEqual([]);
    expect(config.tls.certificates).toEqual([
      {
        certFile: `/etc/traefik/dynamic/certificates/${base}.crt`,
        keyFile: `/etc/traefik/dynamic/certificates/${base}.key`,
      },
    ]);
    expect(config.http.routers[`${app.appName}-router-websecure-${key}`].rule).toBe(
      "HostRegexp(`^[a-z0-9-]+\\.wild\\.example\\.com$`)",
    );
    // The key is sealed at rest.
    const row = await test.platform.ctx.db
      .selectFrom("domains")
      .selectAll()
      .where("domainId", "=", created.body.domainId)
      .executeTakeFirstOrThrow();
    expect(row.certificateKeySealed).not.toContain("PRIVATE KEY");
    const keyBody = pair.key.split("\n")[1]!;
    expect(row.certificateKeySealed).not.toContain(keyBody);
    expect(test.platform.logLines.join("\n")).not.toContain(keyBody);

    // Leaving `custom` removes the PEM files.
    const updated = await test.platform.mutate(
      "domain.update",
      { domainId: created.body.domainId, host: "plain.example.com", certificateType: "letsencrypt" },
      as(),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.certificate).toBeNull();
    expect(await readIfExists(certificateFile(test, `${base}.crt`))).toBeUndefined();
    expect(await readIfExists(certificateFile(test, `${base}.key`))).toBeUndefined();
    expect(parse((await readIfExists(dynamicFile(test, `${app.appName}.yml`)))!).tls).toBeUndefined();
  });
});

describe("concurrent changes", () => {
  it("domains created at the same time all end up in the file", async () => {
    const app = await createApplication(test);
    const hosts = ["c1", "c2", "c3", "c4", "c5"].map((label) => `${label}.example.com`);
    const responses = await Promise.all(
      hosts.map((host) => createDomain({ applicationId: app.applicationId, host, certificateType: "none" })),
    );
    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    const config = parse((await readIfExists(dynamicFile(test, `${app.appName}.yml`)))!);
    const rules = Object.values(config.http.routers).map((router) => (router as { rule: string }).rule);
    expect(rules.sort()).toEqual(hosts.map((host) => `Host(\`${host}\`)`).sort());
  });
});

describe("application.update moves the file with the appName", () => {
  it("a new appName removes <old>.yml and writes <new>.yml naming the new service", async () => {
    const app = await createApplication(test);
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "moved.example.com",
      certificateType: "none",
    });
    expect(created.status).toBe(200);
    const appName = `${app.appName}-renamed`;
    const updated = await test.platform.mutate(
      "application.update",
      { applicationId: app.applicationId, appName },
      as(),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBeUndefined();
    const config = parse((await readIfExists(dynamicFile(test, `${appName}.yml`)))!);
    expect(
      config.http.services[`${appName}-service-${created.body.uniqueConfigKey}`].loadBalancer.servers,
    ).toEqual([{ url: `http://${appName}:3000` }]);
  });
});

describe("another organization's ids are 404", () => {
  it("domain procedures on a stranger's application or domain are 404", async () => {
    const mine = await createApplication(test);
    const created = await createDomain({
      applicationId: mine.applicationId,
      host: "mine.example.com",
      certificateType: "none",
    });
    expect(created.status).toBe(200);
    const domainId = created.body.domainId;
    const stranger = test.stranger;
    expect((await test.platform.query("domain.one", { domainId }, as(stranger))).status).toBe(404);
    expect(
      (
        await test.platform.query(
          "domain.byApplicationId",
          { applicationId: mine.applicationId },
          as(stranger),
        )
      ).status,
    ).toBe(404);
    expect(
      (await test.platform.mutate("domain.update", { domainId, host: "stolen.example.com" }, as(stranger)))
        .status,
    ).toBe(404);
    expect((await test.platform.mutate("domain.delete", { domainId }, as(stranger))).status).toBe(404);
    expect(
      (
        await createDomain(
          { applicationId: mine.applicationId, host: "x.example.com", certificateType: "none" },
          stranger,
        )
      ).status,
    ).toBe(404);
    expect((await domainsOf(mine.applicationId)).map((domain) => domain.host)).toEqual(["mine.example.com"]);
    expect(
      (
        await test.platform.query(
          "application.readTraefikConfig",
          { applicationId: mine.applicationId },
          as(stranger),
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await test.platform.mutate(
          "application.updateTraefikConfig",
          { applicationId: mine.applicationId, traefikConfig: "http: {}\n" },
          as(stranger),
        )
      ).status,
    ).toBe(404);
  });
});

describe("domain.toggleEnable", () => {
  it("a disabled domain leaves the file (the last one removes it) and keeps its host; enabling writes it back", async () => {
    const app = await createApplication(test);
    const file = () => readIfExists(dynamicFile(test, `${app.appName}.yml`));
    const kept = await createDomain({
      applicationId: app.applicationId,
      host: "kept.example.com",
      port: 8080,
    });
    const toggled = await createDomain({
      applicationId: app.applicationId,
      host: "toggled.example.com",
      port: 8080,
    });
    expect(toggled.status, JSON.stringify(toggled.body)).toBe(200);
    expect(toggled.body.enabled).toBe(true);
    expect(await file()).toContain("toggled.example.com");

    const off = await test.platform.mutate("domain.toggleEnable", { domainId: toggled.body.domainId }, as());
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body).toMatchObject({
      domainId: toggled.body.domainId,
      enabled: false,
      requiresRedeploy: false,
    });
    let text = await file();
    expect(text).toContain("kept.example.com");
    expect(text).not.toContain("toggled.example.com");
    expect(
      (await test.platform.query("domain.one", { domainId: toggled.body.domainId }, as())).body.enabled,
    ).toBe(false);
    // The row stays, so its host stays the organization's (ownership.ts reads every row).
    expect((await domainsOf(app.applicationId)).map((domain) => domain.host)).toEqual([
      "kept.example.com",
      "toggled.example.com",
    ]);

    // The last enabled domain disabled: no file.
    await test.platform.mutateOk("domain.toggleEnable", { domainId: kept.body.domainId }, as());
    expect(await file()).toBeUndefined();

    const on = await test.platform.mutate("domain.toggleEnable", { domainId: toggled.body.domainId }, as());
    expect(on.body.enabled).toBe(true);
    text = await file();
    expect(text).toContain("toggled.example.com");
    expect(text).not.toContain("kept.example.com");
    expect(validateDynamicConfig(parse(text!))).toEqual([]);
  });

  it("domain.update's enabled (Dokploy's CLI option) disables and enables like toggleEnable, with the other changes", async () => {
    const app = await createApplication(test);
    const file = () => readIfExists(dynamicFile(test, `${app.appName}.yml`));
    await createDomain({ applicationId: app.applicationId, host: "stays.example.com", port: 8080 });
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "flag.example.com",
      port: 8080,
    });
    const off = await test.platform.mutate(
      "domain.update",
      { domainId: created.body.domainId, enabled: false, port: 9090 },
      as(),
    );
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body).toMatchObject({ enabled: false, port: 9090 });
    expect(await file()).not.toContain("flag.example.com");
    const on = await test.platform.mutate(
      "domain.update",
      { domainId: created.body.domainId, enabled: true },
      as(),
    );
    expect(on.body).toMatchObject({ enabled: true, port: 9090 });
    expect(await file()).toContain("flag.example.com");
  });

  it("another organization's domain is a 404 and stays as it was", async () => {
    const app = await createApplication(test);
    const created = await createDomain({ applicationId: app.applicationId, host: "guarded.example.com" });
    const answer = await test.platform.mutate(
      "domain.toggleEnable",
      { domainId: created.body.domainId },
      as(test.stranger),
    );
    expect(answer.status).toBe(404);
    expect(
      (await test.platform.query("domain.one", { domainId: created.body.domainId }, as())).body.enabled,
    ).toBe(true);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toContain("guarded.example.com");
  });
});

describe("a host belongs to one organization across the instance (issue 10, finding 4)", () => {
  // The victim is another organization; its domains are rows (its proxy would be on a server of
  // its own, which this in-process test does not run). The claimant is the instance organization.
  let theirs: { applicationId: string; appName: string };
  let mine: { applicationId: string; appName: string };
  const wildcard = (host: string) => ({ host, certificateType: "custom", customCertResolver: "myresolver" });
  const insertTheirs = (host: string, path = "/") =>
    test.platform.ctx.db
      .insertInto("domains")
      .values({
        domainId: newId(),
        host,
        path,
        certificateType: host.startsWith("*.") ? "custom" : "none",
        customCertResolver: host.startsWith("*.") ? "myresolver" : null,
        certificate: null,
        certificateKeySealed: null,
        domainType: "application",
        applicationId: theirs.applicationId,
        composeId: null,
        serviceName: null,
        internalPath: null,
      })
      .execute();

  beforeAll(async () => {
    theirs = await createApplication(test, test.stranger, test.strangerEnvironmentId);
    mine = await createApplication(test);
    await insertTheirs("owned.example.com");
    await insertTheirs("owned.example.com", "/api");
    await insertTheirs("*.tenant.example.net");
  });

  it.each([
    ["the same host", { host: "owned.example.com", certificateType: "none" }],
    [
      "the same host in another case and another path",
      { host: "OWNED.example.com", path: "/x", certificateType: "none" },
    ],
    ["a host under its wildcard", { host: "shop.tenant.example.net", certificateType: "none" }],
    ["a deeper host under its wildcard", { host: "a.b.tenant.example.net", certificateType: "none" }],
    ["the same wildcard", wildcard("*.tenant.example.net")],
    ["a wildcard over its host", wildcard("*.example.com")],
    ["a wider wildcard over its wildcard", wildcard("*.example.net")],
  ])(
    "another organization claiming %s is a 409 naming host, and nothing is written",
    async (_case, input) => {
      const before = await readIfExists(dynamicFile(test, `${mine.appName}.yml`));
      const response = await createDomain({ applicationId: mine.applicationId, ...input });
      expect(response.status, JSON.stringify(response.body)).toBe(409);
      expect(response.body.error.data.fields).toEqual(["host"]);
      expect(await readIfExists(dynamicFile(test, `${mine.appName}.yml`))).toBe(before);
      expect(await domainsOf(mine.applicationId)).toEqual([]);
    },
  );

  it("domain.update to another organization's host is a 409 and leaves the domain as it was", async () => {
    const created = await createDomain({
      applicationId: mine.applicationId,
      host: "mine-only.example.org",
      certificateType: "none",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const moved = await test.platform.mutate(
      "domain.update",
      { domainId: created.body.domainId, host: "x.tenant.example.net" },
      as(),
    );
    expect(moved.status, JSON.stringify(moved.body)).toBe(409);
    expect(moved.body.error.data.fields).toEqual(["host"]);
    const kept = await test.platform.query("domain.one", { domainId: created.body.domainId }, as());
    expect(kept.body.host).toBe("mine-only.example.org");
    // Its own host, changed in other fields only, stays fine.
    const port = await test.platform.mutate(
      "domain.update",
      { domainId: created.body.domainId, port: 8081 },
      as(),
    );
    expect(port.status, JSON.stringify(port.body)).toBe(200);
    // And the other organization cannot take it back (refused before anything is routed).
    const back = await createDomain(
      { applicationId: theirs.applicationId, host: "mine-only.example.org", certificateType: "none" },
      test.stranger,
    );
    expect(back.status, JSON.stringify(back.body)).toBe(409);
    await test.platform.mutate("domain.delete", { domainId: created.body.domainId }, as());
  });

  it("neighbouring hosts stay free: a sibling, the wildcard's parent itself, and a host above", async () => {
    for (const host of ["other.example.com", "tenant.example.net", "example.net"]) {
      const response = await createDomain({
        applicationId: mine.applicationId,
        host,
        certificateType: "none",
      });
      expect(response.status, `${host}: ${JSON.stringify(response.body)}`).toBe(200);
    }
  });

  it("the same organization may route one host from several applications (other paths, as in Dokploy)", async () => {
    const first = await createApplication(test);
    const second = await createApplication(test);
    for (const [app, path] of [
      [first, "/"],
      [second, "/admin"],
    ] as const) {
      const response = await createDomain({
        applicationId: app.applicationId,
        host: "shared-by-apps.example.com",
        path,
        certificateType: "none",
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    }
  });

  it("a wildcard may not claim a top-level domain or the shared wildcard domain (400 naming host)", async () => {
    for (const host of ["*.com", "*.traefik.me", "*.me", "*.1.2.3.4.traefik.me"]) {
      const response = await createDomain(
        { applicationId: theirs.applicationId, ...wildcard(host) },
        test.stranger,
      );
      expect(response.status, `${host}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.error.data.fields).toEqual(["host"]);
    }
    // Generated hosts under it stay free.
    const generated = await createDomain({
      applicationId: mine.applicationId,
      host: "app-abc123.1.2.3.4.traefik.me",
      certificateType: "none",
    });
    expect(generated.status, JSON.stringify(generated.body)).toBe(200);
  });

  it("the control plane's own host is the instance organization's only", async () => {
    await test.platform.ctx.db
      .updateTable("webServerSettings")
      .set({ host: "panel.example.io" })
      .where("id", "=", 1)
      .execute();
    try {
      for (const input of [{ host: "panel.example.io", certificateType: "none" }, wildcard("*.example.io")]) {
        const refused = await createDomain({ applicationId: theirs.applicationId, ...input }, test.stranger);
        expect(refused.status, JSON.stringify(refused.body)).toBe(409);
        expect(refused.body.error.data.fields).toEqual(["host"]);
      }
      const own = await createDomain({
        applicationId: mine.applicationId,
        host: "panel.example.io",
        path: "/status",
        certificateType: "none",
      });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
    } finally {
      await test.platform.ctx.db
        .updateTable("webServerSettings")
        .set({ host: null })
        .where("id", "=", 1)
        .execute();
    }
  });
});

describe("application.readTraefikConfig / updateTraefikConfig", () => {
  let app: { applicationId: string; appName: string };
  let file: string;

  beforeAll(async () => {
    app = await createApplication(test);
    file = dynamicFile(test, `${app.appName}.yml`);
  });

  it("reads null without a file and the file's text with one", async () => {
    const empty = await test.platform.query(
      "application.readTraefikConfig",
      { applicationId: app.applicationId },
      as(),
    );
    expect(empty.status).toBe(200);
    expect(empty.body).toBeNull();
    expect(
      (
        await createDomain({
          applicationId: app.applicationId,
          host: "cfg.example.com",
          certificateType: "none",
        })
      ).status,
    ).toBe(200);
    const read = await test.platform.query(
      "application.readTraefikConfig",
      { applicationId: app.applicationId },
      as(),
    );
    expect(read.body).toBe(await readIfExists(file));
  });

  it.each([
    ["invalid YAML", "http:\n  routers: [\n"],
    [
      "an unknown key",
      "http:\n  routers:\n    r:\n      rule: Host(`a.com`)\n      service: s\n      evil: true\n",
    ],
    ["a YAML tag", "http: !!binary aGVsbG8=\n"],
    ["several documents", "http: {}\n---\nhttp: {}\n"],
  ])("%s is a 400 naming traefikConfig and the file stays", async (_case, traefikConfig) => {
    const before = await readIfExists(file);
    const response = await test.platform.mutate(
      "application.updateTraefikConfig",
      { applicationId: app.applicationId, traefikConfig },
      as(),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toEqual(["traefikConfig"]);
    expect(await readIfExists(file)).toBe(before);
  });

  it("valid YAML replaces the file as written", async () => {
    const traefikConfig = [
      "http:",
      "  routers:",
      "    custom:",
      "      rule: Host(`custom.example.com`)",
      "      service: custom",
      "  services:",
      "    custom:",
      "      loadBalancer:",
      "        servers:",
      `          - url: http://${app.appName}:8080`,
      "",
    ].join("\n");
    expect(parseDynamicConfig(traefikConfig).ok).toBe(true);
    const response = await test.platform.mutate(
      "application.updateTraefikConfig",
      { applicationId: app.applicationId, traefikConfig },
      as(),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(await readIfExists(file)).toBe(traefikConfig);
  });

  it("application.delete removes the file", async () => {
    const pair = selfSignedCertificate("gone.example.com");
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "gone.example.com",
      certificateType: "custom",
      certificate: pair.certificate,
      certificateKey: pair.key,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const certificate = certificateFile(test, `${app.appName}-${created.body.uniqueConfigKey}.crt`);
    expect(await readIfExists(certificate)).toBe(pair.certificate);
    const deleted = await test.platform.mutate(
      "application.delete",
      { applicationId: app.applicationId },
      as(),
    );
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(await readIfExists(file)).toBeUndefined();
    expect(await readIfExists(certificate)).toBeUndefined();
    const left = await test.platform.ctx.db
      .selectFrom("domains")
      .select("domainId")
      .where("applicationId", "=", app.applicationId)
      .execute();
    expect(left).toEqual([]);
  });

  it("removing an environment or a project removes its applications' files", async () => {
    const project = await test.platform.mutateOk("project.create", { name: "Short-lived" }, as());
    const projectId: string = project.project.projectId;
    const staging = await test.platform.mutateOk("environment.create", { name: "staging", projectId }, as());
    const inStaging = await createApplication(test, test.owner, staging.environmentId);
    const inProduction = await createApplication(test, test.owner, project.environment.environmentId);
    for (const [application, host] of [
      [inStaging, "staging.example.com"],
      [inProduction, "production.example.com"],
    ] as const) {
      const created = await createDomain({
        applicationId: application.applicationId,
        host,
        certificateType: "none",
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(await readIfExists(dynamicFile(test, `${application.appName}.yml`))).toContain(host);
    }

    await test.platform.mutateOk("environment.remove", { environmentId: staging.environmentId }, as());
    expect(await readIfExists(dynamicFile(test, `${inStaging.appName}.yml`))).toBeUndefined();
    expect(await readIfExists(dynamicFile(test, `${inProduction.appName}.yml`))).toContain(
      "production.example.com",
    );

    await test.platform.mutateOk("project.remove", { projectId }, as());
    expect(await readIfExists(dynamicFile(test, `${inProduction.appName}.yml`))).toBeUndefined();
  });

  it("no file ever lands outside the dynamic directory", async () => {
    const names = await readdir(dynamicFile(test, ""));
    for (const name of names) expect(name).toMatch(/^([a-zA-Z0-9][a-zA-Z0-9._-]*\.yml|certificates)$/);
  });
});

describe("application.updateTraefikConfig by a tenant routes only its own hosts to its own service (issue 10, finding 4)", () => {
  let app: { applicationId: string; appName: string };
  let file: string;
  const own = (
    appName: string,
    overrides: { rule?: string; url?: string; priority?: number; extra?: string[] } = {},
  ) =>
    [
      "http:",
      "  routers:",
      `    ${appName}-custom:`,
      "      entryPoints: [websecure]",
      `      rule: ${overrides.rule ?? "Host(`tenant-cfg.example.com`) && PathPrefix(`/v2`)"}`,
      `      service: ${appName}-custom`,
      "      tls: { certResolver: letsencrypt }",
      ...(overrides.priority === undefined ? [] : [`      priority: ${overrides.priority}`]),
      "  services:",
      `    ${appName}-custom:`,
      "      loadBalancer:",
      "        servers:",
      `          - url: ${overrides.url ?? `http://${appName}:8080`}`,
      ...(overrides.extra ?? []),
      "",
    ].join("\n");
  let member: Session;
  const write = (traefikConfig: string, session = member) =>
    test.platform.mutate(
      "application.updateTraefikConfig",
      { applicationId: app.applicationId, traefikConfig },
      as(session),
    );

  beforeAll(async () => {
    // A plain member: not an instance administrator, so the tenant rule applies (another
    // organization's owner is held to it the same way; see the unit tests of userConfigIssues).
    member = await test.platform.addMember(test.owner, "member");
    const granted = await test.platform.mutate(
      "user.assignPermissions",
      { id: member.user.userId, canAccessToTraefikFiles: true },
      as(),
    );
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    app = await createApplication(test);
    file = dynamicFile(test, `${app.appName}.yml`);
    const created = await createDomain({
      applicationId: app.applicationId,
      host: "tenant-cfg.example.com",
      certificateType: "none",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
  });

  it("accepts the application's own host and service", async () => {
    const response = await write(own(app.appName));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(await readIfExists(file)).toBe(own(app.appName));
  });

  it.each([
    ["a catch-all rule", { rule: "PathPrefix(`/`)" }, ".rule"],
    [
      // Issue 22, finding 1: an escape-blind reading took it for Header(…) && Host(own host).
      "a rule Traefik reads as … || PathPrefix(`/`) behind an escaped quote and a comment",
      { rule: `'Header("X", "a\\", ") || PathPrefix(\`/\`) // ") && Host(\`tenant-cfg.example.com\`)'` },
      ".rule",
    ],
    ["a priority in the generated routers' band", { priority: 10_001 }, ".priority"],
    ["another organization's host", { rule: "Host(`shop.example.com`)" }, ".rule"],
    ["the metadata address", { url: "http://169.254.169.254/latest/meta-data" }, ".url"],
    ["Postgres on the proxy's machine", { url: "http://127.0.0.1:5432" }, ".url"],
    ["the control plane's service", { url: "http://platform-control-plane:3000" }, ".url"],
    [
      "a TCP passthrough",
      {
        extra: [
          "tcp:",
          "  routers:",
          "    x:",
          "      rule: HostSNI(`*`)",
          "      service: x",
          "      tls: { passthrough: true }",
          "  services:",
          "    x:",
          "      loadBalancer:",
          "        servers:",
          "          - address: 127.0.0.1:5432",
        ],
      },
      "tcp",
    ],
    [
      "tls.certificates with host files",
      {
        extra: [
          "tls:",
          "  certificates:",
          "    - certFile: /etc/ssl/private/a.crt",
          "      keyFile: /etc/ssl/private/a.key",
        ],
      },
      "tls",
    ],
  ])("refuses %s with a 400 naming the key path, and the file stays", async (_case, overrides, pathEnd) => {
    const before = await readIfExists(file);
    const response = await write(own(app.appName, overrides));
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toEqual(["traefikConfig"]);
    const issuePaths = (response.body.error.data.issues as { path: string }[]).map((issue) => issue.path);
    expect(
      issuePaths.some((path) => path.endsWith(pathEnd)),
      JSON.stringify(issuePaths),
    ).toBe(true);
    expect(await readIfExists(file)).toBe(before);
  });

  it("the instance administrator may write anything", async () => {
    const catchAll = own(app.appName, { rule: "PathPrefix(`/`)", url: "http://127.0.0.1:5432" });
    const allowed = await write(catchAll, test.owner);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(await readIfExists(file)).toBe(catchAll);
  });
});

describe("generateDomain / canGenerateTraefikMeDomains / validateDomain", () => {
  const insertServer = (ipAddress: string, organizationId = test.owner.user.organizationId) =>
    insertServerRow(test.platform.ctx.db, organizationId, { ipAddress });

  it("generates <appName>-<hash>.<server-ip>.traefik.me for this machine and for a server", async () => {
    const local = await test.platform.mutate("domain.generateDomain", { appName: "My_App.v2" }, as());
    expect(local.status, JSON.stringify(local.body)).toBe(200);
    expect(local.body).toMatch(/^my-app-v2-[a-z0-9]{6}\.203\.0\.113\.7\.traefik\.me$/);
    const serverId = await insertServer("198.51.100.4");
    const remote = await test.platform.mutate("domain.generateDomain", { appName: "shop", serverId }, as());
    expect(remote.body).toMatch(/^shop-[a-z0-9]{6}\.198\.51\.100\.4\.traefik\.me$/);
    const again = await test.platform.mutate("domain.generateDomain", { appName: "shop", serverId }, as());
    expect(again.body).not.toBe(remote.body);
  });

  it("uses the configured wildcard domain", async () => {
    await test.platform.ctx.db
      .updateTable("webServerSettings")
      .set({ wildcardDomain: "sslip.io" })
      .where("id", "=", 1)
      .execute();
    try {
      const local = await test.platform.mutate("domain.generateDomain", { appName: "shop" }, as());
      expect(local.body).toMatch(/^shop-[a-z0-9]{6}\.203\.0\.113\.7\.sslip\.io$/);
    } finally {
      await test.platform.ctx.db
        .updateTable("webServerSettings")
        .set({ wildcardDomain: "traefik.me" })
        .where("id", "=", 1)
        .execute();
    }
  });

  it("refuses a bad appName and another organization's server", async () => {
    const bad = await test.platform.mutate("domain.generateDomain", { appName: "a b;rm -rf" }, as());
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(["appName"]);
    const theirs = await insertServer("198.51.100.9", test.stranger.user.organizationId);
    expect(
      (await test.platform.mutate("domain.generateDomain", { appName: "x", serverId: theirs }, as())).status,
    ).toBe(404);
    expect(
      (await test.platform.query("domain.canGenerateTraefikMeDomains", { serverId: theirs }, as())).status,
    ).toBe(404);
  });

  it('canGenerateTraefikMeDomains answers the IPv4 address, or "" for a host name', async () => {
    const local = await test.platform.query(
      "domain.canGenerateTraefikMeDomains",
      { serverId: "local" },
      as(),
    );
    expect(local.body).toBe(PUBLIC_IP);
    const named = await insertServer("node.example.com");
    const byName = await test.platform.query("domain.canGenerateTraefikMeDomains", { serverId: named }, as());
    expect(byName.status).toBe(200);
    expect(byName.body).toBe("");
    const generated = await test.platform.mutate(
      "domain.generateDomain",
      { appName: "x", serverId: named },
      as(),
    );
    expect(generated.status).toBe(400);
    expect(generated.body.error.data.fields).toEqual(["serverId"]);
  });

  it("validateDomain looks the host up through the injected resolver", async () => {
    const asked: string[] = [];
    setDnsResolver(async (host) => {
      asked.push(host);
      if (host === "missing.example.com") throw Object.assign(new Error("nope"), { code: "ENOTFOUND" });
      return host === "xn--bcher-kva.example" ? [PUBLIC_IP] : ["192.0.2.1"];
    });
    const valid = await test.platform.mutate(
      "domain.validateDomain",
      { domain: "bücher.example", serverIp: PUBLIC_IP },
      as(),
    );
    expect(valid.body).toEqual({ isValid: true, resolvedIp: PUBLIC_IP });
    const elsewhere = await test.platform.mutate(
      "domain.validateDomain",
      { domain: "a.example.com", serverIp: PUBLIC_IP },
      as(),
    );
    expect(elsewhere.body).toMatchObject({
      isValid: false,
      resolvedIp: "192.0.2.1",
      error: expect.stringContaining(PUBLIC_IP),
    });
    const missing = await test.platform.mutate(
      "domain.validateDomain",
      { domain: "missing.example.com" },
      as(),
    );
    expect(missing.body).toEqual({ isValid: false, resolvedIp: "", error: "Domain not found" });
    const injected = await test.platform.mutate("domain.validateDomain", { domain: "a.com`)" }, as());
    expect(injected.status).toBe(400);
    expect(injected.body.error.data.fields).toEqual(["domain"]);
    expect(asked).toEqual(["xn--bcher-kva.example", "a.example.com", "missing.example.com"]);
  });

  it("validateDomain with serverId checks the host against that server's address (Dokploy's CLI option)", async () => {
    setDnsResolver(async () => ["198.51.100.9"]);
    const pointed = await insertServer("198.51.100.9");
    const elsewhere = await insertServer("198.51.100.10");
    const foreign = await insertServer("198.51.100.9", test.stranger.user.organizationId);
    const valid = await test.platform.mutate(
      "domain.validateDomain",
      { domain: "shop.example.com", serverId: pointed },
      as(),
    );
    expect(valid.body).toEqual({ isValid: true, resolvedIp: "198.51.100.9" });
    const wrong = await test.platform.mutate(
      "domain.validateDomain",
      { domain: "shop.example.com", serverId: elsewhere },
      as(),
    );
    expect(wrong.body).toMatchObject({ isValid: false, error: expect.stringContaining("198.51.100.10") });
    const other = await test.platform.mutate(
      "domain.validateDomain",
      { domain: "shop.example.com", serverId: foreign },
      as(),
    );
    expect(other.status).toBe(404);
    setDnsResolver(undefined);
  });
});
