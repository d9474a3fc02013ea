/**
 * getConvertedCompose: the user's Compose file with the platform's additions applied as objects
 * and serialized with `yaml`, valid against the Compose Specification (issue 23, item 4):
 * interpolation first, then the tenant refusals, then scoped names, ownership labels, the
 * platform network for services with a domain, `../files/` sources normalized and, for
 * `stack`, the v3.8 format `docker stack deploy` reads.
 */
import { posix } from "node:path";
import { stringify } from "yaml";
import { z } from "zod";
import { applyCollision, COMPOSE_SUFFIX_PATTERN, type ComposeCollision } from "./collision.ts";
import { ComposeFileError, IssueList } from "./errors.ts";
import { escapeInterpolation, interpolateCompose } from "./interpolate.ts";
import { formatShortVolume, isHostPathSource, parseShortVolume, resolveHostPath } from "./mounts.ts";
import { asRecord, castBooleans, deepClone, entriesOf, listOf, mappingOf } from "./objects.ts";
import { assertValidCompose, parseComposeFile, validateComposeDocument } from "./schema.ts";
import { toStackFormat } from "./stack-format.ts";
import { type ComposeTenant, checkTenancy, externalName, isExternal } from "./tenancy.ts";

export type ComposeType = "docker-compose" | "stack";

export interface ComposeDomain {
  host: string;
  serviceName: string;
  port: number;
  path?: string | null;
}

export interface ConvertComposeInput {
  composeFile: string;
  composeType: ComposeType;
  /** The stack's name: the Compose project (`-p`) or the Swarm stack namespace. */
  appName: string;
  /** Ownership labels on every service, network and volume the stack creates. */
  labels: Record<string, string>;
  /** Interpolation variables (the caller merges project < environment < compose and adds APP_NAME-style ones). */
  env: Record<string, string>;
  domains: ComposeDomain[];
  /** The platform's overlay network, declared external in the output. */
  platformNetwork: string;
  /**
   * The organization's networks (the engine's names, networkIds) every service joins besides
   * its own, declared external in the output; a service with a network_mode joins none.
   */
  extraNetworks?: readonly string[];
  /** null: the instance organization, no refusals. */
  tenant: ComposeTenant | null;
  /**
   * The directory `../files/<x>` names, as an absolute path for the checks (a source must stay
   * inside it); the output names it `../files/<x>`, relative to the file's directory.
   */
  filesDirectory: string;
  /**
   * Dokploy's randomize (every name of the file suffixed) or isolatedDeployment (a network of
   * the stack's own every service joins, volumes suffixed with `volumes`), applied before the
   * tenant's checks; domains name the services as renamed.
   */
  collision?: ComposeCollision;
}

export interface ConvertedCompose {
  document: Record<string, unknown>;
  yaml: string;
  /** The services of the file, in its order. */
  services: string[];
  /** For each service with a domain: the name Traefik reaches it by on the platform network. */
  upstreams: Record<string, string>;
}

/**
 * Stack names: lowercase letters, digits and `-` (what generateAppName yields). No `_`, so that
 * `<appName>_` is an unambiguous prefix: no two stacks can scope a name to the same string.
 */
export const COMPOSE_APP_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const DOCKER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

const inputSchema = z.object({
  composeFile: z.string(),
  composeType: z.enum(["docker-compose", "stack"]),
  appName: z.string().regex(COMPOSE_APP_NAME_PATTERN, "must be lowercase letters, digits and '-'"),
  labels: z.record(z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9._/-]*$/, "is not a label key"), z.string()),
  env: z.record(z.string(), z.string()),
  domains: z.array(
    z.object({
      host: z.string().min(1),
      serviceName: z.string().min(1),
      port: z.number().int().min(1).max(65535),
      path: z.string().nullish(),
    }),
  ),
  platformNetwork: z.string().regex(DOCKER_NAME, "is not a Docker network name"),
  filesDirectory: z.string().startsWith("/", "must be an absolute path"),
  collision: z
    .discriminatedUnion("mode", [
      z.object({
        mode: z.literal("randomize"),
        suffix: z.string().regex(COMPOSE_SUFFIX_PATTERN, "is not a suffix"),
      }),
      z.object({
        mode: z.literal("isolated"),
        network: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "is not a network key"),
        volumes: z.boolean(),
      }),
    ])
    .optional(),
});

/**
 * The upstream name of a service on the platform network: Swarm's service name for `stack`, and
 * for `docker-compose` the alias the conversion adds, spelt the same. `_` (which no appName holds)
 * separates the stack from the service: with `-`, stack `shop` with service `x-web` and stack
 * `shop-x` with service `web` would share `shop-x-web`, and the proxy would send one
 * organization's traffic to both.
 */
