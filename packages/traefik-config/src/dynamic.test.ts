import { describe, expect, it } from "vitest";
import {
  type DomainRoute,
  type DynamicConfig,
  dynamicConfigFor,
  forwardAuthDomainConfig,
  parseDynamicConfig,
  type ServiceRouting,
  TraefikConfigError,
  toYaml,
  validateDynamicConfig,
} from "./index.ts";

const options = { certificatesDirectory: "/etc/platform/traefik/certificates" };

// APR1 hashes made independently with `openssl passwd -apr1 -salt <salt> <password>`.
const alice = { username: "alice", passwordHash: "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/" }; // secret
const bob = { username: "bob", passwordHash: "$apr1$12345678$ApCyjtP5JQ2bLrFvz4KLd0" }; // pä ss:word
const carol = { username: "carol", passwordHash: "$apr1$./xyzXY$/4zCr8GHyrwUAHcVTXMZE/" }; // x

const domain = (overrides: Partial<DomainRoute> = {}): DomainRoute => ({
  uniqueConfigKey: 1,
  host: "app.example.com",
  port: 3000,
  https: true,
  certificateType: "letsencrypt",
  ...overrides,
});

const service = (overrides: Partial<ServiceRouting> = {}): ServiceRouting => ({
  appName: "shop-web",
  domains: [domain()],
  credentials: [],
  ...overrides,
});

const loadBalancer = (url: string) => ({ loadBalancer: { servers: [{ url }], passHostHeader: true } });
const redirect = { redirectScheme: { scheme: "https" as const, permanent: true } };

interface GoldenCase {
  name: string;
  input: ServiceRouting;
  expected: DynamicConfig;
}

