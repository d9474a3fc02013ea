/**
 * The projection of a (converted) Compose document onto the version 3.8 file format, the one
 * Docker 20.10's `docker stack deploy` reads: it refuses any key its v3 schema does not list.
 * Per key: kept; converted to its v3 form (long `depends_on` to the list, `scale` and `mem_limit`
 * / `cpus` / `mem_reservation` to `deploy`, `restart` to `deploy.restart_policy`, numeric strings to
 * numbers); dropped when it only advises a tool Swarm does not use (`container_name`, `pull_policy`,
 * `develop`, `platform`...); or refused when dropping it would change what runs (`build`,
 * `profiles`, `volumes_from`, a port's `host_ip`...). docs/decisions.md lists the choices.
 */
import type { IssueList } from "./errors.ts";
import { parsePort } from "./mounts.ts";
import { asRecord } from "./objects.ts";

const V3_SERVICE_KEYS = new Set([
  "deploy",
  "cap_add",
  "cap_drop",
  "cgroup_parent",
  "command",
  "configs",
  "credential_spec",
  "depends_on",
  "devices",
  "dns",
  "dns_search",
  "domainname",
  "entrypoint",
  "env_file",
  "environment",
  "expose",
  "external_links",
  "extra_hosts",
  "healthcheck",
  "hostname",
  "image",
  "init",
  "ipc",
  "isolation",
  "labels",
  "links",
  "logging",
  "mac_address",
  "network_mode",
  "networks",
  "pid",
  "ports",
  "privileged",
  "read_only",
  "security_opt",
  "shm_size",
  "secrets",
  "sysctls",
  "stdin_open",
  "stop_grace_period",
  "stop_signal",
  "tmpfs",
  "tty",
  "ulimits",
  "user",
  "userns_mode",
  "volumes",
  "working_dir",
]);
/** Advice for tools Swarm does not use: left out of the stack file. */
const DROPPED_SERVICE_KEYS = new Set([
  "container_name",
  "develop",
  "pull_policy",
  "pull_refresh_after",
  "attach",
  "platform",
  "annotations",
]);
const REFUSAL_REASONS: Record<string, string> = {
  build:
    "docker stack deploy does not build images: build the image first and name it in image (or use the docker-compose type)",
  profiles: "docker stack deploy has no profiles: every service of the file would run",
  extends: "docker stack deploy does not resolve extends: write the service out in full",
};
const HEALTHCHECK_KEYS = new Set(["disable", "interval", "retries", "test", "timeout", "start_period"]);
const DEPLOY_KEYS = new Set([
  "mode",
  "endpoint_mode",
  "replicas",
  "labels",
  "rollback_config",
  "update_config",
  "resources",
  "restart_policy",
  "placement",
]);
const SERVICE_NETWORK_KEYS = new Set(["aliases", "ipv4_address", "ipv6_address"]);
const TOP_KEYS: Record<string, Set<string>> = {
  networks: new Set([
    "name",
    "driver",
    "driver_opts",
    "ipam",
    "external",
    "internal",
    "attachable",
    "labels",
  ]),
  volumes: new Set(["name", "driver", "driver_opts", "external", "labels"]),
  secrets: new Set(["name", "file", "external", "labels", "driver", "driver_opts", "template_driver"]),
  configs: new Set(["name", "file", "external", "labels", "template_driver"]),
};

const isExtension = (key: string) => key.startsWith("x-");

function toInteger(value: unknown): unknown {
  return typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
}

/** Rewrites `document` in place to the v3.8 format; what cannot be expressed is added to `issues`. */
export function toStackFormat(document: Record<string, unknown>, issues: IssueList): Record<string, unknown> {
  const out: Record<string, unknown> = { version: "3.8" };
  for (const [key, value] of Object.entries(document)) {
    if (key === "version" || key === "name") continue;
    if (key === "include" || key === "models") {
      issues.add([key], `${key} is not part of the v3 file format that docker stack deploy reads`);
      continue;
    }
    out[key] = value;
  }
  const services = asRecord(out.services) ?? {};
  for (const [name, raw] of Object.entries(services)) {
    services[name] = stackService(name, asRecord(raw) ?? {}, issues);
  }
  for (const [section, keys] of Object.entries(TOP_KEYS)) {
    for (const [name, raw] of Object.entries(asRecord(out[section]) ?? {})) {
      const entry = asRecord(raw);
      if (!entry) continue;
      for (const key of Object.keys(entry)) {
        if (keys.has(key) || (section === "networks" && isExtension(key))) continue;
        if (
          (section === "secrets" || section === "configs") &&
          (key === "content" || key === "environment")
        ) {
          issues.add([section, name, key], `${section}.${key} is not part of the v3 file format: use file`);
        }
        delete entry[key];
      }
      const ipam = asRecord(entry.ipam);
      if (ipam) {
        for (const key of Object.keys(ipam)) if (key !== "driver" && key !== "config") delete ipam[key];
        if (Array.isArray(ipam.config)) {
          ipam.config = ipam.config.map((item) => {
            const subnet = asRecord(item)?.subnet;
            return subnet === undefined ? {} : { subnet };
          });
        }
      }
    }
  }
  return out;
}