export function composeUpstream(_composeType: ComposeType, appName: string, service: string): string {
  return scopedName(appName, service);
}

/** More than one container of the service (Compose refuses container_name then). */
function isScaled(service: Record<string, unknown>): boolean {
  const replicas = asRecord(service.deploy)?.replicas ?? service.scale;
  return typeof replicas === "number" && replicas > 1;
}

/** A name the stack creates, prefixed with `<appName>_` unless it already carries that prefix. */
export function scopedName(appName: string, name: string): string {
  return name.startsWith(`${appName}_`) ? name : `${appName}_${name}`;
}

export function convertCompose(input: ConvertComposeInput): ConvertedCompose {
  const parsedInput = inputSchema.safeParse(input);
  if (!parsedInput.success) {
    throw new ComposeFileError(
      parsedInput.error.issues.map((issue) => ({
        path: issue.path.map(String).join("."),
        message: issue.message,
      })),
    );
  }
  const { composeType, appName, labels, platformNetwork, filesDirectory, tenant } = input;
  const extraNetworks = [...new Set(input.extraNetworks ?? [])];
  const stack = composeType === "stack";

  // Schema first (a 400 for the file as written), then the values, then the schema again: an
  // interpolated value must still have the right form.
  const written = parseComposeFile(input.composeFile);
  const interpolated = interpolateCompose(written, input.env);
  const notBooleans = castBooleans(interpolated);
  if (notBooleans.length > 0) {
    throw new ComposeFileError(
      notBooleans.map((path) => ({ path: path.join("."), message: "must be true or false" })),
    );
  }
  assertValidCompose(interpolated);
  const document = applyCollision(interpolated, input.collision);
  if (input.collision) assertValidCompose(document);

  const issues = new IssueList();
  const services = asRecord(document.services) ?? {};
  const serviceNames = Object.keys(services);
  if (serviceNames.length === 0) issues.add(["services"], "the file declares no service");

  const domainServices = new Set<string>();
  input.domains.forEach((domain, index) => {
    if (!Object.hasOwn(services, domain.serviceName)) {
      issues.add(
        ["domains", index, "serviceName"],
        `${domain.serviceName} is not a service of the Compose file`,
      );
    } else {
      domainServices.add(domain.serviceName);
    }
  });
  if (domainServices.size > 0) {
    const clash = asRecord(asRecord(document.networks)?.[platformNetwork]);
    if (clash && !isExternal(clash)) {
      issues.add(
        ["networks", platformNetwork],
        `is the platform network's name: declare it external (name: ${platformNetwork}) or rename the network`,
      );
    }
  }
  if (tenant) checkTenancy(document, { tenant, appName, filesDirectory, platformNetwork }, issues);
  checkReferences(document, domainServices, issues);
  issues.throwIfAny();

  const out = deepClone(document);
  if (!stack && out.name !== undefined) out.name = appName;

  // Networks and volumes the stack creates: scoped names and the ownership labels.
  for (const section of ["networks", "volumes"] as const) {
    const entries = asRecord(out[section]);
    if (!entries) continue;
    for (const [key, raw] of Object.entries(entries)) {
      const entry = asRecord(raw) ?? {};
      if (isExternal(entry)) continue;
      const { name, labels: own, ...rest } = entry;
      entries[key] = {
        name: scopedName(appName, typeof name === "string" ? name : key),
        ...rest,
        labels: { ...mappingOf(own), ...labels },
      };
    }
  }
  for (const section of ["secrets", "configs"] as const) {
    const entries = asRecord(out[section]);
    if (!entries) continue;
    for (const [key, raw] of Object.entries(entries)) {
      const entry = asRecord(raw) ?? {};
      if (isExternal(entry)) continue;
      const next: Record<string, unknown> = { ...entry };
      if (typeof entry.file === "string") next.file = absoluteFile(entry.file, filesDirectory);
      if (stack) {
        next.name = scopedName(appName, typeof entry.name === "string" ? entry.name : key);
        next.labels = { ...mappingOf(entry.labels), ...labels };
      }
      entries[key] = next;
    }
  }

  const networks = asRecord(out.networks) ?? {};
  const platformKey = platformNetworkKey(networks, platformNetwork);
  let usesDefault = false;
  const upstreams: Record<string, string> = {};
  const outServices = asRecord(out.services)!;
  for (const name of serviceNames) {
    const service = castNumbers({ ...(asRecord(outServices[name]) ?? {}) });
    service.labels = { ...mappingOf(service.labels), ...labels };
    if (stack) {
      const deploy = asRecord(service.deploy) ?? {};
      service.deploy = { ...deploy, labels: { ...mappingOf(deploy.labels), ...labels } };
    }
    if (!stack && typeof service.container_name === "string") {
      service.container_name = scopedName(appName, service.container_name);
    } else if (!stack && !isScaled(service)) {
      // Compose v2 names containers `<project>-<service>-1`, which two stacks can share when one
      // appName is another's followed by `-`; an explicit `<appName>_<service>` cannot be shared.
      service.container_name = scopedName(appName, name);
    }
    if (Array.isArray(service.volumes))
      service.volumes = service.volumes.map((volume) => absoluteVolume(volume, filesDirectory));
    for (const key of ["env_file", "label_file"]) {
      if (service[key] !== undefined) service[key] = absoluteFileList(service[key], filesDirectory);
    }

    const serviceNetworks = networksOf(service.networks);
    const implicitDefault = service.networks === undefined && service.network_mode === undefined;
    if (implicitDefault || Object.hasOwn(serviceNetworks, "default")) usesDefault = true;
    if (domainServices.has(name)) {
      const upstream = composeUpstream(composeType, appName, name);
      upstreams[name] = upstream;
      const joined: Record<string, unknown> = implicitDefault ? { default: null } : { ...serviceNetworks };
      const existing = asRecord(joined[platformKey]) ?? {};
      joined[platformKey] = stack
        ? Object.keys(existing).length > 0
          ? existing
          : null
        : { ...existing, aliases: [...new Set([...listOf(existing.aliases).map(String), upstream])] };
      service.networks = joined;
    }
    if (extraNetworks.length > 0 && service.network_mode === undefined) {
      const joined: Record<string, unknown> =
        service.networks === undefined ? { default: null } : networksOf(service.networks);
      for (const network of extraNetworks) joined[extraNetworkKey(network)] ??= null;
      service.networks = joined;
    }
    outServices[name] = service;
  }

  if (usesDefault) {
    const declared = asRecord(networks.default);
    if (!declared) networks.default = { name: scopedName(appName, "default"), labels: { ...labels } };
  }
  if (domainServices.size > 0) {
    const declared = asRecord(networks[platformKey]);
    networks[platformKey] =
      declared && isExternal(declared) ? declared : { name: platformNetwork, external: true };
  }
  for (const network of extraNetworks) {
    const key = extraNetworkKey(network);
    const declared = asRecord(networks[key]);
    if (declared && !(isExternal(declared) && externalName(key, declared) === network)) {
      throw new ComposeFileError([
        {
          path: `networks.${key}`,
          message: `is the name under which the stack joins the network ${network} (networkIds): rename it`,
        },
      ]);
    }
    networks[key] = { name: network, external: true };
  }
  if (Object.keys(networks).length > 0) out.networks = networks;

  let result = out;
  if (stack) {
    const formatIssues = new IssueList();
    result = toStackFormat(out, formatIssues);
    formatIssues.throwIfAny();
  }
  const problems = validateComposeDocument(result);
  if (problems.length > 0) {
    throw new ComposeFileError(
      problems.map((problem) => ({ ...problem, message: `the converted file ${problem.message}` })),
    );
  }
  return {
    document: result,
    // YAML 1.1 quoting: strings that a 1.1 reader (docker-compose v1's PyYAML) would take for a number or a
    // boolean ("22:22", "yes", "on") are quoted; the text is the same data for a 1.2 reader.
    yaml: composeYaml(result),
    services: serviceNames,
    upstreams,
  };
}

