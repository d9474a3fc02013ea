/**
 * userConfigIssues: what a tenant may write as its application's Traefik file (issue 10,
 * finding 4). The generated file passes; each capture attempt of the attack pass is refused
 * with the key path that carries it.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { dynamicConfigFor } from "./dynamic.ts";
import {
  CONTROL_PLANE_ROUTER_PRIORITY,
  GENERATED_ROUTER_PRIORITY_BASE,
  MAX_USER_ROUTER_PRIORITY,
} from "./priorities.ts";
import {
  userConfigIssues,
  userEntryPointProblem,
  userMiddlewareReferenceProblem,
  userRuleProblem,
} from "./user-config.ts";

const scope = { appName: "shop-x1", hosts: ["shop.example.com", "*.tenant.example.net"] };

/** A valid file of the application, changed by `patch` (a function over a deep copy). */
function config(patch: (c: any) => void = () => {}) {
  const base: any = {
    http: {
      routers: {
        "shop-x1-router-1": {
          entryPoints: ["websecure"],
          rule: "Host(`shop.example.com`) && PathPrefix(`/api`)",
          service: "shop-x1-service-1",
          middlewares: ["stripprefix-shop-x1-1"],
          tls: { certResolver: "letsencrypt" },
          priority: 100,
        },
      },
      services: {
        "shop-x1-service-1": {
          loadBalancer: { servers: [{ url: "http://shop-x1:3000" }], passHostHeader: true },
        },
      },
      middlewares: { "stripprefix-shop-x1-1": { stripPrefix: { prefixes: ["/api"] } } },
    },
  };
  patch(base);
  return base;
}

const paths = (c: Record<string, unknown>) => userConfigIssues(c, scope).map((issue) => issue.path);