function stackService(
  name: string,
  service: Record<string, unknown>,
  issues: IssueList,
): Record<string, unknown> {
  const at = (...rest: (string | number)[]) => ["services", name, ...rest];
  const out: Record<string, unknown> = {};
  const deploy: Record<string, unknown> = { ...(asRecord(service.deploy) ?? {}) };
  const resources = () => {
    deploy.resources = { ...(asRecord(deploy.resources) ?? {}) };
    return deploy.resources as Record<string, Record<string, unknown>>;
  };
  const setResource = (kind: "limits" | "reservations", key: string, value: unknown) => {
    const all = resources();
    all[kind] = { ...(all[kind] ?? {}) };
    if (all[kind][key] === undefined) all[kind][key] = String(value);
  };
  for (const [key, value] of Object.entries(service)) {
    if (V3_SERVICE_KEYS.has(key) || isExtension(key)) {
      out[key] = value;
    } else if (key === "scale") {
      if (deploy.replicas === undefined) deploy.replicas = toInteger(value);
    } else if (key === "mem_limit") {
      setResource("limits", "memory", value);
    } else if (key === "cpus") {
      setResource("limits", "cpus", value);
    } else if (key === "mem_reservation") {
      setResource("reservations", "memory", value);
    } else if (key === "restart") {
      const policy = restartPolicy(String(value));
      if (policy && deploy.restart_policy === undefined) deploy.restart_policy = policy;
    } else if (DROPPED_SERVICE_KEYS.has(key)) {
      // Advice for Compose only; Swarm names and schedules tasks itself.
    } else {
      issues.add(
        at(key),
        REFUSAL_REASONS[key] ?? `${key} is not part of the v3 file format that docker stack deploy reads`,
      );
    }
  }
  if (asRecord(service.depends_on)) out.depends_on = Object.keys(asRecord(service.depends_on)!);
  const healthcheck = asRecord(out.healthcheck);
  if (healthcheck) {
    out.healthcheck = Object.fromEntries(
      Object.entries(healthcheck)
        .filter(([key]) => HEALTHCHECK_KEYS.has(key))
        .map(([key, value]) => [key, key === "retries" ? toInteger(value) : value]),
    );
  }
  if (Object.keys(deploy).length > 0 || service.deploy !== undefined)
    out.deploy = stackDeploy(deploy, name, issues);
  if (Array.isArray(out.ports))
    out.ports = out.ports.map((port, index) => stackPort(port, at("ports", index), issues));
  if (Array.isArray(out.volumes))
    out.volumes = out.volumes.map((volume, index) => stackVolume(volume, at("volumes", index), issues));
  const networks = asRecord(out.networks);
  if (networks) {
    out.networks = Object.fromEntries(
      Object.entries(networks).map(([key, value]) => {
        const entry = asRecord(value);
        if (!entry) return [key, value ?? null];
        return [
          key,
          Object.fromEntries(Object.entries(entry).filter(([field]) => SERVICE_NETWORK_KEYS.has(field))),
        ];
      }),
    );
  }
  // v3's mappings of strings take strings, numbers and null, not booleans (`DEBUG: true`).
  for (const key of ["environment", "labels", "extra_hosts", "sysctls"]) {
    if (out[key] !== undefined) out[key] = stringMapping(out[key]);
  }
  if (asRecord(out.deploy)?.labels !== undefined) {
    out.deploy = { ...asRecord(out.deploy), labels: stringMapping(asRecord(out.deploy)!.labels) };
  }
  for (const key of ["secrets", "configs"]) {
    if (Array.isArray(out[key])) {
      out[key] = (out[key] as unknown[]).map((item) => {
        const entry = asRecord(item);
        if (!entry) return item;
        return { ...entry, ...(entry.mode !== undefined ? { mode: modeNumber(entry.mode) } : {}) };
      });
    }
  }
  return out;
}