const goldenCases: GoldenCase[] = [
  {
    name: "HTTP only (https off)",
    input: service({ domains: [domain({ https: false })] }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            priority: 1_000_023,
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
      },
    },
  },
  {
    name: "HTTPS with Let's Encrypt",
    input: service(),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            priority: 1_000_023,
            middlewares: ["redirect-to-https-shop-web"],
          },
          "shop-web-router-websecure-1": {
            entryPoints: ["websecure"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            priority: 1_000_023,
            tls: { certResolver: "letsencrypt" },
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
        middlewares: { "redirect-to-https-shop-web": redirect },
      },
    },
  },
  {
    name: "custom certificate from PEM files",
    input: service({ domains: [domain({ uniqueConfigKey: 7, certificateType: "custom", port: 8080 })] }),
    expected: {
      http: {
        routers: {
          "shop-web-router-7": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-7",
            priority: 1_000_023,
            middlewares: ["redirect-to-https-shop-web"],
          },
          "shop-web-router-websecure-7": {
            entryPoints: ["websecure"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-7",
            priority: 1_000_023,
            tls: {},
          },
        },
        services: { "shop-web-service-7": loadBalancer("http://shop-web:8080") },
        middlewares: { "redirect-to-https-shop-web": redirect },
      },
      tls: {
        certificates: [
          {
            certFile: "/etc/platform/traefik/certificates/shop-web-7.crt",
            keyFile: "/etc/platform/traefik/certificates/shop-web-7.key",
          },
        ],
      },
    },
  },
  {
    name: "custom certificate from a named resolver",
    input: service({ domains: [domain({ certificateType: "custom", customCertResolver: "corp-ca" })] }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            priority: 1_000_023,
            middlewares: ["redirect-to-https-shop-web"],
          },
          "shop-web-router-websecure-1": {
            entryPoints: ["websecure"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            priority: 1_000_023,
            tls: { certResolver: "corp-ca" },
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
        middlewares: { "redirect-to-https-shop-web": redirect },
      },
    },
  },
  {
    name: "certificate type none: HTTP only even with https on",
    input: service({ domains: [domain({ certificateType: "none", https: true })] }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            priority: 1_000_023,
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
      },
    },
  },
  {
    name: "path routing with prefix stripping and an internal path",
    input: service({
      domains: [
        domain({ path: "/api", internalPath: "/v1" }),
        domain({ uniqueConfigKey: 2, path: "/docs", stripPath: false, https: false }),
        domain({ uniqueConfigKey: 3, path: "/", https: false }),
      ],
    }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`) && PathPrefix(`/api`)",
            service: "shop-web-service-1",
            priority: 1_000_045,
            middlewares: ["redirect-to-https-shop-web"],
          },
          "shop-web-router-websecure-1": {
            entryPoints: ["websecure"],
            rule: "Host(`app.example.com`) && PathPrefix(`/api`)",
            service: "shop-web-service-1",
            priority: 1_000_045,
            middlewares: ["stripprefix-shop-web-1", "addprefix-shop-web-1"],
            tls: { certResolver: "letsencrypt" },
          },
          "shop-web-router-2": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`) && PathPrefix(`/docs`)",
            service: "shop-web-service-2",
            priority: 1_000_046,
          },
          "shop-web-router-3": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-3",
            priority: 1_000_023,
          },
        },
        services: {
          "shop-web-service-1": loadBalancer("http://shop-web:3000"),
          "shop-web-service-2": loadBalancer("http://shop-web:3000"),
          "shop-web-service-3": loadBalancer("http://shop-web:3000"),
        },
        middlewares: {
          "stripprefix-shop-web-1": { stripPrefix: { prefixes: ["/api"] } },
          "addprefix-shop-web-1": { addPrefix: { prefix: "/v1" } },
          "redirect-to-https-shop-web": redirect,
        },
      },
    },
  },
  {
    name: "wildcard host with a custom certificate",
    input: service({ domains: [domain({ host: "*.Example.com", certificateType: "custom" })] }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "HostRegexp(`^[a-z0-9-]+\\.example\\.com$`)",
            service: "shop-web-service-1",
            priority: 1_000_040,
            middlewares: ["redirect-to-https-shop-web"],
          },
          "shop-web-router-websecure-1": {
            entryPoints: ["websecure"],
            rule: "HostRegexp(`^[a-z0-9-]+\\.example\\.com$`)",
            service: "shop-web-service-1",
            priority: 1_000_040,
            tls: {},
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
        middlewares: { "redirect-to-https-shop-web": redirect },
      },
      tls: {
        certificates: [
          {
            certFile: "/etc/platform/traefik/certificates/shop-web-1.crt",
            keyFile: "/etc/platform/traefik/certificates/shop-web-1.key",
          },
        ],
      },
    },
  },
  {
    name: "wildcard host with a custom resolver names the wildcard domain",
    input: service({
      domains: [domain({ host: "*.bücher.example", certificateType: "custom", customCertResolver: "dns" })],
    }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "HostRegexp(`^[a-z0-9-]+\\.xn--bcher-kva\\.example$`)",
            service: "shop-web-service-1",
            priority: 1_000_050,
            middlewares: ["redirect-to-https-shop-web"],
          },
          "shop-web-router-websecure-1": {
            entryPoints: ["websecure"],
            rule: "HostRegexp(`^[a-z0-9-]+\\.xn--bcher-kva\\.example$`)",
            service: "shop-web-service-1",
            priority: 1_000_050,
            tls: { certResolver: "dns", domains: [{ main: "*.xn--bcher-kva.example" }] },
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
        middlewares: { "redirect-to-https-shop-web": redirect },
      },
    },
  },
  {
    name: "internationalized host routed by its punycode form",
    input: service({ domains: [domain({ host: "Bücher.例え.jp", https: false })] }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`xn--bcher-kva.xn--r8jz45g.jp`)",
            service: "shop-web-service-1",
            priority: 1_000_036,
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
      },
    },
  },
  {
    name: "several credentials in one basicAuth middleware on every serving router",
    input: service({
      credentials: [alice, bob, carol],
      domains: [domain(), domain({ uniqueConfigKey: 2, host: "plain.example.com", https: false })],
    }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            priority: 1_000_023,
            middlewares: ["redirect-to-https-shop-web"],
          },
          "shop-web-router-websecure-1": {
            entryPoints: ["websecure"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            priority: 1_000_023,
            middlewares: ["auth-shop-web"],
            tls: { certResolver: "letsencrypt" },
          },
          "shop-web-router-2": {
            entryPoints: ["web"],
            rule: "Host(`plain.example.com`)",
            service: "shop-web-service-2",
            priority: 1_000_025,
            middlewares: ["auth-shop-web"],
          },
        },
        services: {
          "shop-web-service-1": loadBalancer("http://shop-web:3000"),
          "shop-web-service-2": loadBalancer("http://shop-web:3000"),
        },
        middlewares: {
          "auth-shop-web": {
            basicAuth: {
              users: [
                "alice:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/",
                "bob:$apr1$12345678$ApCyjtP5JQ2bLrFvz4KLd0",
                "carol:$apr1$./xyzXY$/4zCr8GHyrwUAHcVTXMZE/",
              ],
              removeHeader: true,
            },
          },
          "redirect-to-https-shop-web": redirect,
        },
      },
    },
  },
  {
    name: "compose domains sent to their own Swarm services",
    input: service({
      appName: "blog",
      swarmServiceName: "blog_wordpress",
      domains: [
        domain({ host: "blog.example.com", port: 80, https: false }),
        domain({
          uniqueConfigKey: 2,
          host: "db.example.com",
          port: 8081,
          https: false,
          swarmServiceName: "blog_adminer",
        }),
      ],
    }),
    expected: {
      http: {
        routers: {
          "blog-router-1": {
            entryPoints: ["web"],
            rule: "Host(`blog.example.com`)",
            service: "blog-service-1",
            priority: 1_000_024,
          },
          "blog-router-2": {
            entryPoints: ["web"],
            rule: "Host(`db.example.com`)",
            service: "blog-service-2",
            priority: 1_000_022,
          },
        },
        services: {
          "blog-service-1": loadBalancer("http://blog_wordpress:80"),
          "blog-service-2": loadBalancer("http://blog_adminer:8081"),
        },
      },
    },
  },
  {
    name: "redirects (redirectRegex) before the HTTPS redirect and on the serving router",
    input: service({
      redirects: [
        {
          uniqueConfigKey: 7,
          regex: "^https?://www\\.example\\.com/(.*)",
          replacement: "https://example.com/$1",
          permanent: true,
        },
      ],
    }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            middlewares: ["redirect-shop-web-7", "redirect-to-https-shop-web"],
            priority: 1_000_023,
          },
          "shop-web-router-websecure-1": {
            entryPoints: ["websecure"],
            rule: "Host(`app.example.com`)",
            service: "shop-web-service-1",
            middlewares: ["redirect-shop-web-7"],
            priority: 1_000_023,
            tls: { certResolver: "letsencrypt" },
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
        middlewares: {
          "redirect-shop-web-7": {
            redirectRegex: {
              regex: "^https?://www\\.example\\.com/(.*)",
              replacement: "https://example.com/$1",
              permanent: true,
            },
          },
          "redirect-to-https-shop-web": redirect,
        },
      },
    },
  },
  {
    name: "forward auth first on the serving router (before stripprefix), not on the HTTPS redirect",
    input: service({
      domains: [domain({ path: "/shop", forwardAuth: { address: "http://forward-auth-abc:4180/" } })],
    }),
    expected: {
      http: {
        routers: {
          "shop-web-router-1": {
            entryPoints: ["web"],
            rule: "Host(`app.example.com`) && PathPrefix(`/shop`)",
            service: "shop-web-service-1",
            middlewares: ["redirect-to-https-shop-web"],
            priority: 1_000_046,
          },
          "shop-web-router-websecure-1": {
            entryPoints: ["websecure"],
            rule: "Host(`app.example.com`) && PathPrefix(`/shop`)",
            service: "shop-web-service-1",
            middlewares: ["forward-auth-shop-web-1", "stripprefix-shop-web-1"],
            priority: 1_000_046,
            tls: { certResolver: "letsencrypt" },
          },
        },
        services: { "shop-web-service-1": loadBalancer("http://shop-web:3000") },
        middlewares: {
          "forward-auth-shop-web-1": {
            forwardAuth: {
              address: "http://forward-auth-abc:4180/",
              trustForwardHeader: true,
              authResponseHeaders: [
                "X-Auth-Request-User",
                "X-Auth-Request-Email",
                "X-Auth-Request-Preferred-Username",
                "Authorization",
              ],
            },
          },
          "stripprefix-shop-web-1": { stripPrefix: { prefixes: ["/shop"] } },
          "redirect-to-https-shop-web": redirect,
        },
      },
    },
  },
];