describe("userConfigIssues", () => {
  it("accepts the application's own routers, services and middlewares", () => {
    expect(userConfigIssues(config(), scope)).toEqual([]);
  });

  it("accepts the file the platform generates for the application's domains", () => {
    const generated = dynamicConfigFor(
      {
        appName: "shop-x1",
        domains: [
          {
            uniqueConfigKey: 1,
            host: "shop.example.com",
            path: "/api",
            port: 3000,
            https: true,
            certificateType: "letsencrypt",
          },
          {
            uniqueConfigKey: 2,
            host: "shop.example.com",
            path: "/",
            port: 3000,
            https: false,
            certificateType: "none",
          },
        ],
        credentials: [{ username: "u", passwordHash: "$apr1$abcdefgh$0123456789abcdefghijkl" }],
      },
      { certificatesDirectory: "/etc/traefik/dynamic/certificates" },
    );
    const copy = JSON.parse(JSON.stringify(generated));
    // The generated routers' priorities are the platform's band, above every tenant's …
    expect(paths(copy)).toEqual([
      "http.routers.shop-x1-router-1.priority",
      "http.routers.shop-x1-router-websecure-1.priority",
      "http.routers.shop-x1-router-2.priority",
    ]);
    // … and without them the file is the tenant's to write.
    for (const router of Object.values<any>(copy.http.routers)) delete router.priority;
    expect(userConfigIssues(copy, scope)).toEqual([]);
  });

  it.each([
    [
      "a TCP passthrough to Postgres",
      (c: any) => (c.tcp = { routers: { x: { rule: "HostSNI(`*`)", service: "pg" } } }),
      "tcp",
    ],
    ["a UDP router", (c: any) => (c.udp = { services: {} }), "udp"],
    [
      "tls.certificates naming host files",
      (c: any) => (c.tls = { certificates: [{ certFile: "/etc/shadow", keyFile: "/root/.ssh/id_rsa" }] }),
      "tls",
    ],
    [
      "a serversTransport",
      (c: any) => (c.http.serversTransports = { t: { rootCAs: ["/etc/ssl/private/key.pem"] } }),
      "http.serversTransports",
    ],
    [
      "a catch-all rule",
      (c: any) => (c.http.routers["shop-x1-router-1"].rule = "PathPrefix(`/`)"),
      "http.routers.shop-x1-router-1.rule",
    ],
    [
      "an || escape from the host",
      (c: any) => (c.http.routers["shop-x1-router-1"].rule = "Host(`shop.example.com`) || PathPrefix(`/`)"),
      "http.routers.shop-x1-router-1.rule",
    ],
    [
      "a negated host",
      (c: any) => (c.http.routers["shop-x1-router-1"].rule = "!Host(`shop.example.com`)"),
      "http.routers.shop-x1-router-1.rule",
    ],
    [
      "another tenant's host",
      (c: any) => (c.http.routers["shop-x1-router-1"].rule = "Host(`bank.example.org`)"),
      "http.routers.shop-x1-router-1.rule",
    ],
    [
      "a HostRegexp catch-all",
      (c: any) => (c.http.routers["shop-x1-router-1"].rule = "HostRegexp(`.*`)"),
      "http.routers.shop-x1-router-1.rule",
    ],
    [
      "a huge priority",
      (c: any) => (c.http.routers["shop-x1-router-1"].priority = 2147483000),
      "http.routers.shop-x1-router-1.priority",
    ],
    [
      "the dashboard entry point",
      (c: any) => (c.http.routers["shop-x1-router-1"].entryPoints = ["traefik"]),
      "http.routers.shop-x1-router-1.entryPoints.0",
    ],
    [
      "a service at the metadata address",
      (c: any) =>
        (c.http.services["shop-x1-service-1"].loadBalancer.servers[0].url = "http://169.254.169.254/latest"),
      "http.services.shop-x1-service-1.loadBalancer.servers.0.url",
    ],
    [
      "a service on the proxy's loopback",
      (c: any) =>
        (c.http.services["shop-x1-service-1"].loadBalancer.servers[0].url = "http://127.0.0.1:8080"),
      "http.services.shop-x1-service-1.loadBalancer.servers.0.url",
    ],
    [
      "another application's Swarm service",
      (c: any) =>
        (c.http.services["shop-x1-service-1"].loadBalancer.servers[0].url =
          "http://platform-control-plane:3000"),
      "http.services.shop-x1-service-1.loadBalancer.servers.0.url",
    ],
    [
      "user info smuggling a host",
      (c: any) =>
        (c.http.services["shop-x1-service-1"].loadBalancer.servers[0].url = "http://shop-x1@10.0.0.1:80"),
      "http.services.shop-x1-service-1.loadBalancer.servers.0.url",
    ],
    [
      "the internal API service",
      (c: any) => (c.http.routers["shop-x1-router-1"].service = "api@internal"),
      "http.routers.shop-x1-router-1.service",
    ],
    [
      "another file's service",
      (c: any) => (c.http.routers["shop-x1-router-1"].service = "bank-service-1"),
      "http.routers.shop-x1-router-1.service",
    ],
    [
      "a plugin",
      (c: any) => (c.http.middlewares["stripprefix-shop-x1-1"] = { plugin: { evil: {} } }),
      "http.middlewares.stripprefix-shop-x1-1.plugin",
    ],
    [
      "forwardAuth to an internal address",
      (c: any) =>
        (c.http.middlewares["stripprefix-shop-x1-1"] = { forwardAuth: { address: "http://10.0.0.1" } }),
      "http.middlewares.stripprefix-shop-x1-1.forwardAuth",
    ],
    [
      "a basicAuth usersFile",
      (c: any) => (c.http.middlewares["stripprefix-shop-x1-1"] = { basicAuth: { usersFile: "/etc/passwd" } }),
      "http.middlewares.stripprefix-shop-x1-1.basicAuth.usersFile",
    ],
    [
      "tls options of another provider",
      (c: any) => (c.http.routers["shop-x1-router-1"].tls = { options: "default@file" }),
      "http.routers.shop-x1-router-1.tls.options",
    ],
    [
      "a router named like another application's",
      (c: any) => {
        c.http.routers["bank-router-1"] = c.http.routers["shop-x1-router-1"];
        delete c.http.routers["shop-x1-router-1"];
      },
      "http.routers.bank-router-1",
    ],
    [
      "a weighted service pointing elsewhere",
      (c: any) =>
        (c.http.services["shop-x1-service-1"] = { weighted: { services: [{ name: "bank@file" }] } }),
      "http.services.shop-x1-service-1.weighted",
    ],
  ])("refuses %s, naming the key", (_case, patch, path) => {
    expect(paths(config(patch))).toContain(path);
  });
});