function stringMapping(value: unknown): unknown {
  const record = asRecord(value);
  if (!record) return value;
  return Object.fromEntries(
    Object.entries(record).map(([key, item]) => [key, typeof item === "boolean" ? String(item) : item]),
  );
}

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** `64m`, `1g`, `512k`, `100` as bytes (what v3's integer tmpfs size takes); other values unchanged. */
export function bytesOf(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const match = /^(\d+)\s*([bkmg]?)b?$/i.exec(value.trim());
  return match ? Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]! : value;
}

function modeNumber(value: unknown): unknown {
  if (typeof value !== "string") return value;
  return /^0[0-7]+$/.test(value) ? Number.parseInt(value, 8) : toInteger(value);
}

function restartPolicy(restart: string): Record<string, unknown> | undefined {
  if (restart === "no") return { condition: "none" };
  if (restart === "always" || restart === "unless-stopped") return { condition: "any" };
  const onFailure = /^on-failure(?::(\d+))?$/.exec(restart);
  if (onFailure)
    return { condition: "on-failure", ...(onFailure[1] ? { max_attempts: Number(onFailure[1]) } : {}) };
  return undefined;
}

function stackDeploy(
  deploy: Record<string, unknown>,
  service: string,
  issues: IssueList,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(deploy)) {
    if (!DEPLOY_KEYS.has(key)) {
      issues.add(
        ["services", service, "deploy", key],
        `deploy.${key} is not part of the v3 file format that docker stack deploy reads`,
      );
      continue;
    }
    out[key] = key === "replicas" ? toInteger(value) : value;
  }
  const resources = asRecord(out.resources);
  if (resources) {
    const fixed: Record<string, unknown> = {};
    for (const [kind, raw] of Object.entries(resources)) {
      const entry = asRecord(raw) ?? {};
      const allowed = kind === "limits" ? ["cpus", "memory"] : ["cpus", "memory", "generic_resources"];
      const kept: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(entry)) {
        if (!allowed.includes(key)) {
          issues.add(
            ["services", service, "deploy", "resources", kind, key],
            `deploy.resources.${kind}.${key} is not part of the v3 file format that docker stack deploy reads`,
          );
          continue;
        }
        kept[key] = key === "generic_resources" ? value : String(value);
      }
      fixed[kind] = kept;
    }
    out.resources = fixed;
  }
  return out;
}

function stackPort(port: unknown, path: (string | number)[], issues: IssueList): unknown {
  const entry = asRecord(port);
  if (!entry) {
    // The Docker CLI ignores a short-syntax host address and listens on every address.
    if (parsePort(port)?.hostIp !== undefined) {
      issues.add(path, "docker stack deploy cannot bind a port to one host address");
    }
    return port;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === "target") out.target = toInteger(value);
    else if (key === "published") {
      const published = toInteger(value);
      if (typeof published !== "number")
        issues.add(
          [...path, key],
          `a published range in the long syntax is not part of the v3 file format: write one entry per port or the short syntax`,
        );
      out.published = published;
    } else if (key === "mode" || key === "protocol") out[key] = value;
    else if (key === "host_ip")
      issues.add([...path, key], "docker stack deploy cannot bind a port to one host address");
    // name and app_protocol are descriptions only.
  }
  return out;
}

function stackVolume(volume: unknown, path: (string | number)[], issues: IssueList): unknown {
  const entry = asRecord(volume);
  if (!entry) return volume;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === "type") {
      if (!["volume", "bind", "tmpfs"].includes(String(value))) {
        issues.add(
          [...path, key],
          `a ${String(value)} mount is not part of the v3 file format that docker stack deploy reads`,
        );
      }
      out.type = value;
    } else if (key === "source" || key === "target" || key === "read_only" || key === "consistency") {
      out[key] = value;
    } else if (key === "bind") {
      const propagation = asRecord(value)?.propagation;
      if (propagation !== undefined) out.bind = { propagation };
    } else if (key === "volume") {
      const options = asRecord(value) ?? {};
      if (options.subpath !== undefined)
        issues.add(
          [...path, "volume", "subpath"],
          "volume.subpath is not part of the v3 file format that docker stack deploy reads",
        );
      if (options.nocopy !== undefined) out.volume = { nocopy: options.nocopy };
    } else if (key === "tmpfs") {
      const size = asRecord(value)?.size;
      if (size !== undefined) out.tmpfs = { size: bytesOf(size) };
    }
  }
  return out;
}