describe("dynamicConfigFor golden table", () => {
  it.each(goldenCases)("$name", ({ input, expected }) => {
    const config = dynamicConfigFor(input, options);
    expect(config).toEqual(expected);
    expect(validateDynamicConfig(config)).toEqual([]);

    // The YAML the agent writes reads back as the same configuration and passes the schema.
    const yamlText = toYaml(config!);
    const parsed = parseDynamicConfig(yamlText);
    expect(parsed).toEqual({ ok: true, config: expected });
    // Regenerating from the same stored state gives the same bytes.
    expect(toYaml(dynamicConfigFor(input, options)!)).toBe(yamlText);
  });

  it("refuses a forward-auth address that is not an http service of the platform network", () => {
    for (const address of ["https://auth.example.com/", "http://10.0.0.1:80/x?y", "http://a b:1/"]) {
      try {
        dynamicConfigFor(service({ domains: [domain({ forwardAuth: { address } })] }), options);
        expect.unreachable(address);
      } catch (error) {
        expect((error as TraefikConfigError).issues.map((issue) => issue.path)).toEqual([
          "domains.0.forwardAuth.address",
        ]);
      }
    }
  });

  it("routes a forward-auth service's /oauth2/ paths of its auth domain, HTTPS or not", () => {
    for (const https of [true, false]) {
      const config = forwardAuthDomainConfig({
        name: "forward-auth-abc",
        host: "auth.example.com",
        https,
        certificateType: "letsencrypt",
        upstream: "http://forward-auth-abc:4180",
      });
      expect(validateDynamicConfig(config)).toEqual([]);
      const routers = Object.values(config.http.routers);
      expect(routers.map((router) => router.entryPoints[0])).toEqual(https ? ["web", "websecure"] : ["web"]);
      for (const router of routers) {
        expect(router.rule).toBe("Host(`auth.example.com`) && PathPrefix(`/oauth2/`)");
        expect(config.http.services[router.service]).toEqual(loadBalancer("http://forward-auth-abc:4180"));
      }
      expect(parseDynamicConfig(toYaml(config))).toEqual({ ok: true, config });
    }
  });

  it("is null without domains, credentials or not: the service's file should not exist", () => {
    expect(dynamicConfigFor(service({ domains: [] }), options)).toBeNull();
    expect(dynamicConfigFor(service({ domains: [], credentials: [alice] }), options)).toBeNull();
  });

  it("serializes rules without folding and keeps backslashes of HostRegexp", () => {
    const config = dynamicConfigFor(
      service({
        domains: [domain({ host: "*.a-very-long-subdomain-name.example.com", certificateType: "custom" })],
      }),
      options,
    );
    expect(toYaml(config!)).toContain(
      "rule: HostRegexp(`^[a-z0-9-]+\\.a-very-long-subdomain-name\\.example\\.com$`)\n",
    );
  });
});

