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
const natsClusterFile = readFileSync(path.join(deploy, "stack-nats-cluster.yml"), "utf8");
const installScript = readFileSync(path.join(deploy, "install.sh"), "utf8");

/** The names of the variables install.sh exports before `docker stack deploy`. */
function exportedVariables(): string[] {
  const exported = /^export ((?:\\\n|[^\n])*)/m.exec(installScript)?.[1] ?? "";
  return [...exported.matchAll(/(PLATFORM_[A-Z_]+)=/g)].map((match) => match[1]!);
}

/** A value of the kind install.sh gives each variable. */
function exampleValue(name: string): string {
  if (/_PORT$/.test(name)) return "8080";
  if (name === "PLATFORM_CONTROL_PLANE_REPLICAS") return "2";
  if (name === "PLATFORM_NODE_ID") return "n0de1d";
  if (name === "PLATFORM_MAIN_DIRECTORY") return "/etc/platform";
  if (name === "PLATFORM_URL") return "http://203.0.113.10:3000";
  if (name === "PLATFORM_NATS_AGENT_URL") return "nats://203.0.113.10:4222";
  if (/IMAGE$/.test(name)) return "example/image:1";
  return "platform";
}

function substituted(values: Record<string, string>, file = stackFile): string {
  return file.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`stack.yml uses \${${name}}, which install.sh does not set`);
    return values[name]!;
  });
}

describe("deploy/stack.yml", () => {
  const variables = exportedVariables();
  const values = Object.fromEntries(variables.map((name) => [name, exampleValue(name)]));

  it("uses only variables install.sh exports (and so does stack-nats-cluster.yml)", () => {
    expect(variables).toContain("PLATFORM_IMAGE");
    for (const file of [stackFile, natsClusterFile]) {
      const used = [...file.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1]);
      expect(used.filter((name) => !variables.includes(name!))).toEqual([]);
    }
  });

  it("runs the control plane as PLATFORM_CONTROL_PLANE_REPLICAS copies behind Traefik, updated one at a time, new one healthy first", () => {
    const stack = parse(substituted(values));
    const controlPlane = stack.services["control-plane"];
    expect(controlPlane.deploy).toMatchObject({
      replicas: 2,
      update_config: { parallelism: 1, order: "start-first" },
      rollback_config: { parallelism: 1, order: "start-first" },
    });
    // No published port (two copies on one node could not share it): Traefik publishes it.
    expect(controlPlane.ports).toBeUndefined();
    expect(stack.services.traefik.ports).toContainEqual({
      target: 3000,
      published: 8080,
      protocol: "tcp",
      mode: "host",
    });
    expect(controlPlane.healthcheck.test.join(" ")).toContain("http://127.0.0.1:3000/health/ready");
    expect(controlPlane.stop_grace_period).toBe("30s");
    // Copies differ in their instance id only (a Swarm template: the task's name).
    expect(controlPlane.environment.PLATFORM_INSTANCE_ID).toBe("{{.Task.Name}}");
    for (const name of ["postgres", "nats", "traefik", "control-plane"]) {
      expect(stack.services[name].deploy.placement.constraints, name).toEqual(["node.id == n0de1d"]);
    }
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

describe("deploy/stack-nats-cluster.yml (NATS as a JetStream cluster of three)", () => {
  const values = Object.fromEntries(exportedVariables().map((name) => [name, exampleValue(name)]));
  const cluster = parse(substituted(values, natsClusterFile));
  const servers = ["nats", "nats-2", "nats-3"];
  /** The value following `flag` in a command. */
  const option = (command: string[], flag: string) => command[command.indexOf(flag) + 1];

  it("is valid Compose, merged over stack.yml as docker stack deploy does", () => {
    expect(validateComposeDocument(cluster)).toEqual([]);
    const merged = parse(substituted(values));
    for (const [name, service] of Object.entries<any>(cluster.services)) {
      merged.services[name] = { ...merged.services[name], ...service };
    }
    merged.volumes = { ...merged.volumes, ...cluster.volumes };
    expect(validateComposeDocument(merged)).toEqual([]);
  });

  it("names three servers, each with its own name, node and volume, routed to all three", () => {
    expect(Object.keys(cluster.services)).toEqual(servers);
    const names = servers.map((name) => option(cluster.services[name].command, "--server_name"));
    expect(names).toEqual(["nats-1", "nats-2", "nats-3"]);
    for (const name of servers) {
      const command: string[] = cluster.services[name].command;
      expect(command.slice(0, 2)).toEqual(["--config", "/run/secrets/nats-conf"]);
      expect(option(command, "--cluster_name")).toBe("platform");
      expect(option(command, "--cluster")).toBe("nats://0.0.0.0:6222");
      expect(option(command, "--routes")?.split(",")).toEqual(
        servers.map((server) => `nats://${server}:6222`),
      );
    }
    const slots = servers.map((name) => cluster.services[name].deploy.placement.constraints);
    expect(slots).toEqual([1, 2, 3].map((slot) => [`node.labels.platform.nats.platform == ${slot}`]));
    expect(cluster.services["nats-2"].volumes).toEqual(["nats-2-data:/data"]);
    expect(cluster.services["nats-3"].volumes).toEqual(["nats-3-data:/data"]);
    for (const name of servers.slice(1)) {
      expect(cluster.services[name].deploy.endpoint_mode).toBe("dnsrr");
      for (const port of cluster.services[name].ports) expect(port.mode).toBe("host");
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
        entryPoints: { web: { address: ":80" }, "platform-api": { address: ":3000" } },
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