describe("userConfigIssues: names in the proxy's one namespace", () => {
  // Traefik keeps the first definition of a name across files, so a name of another
  // application or of the platform would replace theirs.
  const named = (appName: string, name: string, longerAppNames: string[] = []) =>
    userConfigIssues(
      { http: { middlewares: { [name]: { stripPrefix: { prefixes: ["/x"] } } } } },
      { appName, hosts: [], longerAppNames },
    ).map((issue) => `${issue.path}: ${issue.message}`);

  it("accepts the appName, <appName>-… and the middlewares generated for it", () => {
    for (const name of ["shop", "shop-extra", "auth-shop", "redirect-to-https-shop", "stripprefix-shop-1"])
      expect(named("shop", name), name).toEqual([]);
  });

  it("refuses the platform's names, another application's and names merely containing the appName", () => {
    expect(named("control", "platform-control-plane-service-dashboard")).toEqual([
      "http.middlewares.platform-control-plane-service-dashboard: belongs to the platform",
    ]);
    expect(named("service", "victim-service-1")).toEqual([
      "http.middlewares.victim-service-1: must be service, start with service- or be one of its generated middlewares (auth-service…)",
    ]);
    expect(named("auth", "auth-victim")).toHaveLength(1);
    expect(named("platform", "platform-traefik")).toEqual([
      "http.middlewares.platform-traefik: belongs to the platform",
    ]);
    expect(named("a", "a-b-router-1", ["a-b"])).toEqual([
      "http.middlewares.a-b-router-1: belongs to the application a-b",
    ]);
    expect(named("a", "auth-a-b", ["a-b"])).toHaveLength(1);
    // An application named like a generated prefix owns only the middlewares made for it.
    expect(named("auth", "auth-auth")).toEqual([]);
    expect(named("a", "a-c-router-1", ["a-b"])).toEqual([]);
  });
});

describe("userRuleProblem", () => {
  it.each([
    "Host(`shop.example.com`)",
    "Host(`shop.example.com`) && Path(`/x`)",
    "(Host(`shop.example.com`) || Host(`a.tenant.example.net`)) && (PathPrefix(`/a`) || !Method(`POST`))",
    'Host("shop.example.com") && Header(`X-Env`, `prod`)',
  ])("accepts %s", (rule) => {
    expect(userRuleProblem(rule, scope.hosts)).toBeNull();
  });

  it.each([
    "Host(`a.b.tenant.example.net`)",
    "Host(`shop.example.com`) || Host(`evil.example.com`)",
    "HostSNI(`*`)",
    "Host(`shop.example.com`",
    "Host(`shop.example.com`) garbage",
    "",
  ])("refuses %s", (rule) => {
    expect(userRuleProblem(rule, scope.hosts)).not.toBeNull();
  });
});

describe("userRuleProblem reads the rule as Traefik does (issue 22, finding 1)", () => {
  it("refuses the rule an escape-blind reading takes for Header(…) && Host(own host): Traefik reads … || PathPrefix(`/`)", () => {
    const attack = 'Header("X", "a\\", ") || PathPrefix(`/`) // ") && Host(`shop.example.com`)';
    expect(userRuleProblem(attack, scope.hosts)).toBe(
      "must match only the application's own hosts: combine Host(`…`) with && (no catch-all)",
    );
  });

  it.each([
    ["a comment hiding the host", "PathPrefix(`/`) // && Host(`shop.example.com`)"],
    ["a block comment hiding the host", "PathPrefix(`/`) /* && Host(`shop.example.com`) */"],
    ["a line break ending the expression early", "Host(`shop.example.com`)\n|| PathPrefix(`/`)"],
    ["a raw string keeping its backslash", "Host(`shop.example.com\\`) || PathPrefix(`/`)"],
    ["v2's several hosts in one Host", "Host(`shop.example.com`, `bank.example.org`)"],
    ["an empty argument", "Host(`shop.example.com`) && Path(``)"],
    [
      "a rule longer than a tenant's priority",
      `Host(\`shop.example.com\`) && Header(\`X\`, \`${"a".repeat(10_000)}\`)`,
    ],
  ])("refuses %s", (_case, rule) => {
    expect(userRuleProblem(rule, scope.hosts)).not.toBeNull();
  });

  it.each([
    'Host("\\x73hop.example.com")',
    "host(`SHOP.example.com`) && PATHPREFIX(`/api`) // the API",
    "Host(`shop.example.com`) &&\n  PathPrefix(`/api`)",
    "Host(`shop.example.com`) && Header(`X`, `a // not a comment`)",
  ])("accepts %s, which Traefik reads as the application's own host", (rule) => {
    expect(userRuleProblem(rule, scope.hosts)).toBeNull();
  });
});

