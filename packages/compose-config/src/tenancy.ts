/**
 * The refusals that keep a tenant's Compose file inside its own resources on the shared Docker
 * engine (issue 23, item 6). They run on the interpolated document, so `${X}` cannot smuggle a
 * host path or a namespace past them. Each refusal names the service (or top-level entry) and the
 * key. The instance organization (tenant null) is not checked.
 */
import type { IssueList } from "./errors.ts";
import { isHostPathSource, parsePort, parseShortVolume, resolveHostPath } from "./mounts.ts";
import { asRecord, booleanOf, entriesOf, listOf } from "./objects.ts";

export interface ComposeTenant {
  isOwnedNetwork(name: string): boolean;
  isOwnedVolume(name: string): boolean;
  /** Why a published host port is refused (reserved, taken), or undefined when it is free for the tenant. */
  refusePublishedPort(port: number, protocol: "tcp" | "udp"): string | undefined;
}

export interface TenancyContext {
  tenant: ComposeTenant;
  /** The stack's name: aliases on the platform network must carry its `<appName>_` prefix. */
  appName: string;
  filesDirectory: string;
  platformNetwork: string;
}

/** At most this many published ports per `ports` item (a range is checked port by port). */
export const MAX_PUBLISHED_RANGE = 100;

/** Security options that only tighten confinement; every other one (unconfined profiles, label=disable, a profile file on the host) is refused. */
const TIGHTENING_SECURITY_OPTS = /^no-new-privileges(?:[:=]true)?$/;
/** Logging drivers that keep logs on the host where the platform reads them; the others ship them from the host's network to an address of the file's choosing. */
const LOCAL_LOGGING_DRIVERS = new Set(["json-file", "local", "none"]);
const NETWORK_DRIVERS = new Set(["bridge", "overlay"]);
const REFUSED = "is refused for this organization";

/** Keys of a service that widen what the container can reach on the host: refused whatever their value. */
const REFUSED_SERVICE_KEYS: Record<string, string> = {
  cap_add: "adds Linux capabilities to the container",
  devices: "passes host devices into the container",
  device_cgroup_rules: "opens host devices to the container",
  gpus: "passes host GPUs into the container",
  cgroup_parent: "places the container in a host cgroup of its choosing",
  credential_spec: "reads a credential file of the host",
  use_api_socket: "hands the Docker API to the container",
  external_links: "links containers that are not part of this stack",
  volume_driver: "mounts volumes through a host volume driver",
};

/**
 * True for images the platform names itself on a shared engine: what it builds
 * (`platform/<appName>:<deploymentId>`) and what it keeps for rollbacks (`platform-rollback/…`).
 * They are some organization's services' images, so no user input may name them.
 */
export function isPlatformOwnedImage(reference: string): boolean {
  return /^(?:docker\.io\/)?(?:library\/)?platform(?:-rollback)?\//.test(reference.trim().toLowerCase());
}

/** Namespaces (`pid`, `ipc`, `uts`, `cgroup`, `userns_mode`, `network_mode`) that may only be the container's own or another service of this file. */
function checkNamespace(
  issues: IssueList,
  service: string,
  key: string,
  value: unknown,
  services: Set<string>,
  allowed: Set<string>,
): void {
  if (value === undefined || value === null) return;
  const text = String(value);
  if (allowed.has(text)) return;
  const match = /^service:(.+)$/.exec(text);
  if (match && services.has(match[1]!)) return;
  const what =
    text === "host"
      ? "shares the host's namespace"
      : text.startsWith("container:")
        ? "joins a container outside this stack"
        : text.startsWith("service:")
          ? "names a service that is not in this file"
          : `"${text}" is not a namespace this organization may use`;
  issues.add(["services", service, key], `${key}: ${text} ${REFUSED} (${what})`);
}