/** The issues dynamicConfigFor refuses `input` with. */
function refusal(input: unknown, opts: unknown = options) {
  try {
    dynamicConfigFor(input as ServiceRouting, opts as typeof options);
  } catch (error) {
    expect(error).toBeInstanceOf(TraefikConfigError);
    return (error as TraefikConfigError).issues;
  }
  throw new Error("the input was accepted");
}

describe("dynamicConfigFor refuses", () => {
  it("a wildcard host with Let's Encrypt or no certificate", () => {
    for (const certificateType of ["letsencrypt", "none"] as const) {
      const issues = refusal(service({ domains: [domain({ host: "*.example.com", certificateType })] }));
      expect(issues).toEqual([
        {
          path: "domains.0.certificateType",
          message: "a wildcard host needs a custom certificate (certificateType `custom`)",
        },
      ]);
    }
  });

  it.each([
    ["backtick", "a.com`) || Host(`evil.com"],
    ["closing parenthesis", "a.com)"],
    ["opening parenthesis", "(a.com"],
    ["newline", "a.com\nevil.com"],
    ["YAML injection", "a.com\n  evil: x"],
    ["hash", "a.com#x"],
    ["space", "a .com"],
    ["comma", "a.com,b.com"],
    ["double quote", 'a.com"'],
    ["single quote", "a.com'"],
    ["port", "a.com:8080"],
    ["slash", "a.com/x"],
    ["wildcard inside", "a.*.com"],
    ["bare wildcard", "*"],
    ["underscore", "a_b.com"],
  ])("a host with a %s", (_case, host) => {
    const issues = refusal(service({ domains: [domain({ host, certificateType: "custom" })] }));
    expect(issues.map((issue) => issue.path)).toEqual(["domains.0.host"]);
  });

  it.each([
    ["backtick", "/a`) || Host(`evil.com"],
    ["YAML injection", "/a\n  evil: x"],
    ["parent segment", "/a/../b"],
    ["encoded parent segment", "/a/%2e%2E/b"],
    ["encoded newline", "/a%0a"],
    ["no leading slash", "api"],
    ["query", "/a?b=1"],
    ["fragment", "/a#b"],
    ["space", "/a b"],
  ])("a path with a %s", (_case, path) => {
    expect(refusal(service({ domains: [domain({ path })] })).map((issue) => issue.path)).toEqual([
      "domains.0.path",
    ]);
    expect(
      refusal(service({ domains: [domain({ internalPath: path })] })).map((issue) => issue.path),
    ).toEqual(["domains.0.internalPath"]);
  });

  it.each([0, 65536, 3.5, -1])("port %s", (port) => {
    expect(refusal(service({ domains: [domain({ port })] })).map((issue) => issue.path)).toEqual([
      "domains.0.port",
    ]);
  });

  it.each([
    ["colon", "al:ice"],
    ["newline", "alice\nmallory:$apr1$x$y"],
    ["carriage return", "alice\r"],
    ["NUL", "alice\u0000"],
    ["empty name", ""],
  ])("a username with a %s (htpasswd line injection)", (_case, username) => {
    const issues = refusal(service({ credentials: [{ ...alice, username }] }));
    expect(issues.map((issue) => issue.path)).toEqual(["credentials.0.username"]);
  });

  it("a password that is not an APR1 hash", () => {
    for (const passwordHash of ["secret", "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/\nmallory:x", "$2y$10$abc"]) {
      const issues = refusal(service({ credentials: [{ ...alice, passwordHash }] }));
      expect(issues.map((issue) => issue.path)).toEqual(["credentials.0.passwordHash"]);
    }
  });

  it("duplicate usernames and duplicate domain keys", () => {
    expect(refusal(service({ credentials: [alice, { ...bob, username: "alice" }] }))).toEqual([
      { path: "credentials.1.username", message: "duplicate username alice" },
    ]);
    expect(refusal(service({ domains: [domain(), domain({ host: "b.example.com" })] }))).toEqual([
      { path: "domains.1.uniqueConfigKey", message: "duplicate uniqueConfigKey 1" },
    ]);
  });

  it("names that would leave the dynamic directory or break a URL", () => {
    expect(refusal(service({ appName: "../etc" })).map((issue) => issue.path)).toEqual(["appName"]);
    expect(refusal(service({ appName: "a/b" })).map((issue) => issue.path)).toEqual(["appName"]);
    expect(refusal(service({ swarmServiceName: "evil.com:80@x" })).map((issue) => issue.path)).toEqual([
      "swarmServiceName",
    ]);
    expect(
      refusal(service({ domains: [domain({ swarmServiceName: "x/y" })] })).map((issue) => issue.path),
    ).toEqual(["domains.0.swarmServiceName"]);
    expect(refusal(service({ domains: [domain({ uniqueConfigKey: "1/../x" })] })).map((i) => i.path)).toEqual(
      ["domains.0.uniqueConfigKey"],
    );
    expect(
      refusal(service({ domains: [domain({ certificateType: "custom", customCertResolver: "a`b" })] })).map(
        (issue) => issue.path,
      ),
    ).toEqual(["domains.0.customCertResolver"]);
  });

  it("a certificates directory that is relative or climbs out", () => {
    for (const certificatesDirectory of ["certs", "/etc/../root", "/etc/certs\n"]) {
      expect(refusal(service(), { certificatesDirectory }).map((issue) => issue.path)).toEqual([
        "options.certificatesDirectory",
      ]);
    }
  });

  it("refuses a redirect regex Traefik (Go RE2) cannot read, naming it", () => {
    for (const regex of ["(unclosed", "^(?=x)", "(a)\\1", "a\nb"]) {
      const issues = refusal(
        service({ redirects: [{ uniqueConfigKey: 1, regex, replacement: "/x", permanent: false }] }),
      );
      expect(issues.map((issue) => issue.path)).toEqual(["redirects.0.regex"]);
    }
  });

  it("lists every problem at once", () => {
    const issues = refusal(
      service({
        appName: "a b",
        domains: [domain({ host: "a`b", port: 0 })],
        credentials: [{ ...alice, username: "x:y" }],
      }),
    );
    expect(issues.map((issue) => issue.path).sort()).toEqual([
      "appName",
      "credentials.0.username",
      "domains.0.host",
      "domains.0.port",
    ]);
  });
});

describe("toYaml", () => {
  it("keeps a value with a newline a single scalar (no YAML injection through serialization)", () => {
    const hostile = { http: { routers: { r: { rule: "a\n  evil: x\n#", service: "s" } } } };
    const yamlText = toYaml(hostile);
    expect(parseDynamicConfig(yamlText)).toEqual({ ok: true, config: hostile });
  });
});
