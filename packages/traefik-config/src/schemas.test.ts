import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parseDynamicConfig, parseStaticConfig } from "./index.ts";

const validDynamic = `
http:
  routers:
    my-router:
      entryPoints: [websecure]
      rule: Host(\`a.example.com\`)
      service: my-service
      middlewares: [my-auth]
      tls:
        certResolver: letsencrypt
  services:
    my-service:
      loadBalancer:
        servers:
          - url: http://my-app:3000
  middlewares:
    my-auth:
      basicAuth:
        users: ["alice:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/"]
`;

const validStatic = `
entryPoints:
  web:
    address: ":80"
providers:
  file:
    directory: /etc/traefik/dynamic
    watch: true
api:
  dashboard: true
`;

describe("parseDynamicConfig", () => {
  it("accepts a valid configuration", () => {
    const result = parseDynamicConfig(validDynamic);
    expect(result.ok).toBe(true);
    if (result.ok) expect(Object.keys(result.config)).toEqual(["http"]);
  });

  it.each([
    ["unclosed flow sequence", "http: [1\n"],
    ["duplicate keys", "http: {}\nhttp: {}\n"],
    ["two documents", "http: {}\n---\ntcp: {}\n"],
    ["bad indentation", "http:\n  routers:\n   a: 1\n  b\n"],
  ])("refuses invalid YAML (%s)", (_case, text) => {
    const result = parseDynamicConfig(text);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors.length).toBeGreaterThan(0);
      for (const error of result.errors) {
        expect(error.path).toBe("");
        expect(error.message).toMatch(/^invalid YAML: .*line \d+, column \d+$/);
      }
    }
  });

  it("refuses an empty document", () => {
    expect(parseDynamicConfig("")).toEqual({
      ok: false,
      errors: [{ path: "", message: "the configuration is empty" }],
    });
    expect(parseDynamicConfig("# only a comment\n")).toEqual({
      ok: false,
      errors: [{ path: "", message: "the configuration is empty" }],
    });
  });

  it("refuses a document that is not a mapping", () => {
    expect(parseDynamicConfig("- a\n- b\n")).toEqual({
      ok: false,
      errors: [{ path: "", message: "must be object" }],
    });
  });

  it.each([
    ["at the root", "htpp: {}\n", "htpp"],
    ["in http", "http:\n  rotuers: {}\n", "http.rotuers"],
    [
      "in a router",
      "http:\n  routers:\n    r:\n      rule: x\n      service: s\n      priorty: 1\n",
      "http.routers.r.priorty",
    ],
    // The official schema leaves router tls, servers and basicAuth open; they are closed here.
    [
      "in a router's tls",
      "http:\n  routers:\n    r:\n      rule: x\n      service: s\n      tls:\n        certresolver: le\n",
      "http.routers.r.tls.certresolver",
    ],
    [
      "in a load-balancer server",
      "http:\n  services:\n    s:\n      loadBalancer:\n        servers:\n          - url: http://a\n            adress: b\n",
      "http.services.s.loadBalancer.servers.0.adress",
    ],
    [
      "in basicAuth",
      "http:\n  middlewares:\n    m:\n      basicAuth:\n        user: [a]\n",
      "http.middlewares.m.basicAuth.user",
    ],
    [
      "as a middleware kind",
      "http:\n  middlewares:\n    m:\n      basicAuht:\n        users: [a]\n",
      "http.middlewares.m.basicAuht",
    ],
    [
      "as a service kind",
      "http:\n  services:\n    s:\n      loadbalancer: {}\n",
      "http.services.s.loadbalancer",
    ],
    [
      "in tls certificates",
      "tls:\n  certificates:\n    - certFile: /a\n      keyfile: /b\n",
      "tls.certificates.0.keyfile",
    ],
  ])("refuses an unknown key %s, naming it", (_case, text, path) => {
    expect(parseDynamicConfig(text)).toEqual({ ok: false, errors: [{ path, message: "unknown key" }] });
  });

  it("reports wrong types and several problems at once", () => {
    const result = parseDynamicConfig(
      "http:\n  routers:\n    r:\n      rule: 5\n      service: s\n      entryPoints: web\n  middlewares:\n    m:\n      stripPrefix:\n        prefixes: /a\n    n: {}\n",
    );
    expect(result).toEqual({
      ok: false,
      errors: [
        { path: "http.routers.r.entryPoints", message: "must be array" },
        { path: "http.routers.r.rule", message: "must be string" },
        { path: "http.middlewares.m.stripPrefix.prefixes", message: "must be array" },
        {
          path: "http.middlewares.n",
          message: "must hold exactly one known kind (it holds none or several)",
        },
      ],
    });
  });

  it("keeps YAML data as data: no custom tags run, aliases are bounded", () => {
    for (const tagged of [
      "http: !!js/function 'function(){}'\n",
      "http: !!binary aGVsbG8=\n",
      "http: !!set {a}\n",
    ]) {
      const result = parseDynamicConfig(tagged);
      expect(result.ok).toBe(false);
      if (!result.ok)
        expect(result.errors).toEqual([{ path: "", message: expect.stringMatching(/^invalid YAML: /) }]);
    }
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let level = 1; level < 8; level++) {
      const previous = String.fromCharCode(96 + level);
      const next = String.fromCharCode(97 + level);
      bomb.push(`${next}: &${next} [${Array(10).fill(`*${previous}`).join(", ")}]`);
    }
    const result = parseDynamicConfig(`${bomb.join("\n")}\n`);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]?.message).toMatch(/^invalid YAML/);
  });
});

describe("parseStaticConfig", () => {
  it("accepts a valid traefik.yml", () => {
    expect(parseStaticConfig(validStatic).ok).toBe(true);
  });

  it("refuses an unknown top-level key that the official schema would let through", () => {
    const text = `${validStatic}entrypoints:\n  web:\n    address: ":81"\n`;
    // The schema as published leaves its root open...
    const raw = JSON.parse(readFileSync(new URL("../schemas/traefik-v3.json", import.meta.url), "utf8"));
    const published = new Ajv({ strict: false }).compile(raw);
    expect(published({ entrypoints: {} })).toBe(true);
    // ...the package closes it.
    expect(parseStaticConfig(text)).toEqual({
      ok: false,
      errors: [{ path: "entrypoints", message: "unknown key" }],
    });
  });

  it("refuses unknown keys and wrong types inside", () => {
    expect(parseStaticConfig("entryPoints:\n  web:\n    adress: ':80'\napi:\n  dashboard: 'yes'\n")).toEqual({
      ok: false,
      errors: [
        { path: "api.dashboard", message: "must be boolean" },
        { path: "entryPoints.web.adress", message: "unknown key" },
      ],
    });
  });

  it("refuses invalid YAML", () => {
    const result = parseStaticConfig("entryPoints:\n  web: {address: ':80'\n");
    expect(result.ok).toBe(false);
  });
});