const integer = (value: unknown) =>
  typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;

/**
 * Interpolation yields strings; the fields Compose reads as integers are cast back (as Compose
 * does), so `replicas: ${REPLICAS}` is `replicas: 3` for docker-compose v1 and for Swarm.
 */
function castNumbers(service: Record<string, unknown>): Record<string, unknown> {
  if (service.scale !== undefined) service.scale = integer(service.scale);
  const deploy = asRecord(service.deploy);
  if (deploy?.replicas !== undefined) service.deploy = { ...deploy, replicas: integer(deploy.replicas) };
  const healthcheck = asRecord(service.healthcheck);
  if (healthcheck?.retries !== undefined)
    service.healthcheck = { ...healthcheck, retries: integer(healthcheck.retries) };
  if (Array.isArray(service.ports)) {
    service.ports = service.ports.map((port) => {
      const entry = asRecord(port);
      if (!entry) return port;
      return {
        ...entry,
        ...(entry.target !== undefined ? { target: integer(entry.target) } : {}),
        ...(entry.published !== undefined ? { published: integer(entry.published) } : {}),
      };
    });
  }
  return service;
}

/** The key under which the platform network appears: an external entry naming it, else its own name. */
function platformNetworkKey(networks: Record<string, unknown>, platformNetwork: string): string {
  for (const [key, raw] of Object.entries(networks)) {
    const entry = asRecord(raw);
    if (entry && isExternal(entry) && externalName(key, entry) === platformNetwork) return key;
  }
  return platformNetwork;
}

