/**
 * Names that keep two copies of one file apart (Dokploy's `randomize`, `isolatedDeployment`):
 *
 * - randomize: every service, volume, network, config and secret of the file is renamed
 *   `<name>-<suffix>`, and every reference to it follows (depends_on, links, extends,
 *   volumes_from, network_mode `service:`, a service's volumes, networks, configs and secrets).
 *   An external entry keeps pointing at the same Docker object (its `name` is set to the old key).
 * - isolated: the stack gets a network of its own, keyed `<suffix>` (the appName when no suffix),
 *   which every service joins; with `volumes`, the volumes are renamed `<name>-<suffix>` too.
 *
 * Both act on the parsed document, before the tenant's checks and the scoping of names.
 */
import { parseShortVolume } from "./mounts.ts";
import { asRecord } from "./objects.ts";
import { isExternal } from "./tenancy.ts";

/** A suffix: lowercase letters, digits, `-` and `_`, starting with a letter or digit (at most 32). */
export const COMPOSE_SUFFIX_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;

export type ComposeCollision =
  | { mode: "randomize"; suffix: string }
  | { mode: "isolated"; network: string; volumes: boolean };

const suffixed = (name: string, suffix: string) => `${name}-${suffix}`;

/** A top-level section with every key renamed; an external entry keeps its Docker name. */
function renameSection(document: Record<string, unknown>, section: string, rename: (key: string) => string) {
  const entries = asRecord(document[section]);
  if (!entries) return;
  const next: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(entries)) {
    if (section === "networks" && key === "default") {
      next[key] = raw;
      continue;
    }
    const entry = asRecord(raw);
    if (
      entry &&
      isExternal(entry) &&
      entry.name === undefined &&
      asRecord(entry.external)?.name === undefined
    ) {
      next[rename(key)] = { ...entry, name: key };
    } else {
      next[rename(key)] = raw;
    }
  }
  document[section] = next;
}

/** A service's named volumes renamed (short and long syntax); host paths and tmpfs left alone. */
function renameServiceVolumes(service: Record<string, unknown>, rename: (name: string) => string) {
  if (!Array.isArray(service.volumes)) return;
  service.volumes = service.volumes.map((volume) => {
    if (typeof volume === "string") {
      const parsed = parseShortVolume(volume);
      const source = parsed.source;
      if (source === undefined || source === "" || /^[./~$]/.test(source) || source.includes("/"))
        return volume;
      return [rename(source), ...volume.split(":").slice(1)].join(":");
    }
    const entry = asRecord(volume);
    if (entry && (entry.type ?? "volume") === "volume" && typeof entry.source === "string" && entry.source) {
      return { ...entry, source: rename(entry.source) };
    }
    return volume;
  });
}

/** A service's networks (list or mapping) with every name but `default` renamed. */
function renameServiceNetworks(service: Record<string, unknown>, rename: (name: string) => string) {
  const one = (name: string) => (name === "default" ? name : rename(name));
  if (Array.isArray(service.networks)) {
    service.networks = service.networks.map((name) => one(String(name)));
  } else {
    const networks = asRecord(service.networks);
    if (networks) {
      service.networks = Object.fromEntries(
        Object.entries(networks).map(([name, value]) => [one(name), value]),
      );
    }
  }
}

/** A service's configs or secrets (short names or `{source}`) renamed. */
function renameServiceReferences(
  service: Record<string, unknown>,
  key: string,
  rename: (name: string) => string,
) {
  if (!Array.isArray(service[key])) return;
  service[key] = (service[key] as unknown[]).map((item) => {
    if (typeof item === "string") return rename(item);
    const entry = asRecord(item);
    return entry && typeof entry.source === "string" ? { ...entry, source: rename(entry.source) } : item;
  });
}

/** A `name[:rest]` reference (links, volumes_from) with its service part renamed. */
function renameHead(reference: string, rename: (name: string) => string): string {
  const [head, ...rest] = reference.split(":");
  return [rename(head ?? ""), ...rest].join(":");
}

function randomize(document: Record<string, unknown>, suffix: string): void {
  const rename = (name: string) => suffixed(name, suffix);
  const services = asRecord(document.services) ?? {};
  const renamed: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(services)) {
    const service = { ...(asRecord(raw) ?? {}) };
    if (Array.isArray(service.depends_on)) {
      service.depends_on = service.depends_on.map((dependency) => rename(String(dependency)));
    } else if (asRecord(service.depends_on)) {
      service.depends_on = Object.fromEntries(
        Object.entries(asRecord(service.depends_on)!).map(([dependency, value]) => [
          rename(dependency),
          value,
        ]),
      );
    }
    if (typeof service.container_name === "string") service.container_name = rename(service.container_name);
    if (Array.isArray(service.links)) {
      service.links = service.links.map((link) => renameHead(String(link), rename));
    }
    if (typeof service.extends === "string") service.extends = rename(service.extends);
    const extended = asRecord(service.extends);
    if (extended && typeof extended.service === "string" && extended.file === undefined) {
      service.extends = { ...extended, service: rename(extended.service) };
    }
    if (Array.isArray(service.volumes_from)) {
      service.volumes_from = service.volumes_from.map((source) =>
        String(source).startsWith("container:") ? source : renameHead(String(source), rename),
      );
    }
    if (typeof service.network_mode === "string" && service.network_mode.startsWith("service:")) {
      service.network_mode = `service:${rename(service.network_mode.slice("service:".length))}`;
    }
    renameServiceVolumes(service, rename);
    renameServiceNetworks(service, rename);
    renameServiceReferences(service, "configs", rename);
    renameServiceReferences(service, "secrets", rename);
    renamed[rename(name)] = service;
  }
  if (asRecord(document.services)) document.services = renamed;
  for (const section of ["volumes", "networks", "configs", "secrets"])
    renameSection(document, section, rename);
}

function isolate(document: Record<string, unknown>, network: string, volumes: boolean): void {
  const services = asRecord(document.services) ?? {};
  for (const [name, raw] of Object.entries(services)) {
    const service = { ...(asRecord(raw) ?? {}) };
    if (volumes) renameServiceVolumes(service, (volume) => suffixed(volume, network));
    if (service.network_mode === undefined) {
      if (Array.isArray(service.networks)) {
        if (!service.networks.includes(network)) service.networks = [...service.networks, network];
      } else if (asRecord(service.networks)) {
        service.networks = { ...asRecord(service.networks), [network]: null };
      } else {
        service.networks = [network];
      }
    }
    services[name] = service;
  }
  if (volumes) renameSection(document, "volumes", (volume) => suffixed(volume, network));
  // The stack's own network: created with the stack (its name scoped to the stack by the conversion).
  document.networks = { ...(asRecord(document.networks) ?? {}), [network]: {} };
}

/** The document with the collision rule applied (a copy; the input is not changed). */
export function applyCollision(
  document: Record<string, unknown>,
  collision: ComposeCollision | undefined,
): Record<string, unknown> {
  if (!collision) return document;
  const copy = structuredClone(document);
  if (collision.mode === "randomize") randomize(copy, collision.suffix);
  else isolate(copy, collision.network, collision.volumes);
  return copy;
}