export function checkTenancy(
  document: Record<string, unknown>,
  context: TenancyContext,
  issues: IssueList,
): void {
  const services = asRecord(document.services) ?? {};
  const serviceNames = new Set(Object.keys(services));
  if (document.include !== undefined)
    issues.add(["include"], `include ${REFUSED} (it reads other files of the host)`);

  // The keys under which the file declares the shared platform network.
  const platformKeys = new Set(
    entriesOf(document.networks)
      .filter(
        ([key, entry]) => entry && isExternal(entry) && externalName(key, entry) === context.platformNetwork,
      )
      .map(([key]) => key),
  );
  for (const [name, raw] of Object.entries(services)) {
    const service = asRecord(raw) ?? {};
    const at = (...rest: (string | number)[]) => ["services", name, ...rest];
    checkPlatformAttachment(issues, name, service.networks, platformKeys, context.appName);
    // Interpolated booleans are strings ("true", "yes"): anything but an explicit false counts.
    if (isSet(service.privileged)) issues.add(at("privileged"), `privileged ${REFUSED}`);
    // Images the platform builds or keeps for rollbacks are other services' (only the platform's
    // own rollback files name them).
    if (typeof service.image === "string" && isPlatformOwnedImage(service.image)) {
      issues.add(
        at("image"),
        `an image the platform builds or keeps for rollbacks (platform/, platform-rollback/) ${REFUSED}`,
      );
    }
    for (const [key, why] of Object.entries(REFUSED_SERVICE_KEYS)) {
      if (isSet(service[key])) issues.add(at(key), `${key} ${REFUSED} (it ${why})`);
    }
    checkNamespace(issues, name, "network_mode", service.network_mode, serviceNames, new Set(["none"]));
    checkNamespace(issues, name, "pid", service.pid, serviceNames, new Set());
    checkNamespace(issues, name, "ipc", service.ipc, serviceNames, new Set(["private", "shareable", "none"]));
    checkNamespace(issues, name, "uts", service.uts, serviceNames, new Set());
    checkNamespace(issues, name, "cgroup", service.cgroup, serviceNames, new Set(["private"]));
    checkNamespace(issues, name, "userns_mode", service.userns_mode, serviceNames, new Set());
    if (service.runtime !== undefined && service.runtime !== "runc") {
      issues.add(at("runtime"), `runtime ${String(service.runtime)} ${REFUSED} (only the default runc)`);
    }
    listOf(service.security_opt).forEach((option, index) => {
      if (!TIGHTENING_SECURITY_OPTS.test(String(option))) {
        issues.add(
          at("security_opt", index),
          `security_opt "${String(option)}" ${REFUSED} (only no-new-privileges)`,
        );
      }
    });
    const logging = asRecord(service.logging);
    if (logging?.driver !== undefined && !LOCAL_LOGGING_DRIVERS.has(String(logging.driver))) {
      issues.add(
        at("logging", "driver"),
        `logging driver ${String(logging.driver)} ${REFUSED} (json-file, local or none)`,
      );
    }
    const deployDevices = asRecord(asRecord(asRecord(service.deploy)?.resources)?.reservations)?.devices;
    if (deployDevices !== undefined) {
      issues.add(
        at("deploy", "resources", "reservations", "devices"),
        `devices ${REFUSED} (it passes host devices into the container)`,
      );
    }
    listOf(service.volumes_from).forEach((entry, index) => {
      const source = String(entry).split(":")[0]!;
      const container = String(entry).startsWith("container:");
      if (container || !serviceNames.has(source)) {
        issues.add(
          at("volumes_from", index),
          `volumes_from ${String(entry)} ${REFUSED} (only services of this file)`,
        );
      }
    });
    const extendsFile = asRecord(service.extends)?.file;
    if (extendsFile !== undefined)
      issues.add(at("extends", "file"), `extends.file ${REFUSED} (it reads another file of the host)`);
    checkBuild(issues, name, service.build);
    checkFileList(issues, context, at("env_file"), "env_file", service.env_file);
    checkFileList(issues, context, at("label_file"), "label_file", service.label_file);
    checkVolumes(issues, context, name, service.volumes);
    checkPorts(issues, context, name, service.ports);
    checkPlacement(issues, name, service.deploy);
  }

  for (const [name, raw] of entriesOf(document.networks)) {
    const network = asRecord(raw) ?? {};
    if (isExternal(network)) {
      const target = externalName(name, network);
      if (target !== context.platformNetwork && !context.tenant.isOwnedNetwork(target)) {
        issues.add(
          ["networks", name, "external"],
          `external network ${target} ${REFUSED} (it is not one of this organization's networks)`,
        );
      }
      continue;
    }
    if (network.driver !== undefined && !NETWORK_DRIVERS.has(String(network.driver))) {
      issues.add(
        ["networks", name, "driver"],
        `network driver ${String(network.driver)} ${REFUSED} (bridge or overlay)`,
      );
    }
    if (network.driver_opts !== undefined)
      issues.add(["networks", name, "driver_opts"], `driver_opts ${REFUSED}`);
    if (network.ipam !== undefined)
      issues.add(["networks", name, "ipam"], `ipam ${REFUSED} (subnets are the platform's to allocate)`);
  }

  for (const [name, raw] of entriesOf(document.volumes)) {
    const volume = asRecord(raw) ?? {};
    if (isExternal(volume)) {
      const target = externalName(name, volume);
      if (!context.tenant.isOwnedVolume(target)) {
        issues.add(
          ["volumes", name, "external"],
          `external volume ${target} ${REFUSED} (it is not one of this organization's volumes)`,
        );
      }
      continue;
    }
    if (volume.driver !== undefined && String(volume.driver) !== "local") {
      issues.add(
        ["volumes", name, "driver"],
        `volume driver ${String(volume.driver)} ${REFUSED} (local only)`,
      );
    }
    // A local volume with driver_opts (type: none, o: bind, device: /etc) is a bind mount of the host.
    if (volume.driver_opts !== undefined)
      issues.add(
        ["volumes", name, "driver_opts"],
        `driver_opts ${REFUSED} (a local volume with options can mount a host path)`,
      );
  }

  for (const section of ["secrets", "configs"] as const) {
    for (const [name, raw] of entriesOf(document[section])) {
      const entry = asRecord(raw) ?? {};
      if (isExternal(entry))
        issues.add(
          [section, name, "external"],
          `external ${section} ${REFUSED} (they are not this organization's)`,
        );
      if (entry.environment !== undefined) {
        issues.add(
          [section, name, "environment"],
          `${section}.environment ${REFUSED} (it reads the deploying process's environment)`,
        );
      }
      if (entry.file !== undefined)
        checkFile(issues, context, [section, name, "file"], `${section}.file`, String(entry.file));
    }
  }
}