/** A service's `networks` (list or mapping) as a mapping. */
/** The key under which the file joins an organization network of networkIds. */
const extraNetworkKey = (network: string) => `platform-joined-${network}`;

function networksOf(value: unknown): Record<string, unknown> {
  if (Array.isArray(value)) return Object.fromEntries(value.map((name) => [String(name), null]));
  return { ...(asRecord(value) ?? {}) };
}

/** References the file must resolve: named volumes and networks declared, services with a domain on a network. */
function checkReferences(
  document: Record<string, unknown>,
  domainServices: Set<string>,
  issues: IssueList,
): void {
  const volumes = asRecord(document.volumes) ?? {};
  const networks = asRecord(document.networks) ?? {};
  for (const [name, raw] of Object.entries(asRecord(document.services) ?? {})) {
    const service = asRecord(raw) ?? {};
    listOf(service.volumes).forEach((item, index) => {
      let source: string | undefined;
      if (typeof item === "string") {
        const parsed = parseShortVolume(item);
        source = parsed.source !== undefined && !isHostPathSource(parsed.source) ? parsed.source : undefined;
      } else {
        const volume = asRecord(item) ?? {};
        if ((volume.type ?? "volume") === "volume" && typeof volume.source === "string")
          source = volume.source;
      }
      if (source !== undefined && !Object.hasOwn(volumes, source)) {
        issues.add(
          ["services", name, "volumes", index],
          `names the volume ${source}, which is not declared under volumes`,
        );
      }
    });
    for (const network of Object.keys(networksOf(service.networks))) {
      if (network !== "default" && !Object.hasOwn(networks, network)) {
        issues.add(
          ["services", name, "networks", network],
          `names the network ${network}, which is not declared under networks`,
        );
      }
    }
    if (domainServices.has(name) && service.network_mode !== undefined) {
      issues.add(
        ["services", name, "network_mode"],
        "a service with a domain joins the platform network, which network_mode excludes",
      );
    }
  }
  for (const [name, entry] of entriesOf(document.networks)) {
    if (entry && !isExternal(entry) && typeof entry.name === "string" && !DOCKER_NAME.test(entry.name)) {
      issues.add(["networks", name, "name"], "is not a Docker network name");
    }
  }
}

/**
 * A source in the stack's files directory written as `../files/<x>` with `..` resolved (Compose
 * and `docker stack deploy` resolve it from the file's directory, where the agent writes the
 * stack's files); other paths unchanged.
 */
function absoluteFile(file: string, filesDirectory: string): string {
  const resolved = resolveHostPath(file, filesDirectory);
  if (resolved.kind !== "files") return file;
  const relative = posix.relative(posix.resolve("/", filesDirectory), resolved.absolute);
  return relative === "" ? "../files" : `../files/${relative}`;
}

function absoluteFileList(value: unknown, filesDirectory: string): unknown {
  const one = (item: unknown) => {
    if (typeof item === "string") return absoluteFile(item, filesDirectory);
    const entry = asRecord(item);
    return entry && typeof entry.path === "string"
      ? { ...entry, path: absoluteFile(entry.path, filesDirectory) }
      : item;
  };
  return Array.isArray(value) ? value.map(one) : one(value);
}

function absoluteVolume(volume: unknown, filesDirectory: string): unknown {
  if (typeof volume === "string") {
    const parsed = parseShortVolume(volume);
    if (parsed.source === undefined || !isHostPathSource(parsed.source)) return volume;
    return formatShortVolume({ ...parsed, source: absoluteFile(parsed.source, filesDirectory) });
  }
  const entry = asRecord(volume);
  if (entry && entry.type === "bind" && typeof entry.source === "string") {
    return { ...entry, source: absoluteFile(entry.source, filesDirectory) };
  }
  return volume;
}

/**
 * A converted file's text, serialized as convertCompose does: YAML 1.1 quoting, and every `$` of
 * a value written `$$`, so that Compose's interpolation of the file yields the document's values.
 */
export function composeYaml(document: Record<string, unknown>): string {
  return stringify(escapeInterpolation(document), { lineWidth: 0, version: "1.1" });
}

/**
 * A converted file whose services run the given images (a rollback of the stack): each named
 * service's `image` is replaced, and its `build` and `pull_policy` go (the image is on the server,
 * kept under a name no registry serves). Services not named are left as they are.
 */
export function pinComposeImages(
  document: Record<string, unknown>,
  images: Readonly<Record<string, string>>,
): string {
  const copy = structuredClone(document);
  const services = (copy.services ?? {}) as Record<string, Record<string, unknown> | null>;
  for (const [name, image] of Object.entries(images)) {
    const service = services[name];
    if (!service) continue;
    service.image = image;
    delete service.build;
    delete service.pull_policy;
  }
  return composeYaml(copy);
}