describe("userMiddlewareReferenceProblem / userEntryPointProblem: one rule for files and domains (issue 22, finding 6)", () => {
  const namespace = { appName: "shop-x1", longerAppNames: ["shop-x1-admin"] };

  it.each([
    ["shop-x1-headers", null],
    ["auth-shop-x1", null],
    ["ratelimit@file", "must name a middleware of the application (no @provider references)"],
    ["shop-x1-headers@docker", "must name a middleware of the application (no @provider references)"],
    ["auth-bank", expect.stringContaining("must be shop-x1")],
    ["auth-shop-x1-admin", "belongs to the application shop-x1-admin"],
    ["platform-control-plane-auth", "belongs to the platform"],
  ])("%s", (name, problem) => {
    expect(userMiddlewareReferenceProblem(name, namespace)).toEqual(problem);
  });

  it("entry points: web and websecure only", () => {
    expect(["web", "websecure", "traefik", "internal", 1].map(userEntryPointProblem)).toEqual([
      null,
      null,
      "must be web or websecure",
      "must be web or websecure",
      "must be web or websecure",
    ]);
  });

  it("a file's router referencing another provider's or application's middleware is refused by the same rule", () => {
    const refused = paths(
      config((c) => (c.http.routers["shop-x1-router-1"].middlewares = ["ratelimit@file", "auth-bank"])),
    );
    expect(refused).toEqual([
      "http.routers.shop-x1-router-1.middlewares.0",
      "http.routers.shop-x1-router-1.middlewares.1",
    ]);
  });
});

describe("userConfigIssues: tenants' priorities stay below the platform's routers (issue 22, finding 1)", () => {
  it("accepts up to MAX_USER_ROUTER_PRIORITY and refuses the generated routers' band", () => {
    const at = (priority: number) =>
      paths(config((c) => (c.http.routers["shop-x1-router-1"].priority = priority)));
    expect(at(0)).toEqual([]);
    expect(at(MAX_USER_ROUTER_PRIORITY)).toEqual([]);
    expect(at(MAX_USER_ROUTER_PRIORITY + 1)).toEqual(["http.routers.shop-x1-router-1.priority"]);
    expect(at(GENERATED_ROUTER_PRIORITY_BASE)).toEqual(["http.routers.shop-x1-router-1.priority"]);
    expect(at(CONTROL_PLANE_ROUTER_PRIORITY)).toEqual(["http.routers.shop-x1-router-1.priority"]);
  });

  it("the bands are ordered: every tenant router below every generated one, the control plane above all", () => {
    expect(MAX_USER_ROUTER_PRIORITY).toBeLessThan(GENERATED_ROUTER_PRIORITY_BASE);
    // The longest generated rule: a wildcard host's HostRegexp with the longest path.
    const longest = `HostRegexp(\`^[a-z0-9-]+\\.${"a".repeat(250)}$\`) && PathPrefix(\`/${"p".repeat(1023)}\`)`;
    expect(GENERATED_ROUTER_PRIORITY_BASE + Buffer.byteLength(longest)).toBeLessThan(
      CONTROL_PLANE_ROUTER_PRIORITY,
    );
    // Traefik refuses user priorities in its reserved range (MaxInt - 1000), MaxInt32 on 32-bit builds.
    expect(CONTROL_PLANE_ROUTER_PRIORITY).toBeLessThan(2 ** 31 - 1 - 1000);
  });
});

describe("userConfigIssues over YAML as users write it", () => {
  it("finds the attack pass's configuration refused on every count", () => {
    const attack = parse(`
http:
  routers:
    grab:
      entryPoints: [web, websecure]
      rule: PathPrefix(\`/\`)
      priority: 2147483000
      service: grab
  services:
    grab:
      loadBalancer:
        servers:
          - url: http://169.254.169.254
tcp:
  routers:
    pg:
      rule: HostSNI(\`*\`)
      service: pg
      tls: { passthrough: true }
  services:
    pg:
      loadBalancer:
        servers:
          - address: 127.0.0.1:5432
tls:
  certificates:
    - certFile: /etc/ssl/private/host.crt
      keyFile: /etc/ssl/private/host.key
`);
    expect(paths(attack)).toEqual(
      expect.arrayContaining([
        "tcp",
        "tls",
        "http.routers.grab",
        "http.routers.grab.rule",
        "http.routers.grab.priority",
        "http.services.grab.loadBalancer.servers.0.url",
      ]),
    );
  });
});