/** Present and not an explicit false (`false`, "false", "0", "no", "off"). */
function isSet(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  return !(typeof value === "string" && /^(false|0|no|off|)$/i.test(value.trim()));
}

export function isExternal(entry: Record<string, unknown>): boolean {
  const external = booleanOf(entry.external);
  return external === true || (typeof external === "object" && external !== null);
}

/** The Docker name an external network or volume refers to. */
export function externalName(key: string, entry: Record<string, unknown>): string {
  const external = asRecord(entry.external);
  if (typeof external?.name === "string") return external.name;
  if (typeof entry.name === "string") return entry.name;
  return key;
}

/**
 * On the shared platform network a name is an upstream: an alias (or a fixed address) of the
 * file's choosing there could answer for another organization's service. Only aliases under the
 * stack's own `<appName>_` prefix are allowed on it.
 */
function checkPlatformAttachment(
  issues: IssueList,
  service: string,
  networks: unknown,
  platformKeys: Set<string>,
  appName: string,
): void {
  const attachments = asRecord(networks);
  if (!attachments) return;
  for (const key of platformKeys) {
    const attachment = asRecord(attachments[key]);
    if (!attachment) continue;
    const at = ["services", service, "networks", key];
    listOf(attachment.aliases).forEach((alias, index) => {
      if (!String(alias).startsWith(`${appName}_`)) {
        issues.add(
          [...at, "aliases", index],
          `the alias ${String(alias)} on the platform network ${REFUSED} (aliases there start with ${appName}_)`,
        );
      }
    });
    for (const field of ["ipv4_address", "ipv6_address", "link_local_ips", "mac_address"]) {
      if (attachment[field] !== undefined)
        issues.add([...at, field], `${field} on the platform network ${REFUSED}`);
    }
  }
}

function checkBuild(issues: IssueList, service: string, build: unknown): void {
  if (build === undefined || build === null) return;
  const at = (...rest: string[]) => ["services", service, "build", ...rest];
  const spec = typeof build === "string" ? { context: build } : (asRecord(build) ?? {});
  const relativeInside = (value: unknown) => {
    const text = String(value);
    return (
      !text.startsWith("/") &&
      !text.startsWith("~") &&
      !/^[a-z]+:\/\//i.test(text) &&
      !/:/.test(text) &&
      !posixEscapes(text)
    );
  };
  if (spec.context !== undefined && !relativeInside(spec.context)) {
    issues.add(
      at("context"),
      `build context ${String(spec.context)} ${REFUSED} (a path inside the stack's sources)`,
    );
  }
  if (spec.dockerfile !== undefined && !relativeInside(spec.dockerfile)) {
    issues.add(
      at("dockerfile"),
      `dockerfile ${String(spec.dockerfile)} ${REFUSED} (a path inside the build context)`,
    );
  }
  for (const key of ["additional_contexts", "ssh", "secrets", "privileged", "entitlements"]) {
    if (spec[key] !== undefined) issues.add(at(key), `build.${key} ${REFUSED}`);
  }
  if (spec.network !== undefined && spec.network !== "default" && spec.network !== "none") {
    issues.add(at("network"), `build.network ${String(spec.network)} ${REFUSED}`);
  }
}

