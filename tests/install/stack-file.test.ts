/**
 * deploy/stack.yml against the Compose Specification's JSON Schema (the copy in
 * packages/compose-config, through its validator), after the variable substitution `docker stack deploy` makes with the
 * values deploy/install.sh exports: every variable the file uses must be one install.sh sets.
 * The Traefik static configuration install.sh writes, against Traefik v3's JSON Schema
 * (packages/traefik-config/schemas, SchemaStore's).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { validateComposeDocument } from "../../packages/compose-config/src/index.ts";
import { parseStaticConfig } from "../../packages/traefik-config/src/index.ts";

const deploy = path.resolve(import.meta.dirname, "../../deploy");
const stackFile = readFileSync(path.join(deploy, "stack.yml"), "utf8");
const installScript = readFileSync(path.join(deploy, "install.sh"), "utf8");

/** The names of the variables install.sh exports before `docker stack deploy`. */
function exportedVariables(): string[] {
  const exported = /^export ((?:\\\n|[^\n])*)/m.exec(installScript)?.[1] ?? "";
  return [...exported.matchAll(/(PLATFORM_[A-Z_]+)=/g)].map((match) => match[1]!);
}

/** A value of the kind install.sh gives each variable. */
function exampleValue(name: string): string {
  if (/_PORT$/.test(name)) return "8080";
  if (name === "PLATFORM_MAIN_DIRECTORY") return "/etc/platform";
  if (name === "PLATFORM_URL") return "http://203.0.113.10:3000";
  if (name === "PLATFORM_NATS_AGENT_URL") return "nats://203.0.113.10:4222";
  if (/IMAGE$/.test(name)) return "example/image:1";
  return "platform";
}

function substituted(values: Record<string, string>): string {
  return stackFile.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`stack.yml uses \${${name}}, which install.sh does not set`);
    return values[name]!;
  });
}

describe("deploy/stack.yml", () => {
  const variables = exportedVariables();
  const values = Object.fromEntries(variables.map((name) => [name, exampleValue(name)]));

  it("uses only variables install.sh exports", () => {
    expect(variables).toContain("PLATFORM_IMAGE");
    const used = [...stackFile.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1]);
    expect(used.filter((name) => !variables.includes(name!))).toEqual([]);
  });

  it("validates against the Compose Specification once substituted", () => {
    expect(validateComposeDocument(parse(substituted(values)))).toEqual([]);
  });

  it("the schema check is real: a misspelt key or a secret list given as a string is refused", () => {
    const misspelt = parse(substituted(values));
    misspelt.services.postgres.enviroment = misspelt.services.postgres.environment;
    expect(validateComposeDocument(misspelt)).toEqual([
      { path: "services.postgres.enviroment", message: "is not a Compose key here" },
    ]);
    const secretAsString = parse(substituted(values));
    secretAsString.services["control-plane"].secrets = "database-url";
    expect(validateComposeDocument(secretAsString).map((issue) => issue.path)).toEqual([
      "services.control-plane.secrets",
    ]);
  });

  it("publishes every port in host mode and gives every service dnsrr (no IPVS needed)", () => {
    const stack = parse(substituted(values));
    for (const [name, service] of Object.entries<any>(stack.services)) {
      expect(service.deploy?.endpoint_mode, name).toBe("dnsrr");
      for (const port of service.ports ?? []) expect(port.mode, name).toBe("host");
    }
  });
});

describe("the traefik.yml install.sh writes", () => {
  const written = /<<'TRAEFIK'\n([\s\S]*?)\nTRAEFIK\n/.exec(installScript)?.[1] ?? "";

  it("is a valid Traefik v3 static configuration whose JSON access log keeps the User-Agent", () => {
    const parsed = parseStaticConfig(written);
    expect(parsed).toMatchObject({
      ok: true,
      config: {
        providers: { file: { directory: "/etc/traefik/dynamic" } },
        accessLog: {
          filePath: "/etc/traefik/access.log",
          format: "json",
          fields: { headers: { names: { "User-Agent": "keep" } } },
        },
      },
    });
  });

  it("the schema check is real: a misspelt access log key is refused", () => {
    const misspelt = parse(written);
    misspelt.accessLog.fields.header = misspelt.accessLog.fields.headers;
    delete misspelt.accessLog.fields.headers;
    expect(parseStaticConfig(stringify(misspelt))).toMatchObject({
      ok: false,
      errors: [{ path: "accessLog.fields.header", message: "unknown key" }],
    });
  });
});