function posixEscapes(relative: string): boolean {
  let depth = 0;
  for (const segment of relative.split("/")) {
    if (segment === "..") depth--;
    else if (segment !== "." && segment !== "") depth++;
    if (depth < 0) return true;
  }
  return false;
}

function checkFile(
  issues: IssueList,
  context: TenancyContext,
  path: (string | number)[],
  key: string,
  file: string,
): void {
  const resolved = resolveHostPath(file, context.filesDirectory);
  if (resolved.kind === "files") return;
  issues.add(
    path,
    resolved.kind === "escapes"
      ? `${key} ${file} leaves the stack's files directory`
      : `${key} ${file} ${REFUSED} (a host path; files of the stack go under ../files/)`,
  );
}

function checkFileList(
  issues: IssueList,
  context: TenancyContext,
  path: (string | number)[],
  key: string,
  value: unknown,
): void {
  if (value === undefined || value === null) return;
  const items = Array.isArray(value) ? value : [value];
  items.forEach((item, index) => {
    const file = typeof item === "string" ? item : String(asRecord(item)?.path ?? "");
    checkFile(issues, context, Array.isArray(value) ? [...path, index] : path, key, file);
  });
}

function checkVolumes(issues: IssueList, context: TenancyContext, service: string, volumes: unknown): void {
  listOf(volumes).forEach((item, index) => {
    const at = ["services", service, "volumes", index];
    let source: string | undefined;
    let bind = false;
    if (typeof item === "string") {
      source = parseShortVolume(item).source;
      bind = source !== undefined && isHostPathSource(source);
    } else {
      const volume = asRecord(item) ?? {};
      const type = String(volume.type ?? "volume");
      source = typeof volume.source === "string" ? volume.source : undefined;
      if (type === "bind") bind = true;
      else if (type === "npipe" || type === "cluster") {
        issues.add([...at, "type"], `a ${type} mount ${REFUSED}`);
        return;
      }
    }
    if (!bind) return;
    const resolved = resolveHostPath(source ?? "", context.filesDirectory);
    if (resolved.kind === "files") return;
    issues.add(
      [...at, ...(typeof item === "string" ? [] : ["source"])],
      resolved.kind === "escapes"
        ? `bind mount ${source} leaves the stack's files directory`
        : `bind mount of the host path ${source} ${REFUSED}${source?.includes("docker.sock") ? " (the Docker socket is the host)" : ""}; files of the stack go under ../files/`,
    );
  });
}

function checkPorts(issues: IssueList, context: TenancyContext, service: string, ports: unknown): void {
  listOf(ports).forEach((item, index) => {
    const at = ["services", service, "ports", index];
    const port = parsePort(item);
    if (!port) {
      issues.add(at, `port ${JSON.stringify(item)} cannot be read`);
      return;
    }
    if (port.published.length === 0) return;
    if (port.protocol !== "tcp" && port.protocol !== "udp") {
      issues.add(at, `published ${port.protocol} ports ${REFUSED} (tcp or udp)`);
      return;
    }
    if (port.published.length > MAX_PUBLISHED_RANGE) {
      issues.add(
        at,
        `a range of ${port.published.length} published ports ${REFUSED} (at most ${MAX_PUBLISHED_RANGE})`,
      );
      return;
    }
    for (const published of port.published) {
      const reason = context.tenant.refusePublishedPort(published, port.protocol);
      if (reason !== undefined) {
        issues.add(at, `published port ${published}/${port.protocol} ${REFUSED}: ${reason}`);
        return;
      }
    }
  });
}

/** Placement constraints that do not pick hosts: any node of the stack's server qualifies. */
const NODE_NEUTRAL_CONSTRAINT = /^node\.platform\.(os|arch)\s*(==|!=)\s*[A-Za-z0-9_.-]+$/;

/**
 * `deploy.placement.constraints` pick the Swarm nodes a service runs on. A tenant's stack runs on
 * the server it names; a constraint on node ids, hostnames, roles or labels would let its file
 * choose other hosts of the swarm (the control plane's manager, another organization's server),
 * which the platform does not map to organizations: only `node.platform.os|arch` are allowed.
 */
function checkPlacement(issues: IssueList, service: string, deploy: unknown): void {
  const constraints = asRecord(asRecord(deploy)?.placement)?.constraints;
  listOf(constraints).forEach((constraint, index) => {
    if (NODE_NEUTRAL_CONSTRAINT.test(String(constraint).trim())) return;
    issues.add(
      ["services", service, "deploy", "placement", "constraints", index],
      `placement constraint "${String(constraint)}" ${REFUSED} (it picks Swarm nodes; only node.platform.os and node.platform.arch)`,
    );
  });
}
