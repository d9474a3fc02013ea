/**
 * What a tenant's Compose file may say on the shared Docker engine (issue 23 item 6, issue 37).
 * TENANT_KEY_RULES classifies every key of the Compose Specification: allowed, allowed with a
 * named check, or refused; a key it does not classify is refused, so a key the next Compose
 * release adds is refused until someone classifies it (tests/security/compose-schema-walk.test.ts
 * walks the schema and fails on any key the table lacks). The checks run on the interpolated
 * document, so `${X}` cannot smuggle a host path or a namespace past them. Each refusal names the
 * key's path. The instance organization (tenant null) is exempt from the whole table: it
 * administers the instance, and its files may use every key (privileged services, host paths…).
 */
import { dockerfileProblems } from "./dockerfile.ts";
import type { IssueList } from "./errors.ts";
import { isHostPathSource, parsePort, parseShortVolume, resolveHostPath } from "./mounts.ts";
import { asRecord, booleanOf, entriesOf, listOf, mappingOf } from "./objects.ts";
import { bytesOf } from "./stack-format.ts";

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
/** The largest tmpfs a tenant's container may mount: its pages stay in the host's memory until the container goes. */
export const MAX_TMPFS_BYTES = 1024 ** 3;
/** The most processes a tenant's container may run (`pids_limit`, `deploy.resources.limits.pids`). */
export const MAX_PIDS_LIMIT = 32768;
/** The most open files or processes a ulimit may allow: the engine's default (dockerd's LimitNOFILE). */
export const MAX_ULIMIT = 1048576;

/** Security options that only tighten confinement; every other one (unconfined profiles, label=disable, a profile file on the host) is refused. */
const TIGHTENING_SECURITY_OPTS = /^no-new-privileges(?:[:=]true)?$/;
/** Logging drivers that keep logs on the host where the platform reads them; the others ship them from the host's network to an address of the file's choosing. */
const LOCAL_LOGGING_DRIVERS = new Set(["json-file", "local", "none"]);
const NETWORK_DRIVERS = new Set(["bridge", "overlay"]);
/**
 * Sysctls a tenant may set: Kubernetes' "safe" set (namespaced, and without effect on other
 * containers or the host's resources) and `net.core.somaxconn`. Other namespaced ones (socket
 * buffer sizes, `kernel.shm*` limits, conntrack and routing knobs) take more of the host's kernel
 * memory or change how it treats traffic.
 */
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced",
  "net.core.somaxconn",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.ping_group_range",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_fin_timeout",
]);
/** Ulimits that bound only the container's own processes; `nofile` and `nproc` at most MAX_ULIMIT. `rtprio` and `nice` (scheduling above the host's other processes) only at 0. */
const ULIMITS = new Set([
  "as",
  "core",
  "cpu",
  "data",
  "fsize",
  "locks",
  "memlock",
  "msgqueue",
  "rss",
  "sigpending",
  "stack",
]);
const CAPPED_ULIMITS = new Set(["nofile", "nproc"]);
const ZERO_ULIMITS = new Set(["rtprio", "nice"]);
const REFUSED = "is refused for this organization";

type Path = (string | number)[];

/** What a check sees besides the value: the document's services and the shared platform network's keys. */
interface Scope {
  issues: IssueList;
  context: TenancyContext;
  serviceNames: Set<string>;
  /** The keys under which the file declares the shared platform network. */
  platformKeys: Set<string>;
}

/** A check of a key's value; `owner` is the mapping that holds the key. */
type Check = (value: unknown, at: Path, scope: Scope, owner: Record<string, unknown>) => void;

/** The keys of a mapping (or of each mapping of a list), by name; `*` for named entries (services, networks…). */
export type KeyTable = Record<string, KeyRule>;

export type KeyRule =
  /** `keys`: how the keys below are classified; "any" for the file's own data (labels, environment). */
  | { verdict: "allowed"; keys?: KeyTable | "any" }
  /** Allowed when the named check passes; a check without `run` is made by the enclosing key's. */
  | { verdict: "checked"; check: string; run?: Check; keys?: KeyTable | "any" }
  | { verdict: "refused"; why: string };

const allowed = (keys?: KeyTable | "any"): KeyRule => ({ verdict: "allowed", ...(keys ? { keys } : {}) });
/** A mapping whose keys are the file's own data (labels, environment variables). */
const data = allowed("any");
const checked = (check: string, run?: Check, keys?: KeyTable | "any"): KeyRule => ({
  verdict: "checked",
  check,
  ...(run ? { run } : {}),
  ...(keys ? { keys } : {}),
});
const refused = (why: string): KeyRule => ({ verdict: "refused", why });

/**
 * True for images the platform names itself on a shared engine: what it builds
 * (`platform/<appName>:<deploymentId>`) and what it keeps for rollbacks (`platform-rollback/…`).
 * They are some organization's services' images, so no user input may name them.
 */
export function isPlatformOwnedImage(reference: string): boolean {
  return /^(?:docker\.io\/)?(?:library\/)?platform(?:-rollback)?\//.test(reference.trim().toLowerCase());
}

/**
 * Why a tenant may not name this image, or undefined. An image ID (`sha256:…`) reaches whatever
 * image of the shared engine has it, and so does a bare name made of hex digits only: the engine
 * resolves `6963` to the image whose ID starts so when no image is named that (seen on Docker 20).
 */
export function imageReferenceRefusal(reference: string): string | undefined {
  const text = reference.trim().toLowerCase();
  if (text.startsWith("sha256:") || /^[0-9a-f]+$/.test(text)) {
    return `an image ID ${REFUSED} (the engine resolves it, or a prefix of it, to any image it holds; name images by repository and tag)`;
  }
  if (isPlatformOwnedImage(text)) {
    return `an image the platform builds or keeps for rollbacks (platform/, platform-rollback/) ${REFUSED}`;
  }
  return undefined;
}

function checkImage(issues: IssueList, at: Path, reference: string): void {
  const refusal = imageReferenceRefusal(reference);
  if (refusal) issues.add(at, refusal);
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

/** A key's name in messages: its path below the service or top-level entry (`build.ssh`, `deploy.resources.limits.pids`). */
function keyName(at: Path): string {
  return (at.length > 2 ? at.slice(2) : at).filter((segment) => typeof segment === "string").join(".");
}

function numberOf(value: unknown): number {
  return typeof value === "number" ? value : Number(String(value).trim());
}

/** `(value, at, scope)` for each item of a list (its index in the path), or the value itself. */
function eachItem(value: unknown, at: Path, visit: (item: unknown, itemAt: Path) => void): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      visit(item, [...at, index]);
    });
  } else if (value !== undefined && value !== null) visit(value, at);
}

// ---- Checks of service keys ----

const checkPrivileged: Check = (value, at, { issues }) => {
  // Interpolated booleans are strings ("true", "yes"): anything but an explicit false counts.
  if (isSet(value)) issues.add(at, `privileged ${REFUSED}`);
};

const checkServiceImage: Check = (value, at, { issues }) => {
  if (typeof value === "string") checkImage(issues, at, value);
};

/** Namespaces (`pid`, `ipc`, `uts`, `cgroup`, `userns_mode`, `network_mode`) that may only be the container's own or another service of this file. */
function namespace(...allowedModes: string[]): Check {
  return (value, at, { issues, serviceNames }) => {
    if (value === undefined || value === null) return;
    const key = String(at.at(-1));
    const text = String(value);
    if (allowedModes.includes(text)) return;
    const match = /^service:(.+)$/.exec(text);
    if (match && serviceNames.has(match[1]!)) return;
    const what =
      text === "host"
        ? "shares the host's namespace"
        : text.startsWith("container:")
          ? "joins a container outside this stack"
          : text.startsWith("service:")
            ? "names a service that is not in this file"
            : `"${text}" is not a namespace this organization may use`;
    issues.add(at, `${key}: ${text} ${REFUSED} (${what})`);
  };
}

const checkRuntime: Check = (value, at, { issues }) => {
  if (value !== undefined && value !== "runc") {
    issues.add(at, `runtime ${String(value)} ${REFUSED} (only the default runc)`);
  }
};

const checkSecurityOpts: Check = (value, at, { issues }) => {
  listOf(value).forEach((option, index) => {
    if (!TIGHTENING_SECURITY_OPTS.test(String(option))) {
      issues.add([...at, index], `security_opt "${String(option)}" ${REFUSED} (only no-new-privileges)`);
    }
  });
};

const checkLoggingDriver: Check = (value, at, { issues }) => {
  if (value !== undefined && !LOCAL_LOGGING_DRIVERS.has(String(value))) {
    issues.add(at, `logging driver ${String(value)} ${REFUSED} (json-file, local or none)`);
  }
};

const checkVolumesFrom: Check = (value, at, { issues, serviceNames }) => {
  listOf(value).forEach((entry, index) => {
    const source = String(entry).split(":")[0]!;
    if (String(entry).startsWith("container:") || !serviceNames.has(source)) {
      issues.add([...at, index], `volumes_from ${String(entry)} ${REFUSED} (only services of this file)`);
    }
  });
};

const checkOomScoreAdj: Check = (value, at, { issues }) => {
  if (!(numberOf(value) >= 0)) {
    issues.add(
      at,
      `oom_score_adj ${String(value)} ${REFUSED} (below 0 the kernel kills other containers first)`,
    );
  }
};

/** `pids_limit` and `deploy.resources.limits.pids`: 1 to MAX_PIDS_LIMIT (0 and -1 are no limit). */
const checkPidsLimit: Check = (value, at, { issues }) => {
  const limit = numberOf(value);
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_PIDS_LIMIT)) {
    issues.add(at, `${keyName(at)} ${String(value)} ${REFUSED} (1 to ${MAX_PIDS_LIMIT} processes)`);
  }
};

const checkUlimits: Check = (value, at, { issues }) => {
  for (const [name, limit] of Object.entries(asRecord(value) ?? {})) {
    const where = [...at, name];
    const pair = asRecord(limit);
    const values = pair ? [pair.soft, pair.hard].filter((item) => item !== undefined) : [limit];
    const numbers = values.map(numberOf);
    if (numbers.some((number) => Number.isNaN(number))) {
      issues.add(where, `ulimit ${name} cannot be read`);
    } else if (CAPPED_ULIMITS.has(name)) {
      if (numbers.some((number) => number < 0 || number > MAX_ULIMIT))
        issues.add(where, `ulimit ${name} above ${MAX_ULIMIT} ${REFUSED} (the engine's default)`);
    } else if (ZERO_ULIMITS.has(name)) {
      if (numbers.some((number) => number !== 0))
        issues.add(
          where,
          `ulimit ${name} ${REFUSED} (it schedules the container above the host's other processes)`,
        );
    } else if (!ULIMITS.has(name)) {
      issues.add(where, `ulimit ${name} ${REFUSED} (not one this organization may set)`);
    }
  }
};

/** A size in bytes (`64m`, `1g`, 1048576), or NaN. */
function sizeInBytes(value: unknown): number {
  const bytes = bytesOf(typeof value === "number" ? value : String(value).trim());
  return typeof bytes === "number" ? bytes : Number.NaN;
}

function tmpfsSizeProblem(size: unknown): string | undefined {
  if (size === undefined) return `a tmpfs without a size ${REFUSED} (give it one of at most 1g)`;
  const bytes = sizeInBytes(size);
  if (!(bytes > 0 && bytes <= MAX_TMPFS_BYTES)) return `a tmpfs of ${String(size)} ${REFUSED} (at most 1g)`;
  return undefined;
}

/** The service's `tmpfs: /run:size=64m,mode=1777` (a string or a list): each must carry a size. */
const checkServiceTmpfs: Check = (value, at, { issues }) => {
  eachItem(value, at, (item, itemAt) => {
    const options = String(item).split(":").slice(1).join(":").split(",");
    const size = options.find((option) => option.startsWith("size="))?.slice("size=".length);
    const problem = tmpfsSizeProblem(size);
    if (problem) issues.add(itemAt, problem);
  });
};

const checkTmpfsSize: Check = (value, at, { issues }) => {
  const problem = tmpfsSizeProblem(value);
  if (problem) issues.add(at, problem);
};

const checkSysctls: Check = (value, at, { issues }) => {
  const names: [string, Path][] = Array.isArray(value)
    ? value.map((item, index) => [String(item).split("=")[0]!.trim(), [...at, index]])
    : Object.keys(mappingOf(value)).map((name) => [name, [...at, name]]);
  for (const [name, where] of names) {
    if (!SAFE_SYSCTLS.has(name)) {
      issues.add(where, `sysctl ${name} ${REFUSED} (only ${[...SAFE_SYSCTLS].join(", ")})`);
    }
  }
};

/** Placement constraints that do not pick hosts: any node of the stack's server qualifies. */
const NODE_NEUTRAL_CONSTRAINT = /^node\.platform\.(os|arch)\s*(==|!=)\s*[A-Za-z0-9_.-]+$/;

/**
 * `deploy.placement.constraints` pick the Swarm nodes a service runs on. A tenant's stack runs on
 * the server it names; a constraint on node ids, hostnames, roles or labels would let its file
 * choose other hosts of the swarm (the control plane's manager, another organization's server),
 * which the platform does not map to organizations: only `node.platform.os|arch` are allowed.
 */
const checkPlacement: Check = (value, at, { issues }) => {
  listOf(value).forEach((constraint, index) => {
    if (NODE_NEUTRAL_CONSTRAINT.test(String(constraint).trim())) return;
    issues.add(
      [...at, index],
      `placement constraint "${String(constraint)}" ${REFUSED} (it picks Swarm nodes; only node.platform.os and node.platform.arch)`,
    );
  });
};

/**
 * On the shared platform network a name is an upstream: an alias (or a fixed address) of the
 * file's choosing there could answer for another organization's service. Only aliases under the
 * stack's own `<appName>_` prefix are allowed on it.
 */
const checkPlatformAttachment: Check = (value, at, { issues, platformKeys, context }) => {
  const attachments = asRecord(value);
  if (!attachments) return;
  for (const key of platformKeys) {
    const attachment = asRecord(attachments[key]);
    if (!attachment) continue;
    listOf(attachment.aliases).forEach((alias, index) => {
      if (!String(alias).startsWith(`${context.appName}_`)) {
        issues.add(
          [...at, key, "aliases", index],
          `the alias ${String(alias)} on the platform network ${REFUSED} (aliases there start with ${context.appName}_)`,
        );
      }
    });
    for (const field of ["ipv4_address", "ipv6_address", "link_local_ips", "mac_address"]) {
      if (attachment[field] !== undefined)
        issues.add([...at, key, field], `${field} on the platform network ${REFUSED}`);
    }
  }
};

function checkFile(issues: IssueList, context: TenancyContext, at: Path, key: string, file: string): void {
  const resolved = resolveHostPath(file, context.filesDirectory);
  if (resolved.kind === "files") return;
  issues.add(
    at,
    resolved.kind === "escapes"
      ? `${key} ${file} leaves the stack's files directory`
      : `${key} ${file} ${REFUSED} (a host path; files of the stack go under ../files/)`,
  );
}

/** `env_file` and `label_file`: a path, or a list of paths or `{path}` entries, under the stack's files. */
const checkFileList: Check = (value, at, { issues, context }) => {
  const key = String(at.at(-1));
  eachItem(value, at, (item, itemAt) => {
    const file = typeof item === "string" ? item : String(asRecord(item)?.path ?? "");
    checkFile(issues, context, itemAt, key, file);
  });
};

const checkVolumes: Check = (value, at, { issues, context }) => {
  listOf(value).forEach((item, index) => {
    const itemAt = [...at, index];
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
        issues.add([...itemAt, "type"], `a ${type} mount ${REFUSED}`);
        return;
      } else if (type === "image") {
        checkImage(issues, [...itemAt, "source"], source ?? "");
      } else if (type === "tmpfs" && asRecord(volume.tmpfs)?.size === undefined) {
        // A size given is checked with tmpfs.size.
        issues.add([...itemAt, "tmpfs"], tmpfsSizeProblem(undefined)!);
      }
    }
    if (!bind) return;
    const resolved = resolveHostPath(source ?? "", context.filesDirectory);
    if (resolved.kind === "files") return;
    issues.add(
      [...itemAt, ...(typeof item === "string" ? [] : ["source"])],
      resolved.kind === "escapes"
        ? `bind mount ${source} leaves the stack's files directory`
        : `bind mount of the host path ${source} ${REFUSED}${source?.includes("docker.sock") ? " (the Docker socket is the host)" : ""}; files of the stack go under ../files/`,
    );
  });
};

const checkPorts: Check = (value, at, { issues, context }) => {
  listOf(value).forEach((item, index) => {
    const itemAt = [...at, index];
    const port = parsePort(item);
    if (!port) {
      issues.add(itemAt, `port ${JSON.stringify(item)} cannot be read`);
      return;
    }
    if (port.published.length === 0) return;
    if (port.protocol !== "tcp" && port.protocol !== "udp") {
      issues.add(itemAt, `published ${port.protocol} ports ${REFUSED} (tcp or udp)`);
      return;
    }
    if (port.published.length > MAX_PUBLISHED_RANGE) {
      issues.add(
        itemAt,
        `a range of ${port.published.length} published ports ${REFUSED} (at most ${MAX_PUBLISHED_RANGE})`,
      );
      return;
    }
    for (const published of port.published) {
      const reason = context.tenant.refusePublishedPort(published, port.protocol);
      if (reason !== undefined) {
        issues.add(itemAt, `published port ${published}/${port.protocol} ${REFUSED}: ${reason}`);
        return;
      }
    }
  });
};

// ---- Checks of build keys ----

function posixEscapes(relative: string): boolean {
  let depth = 0;
  for (const segment of relative.split("/")) {
    if (segment === "..") depth--;
    else if (segment !== "." && segment !== "") depth++;
    if (depth < 0) return true;
  }
  return false;
}

/** A relative path that stays inside the directory it is read from (no URL, no host path). */
function isRelativeInside(value: unknown): boolean {
  const text = String(value);
  return (
    !text.startsWith("/") &&
    !text.startsWith("~") &&
    !/^[a-z]+:\/\//i.test(text) &&
    !/:/.test(text) &&
    !posixEscapes(text)
  );
}

const checkBuildContext: Check = (value, at, { issues }) => {
  if (value !== undefined && !isRelativeInside(value)) {
    issues.add(at, `build context ${String(value)} ${REFUSED} (a path inside the stack's sources)`);
  }
};

/** `build: ./web` is the context. */
const checkBuildString: Check = (value, at, scope, owner) => {
  if (typeof value === "string") checkBuildContext(value, [...at, "context"], scope, owner);
};

const checkDockerfilePath: Check = (value, at, { issues }) => {
  if (!isRelativeInside(value)) {
    issues.add(at, `dockerfile ${String(value)} ${REFUSED} (a path inside the build context)`);
  }
};

const checkDockerfileInline: Check = (value, at, { issues }) => {
  for (const problem of dockerfileProblems(String(value), imageReferenceRefusal)) {
    issues.add(at, `dockerfile_inline line ${problem.line}: ${problem.message}`);
  }
};

const checkBuildNetwork: Check = (value, at, { issues }) => {
  if (value !== "default" && value !== "none") issues.add(at, `build.network ${String(value)} ${REFUSED}`);
};

/** `build.tags`: each an image reference under the image rule. */
const checkImageList: Check = (value, at, { issues }) => {
  listOf(value).forEach((item, index) => {
    checkImage(issues, [...at, index], String(item));
  });
};

/** `build.cache_from`: an image (`name:tag`) or `type=registry,ref=<image>`; local and remote caches read the host's files or credentials. */
const checkCacheFrom: Check = (value, at, { issues }) => {
  listOf(value).forEach((item, index) => {
    const text = String(item);
    if (!text.includes("=")) {
      checkImage(issues, [...at, index], text);
      return;
    }
    const fields = Object.fromEntries(
      text.split(",").map((field) => field.split("=", 2) as [string, string]),
    );
    if (fields.type === "registry" && fields.ref !== undefined)
      checkImage(issues, [...at, index], fields.ref);
    else issues.add([...at, index], `cache_from ${text} ${REFUSED} (an image, or type=registry,ref=<image>)`);
  });
};

/**
 * `build.additional_contexts`: a path inside the stack's sources, another service of the file
 * (`service:<name>`) or an image (`docker-image://<image>`, under the image rule).
 */
const checkAdditionalContexts: Check = (value, at, { issues, serviceNames }) => {
  for (const [name, context] of Object.entries(mappingOf(value))) {
    const where = Array.isArray(value)
      ? [...at, value.findIndex((item) => String(item).startsWith(`${name}=`))]
      : [...at, name];
    if (context.startsWith("docker-image://"))
      checkImage(issues, where, context.slice("docker-image://".length));
    else if (context.startsWith("service:")) {
      if (!serviceNames.has(context.slice("service:".length)))
        issues.add(where, `additional context ${context} names a service that is not in this file`);
    } else if (!isRelativeInside(context)) {
      issues.add(
        where,
        `additional context ${context} ${REFUSED} (a path inside the stack's sources, service:<name> or docker-image://<image>)`,
      );
    }
  }
};

// ---- Checks of top-level entries ----

const checkExternalNetwork: Check = (_value, at, { issues, context }, network) => {
  if (!isExternal(network)) return;
  const target = externalName(String(at[1]), network);
  if (target !== context.platformNetwork && !context.tenant.isOwnedNetwork(target)) {
    issues.add(at, `external network ${target} ${REFUSED} (it is not one of this organization's networks)`);
  }
};

const checkNetworkDriver: Check = (value, at, { issues }, network) => {
  if (!isExternal(network) && !NETWORK_DRIVERS.has(String(value))) {
    issues.add(at, `network driver ${String(value)} ${REFUSED} (bridge or overlay)`);
  }
};

const checkExternalVolume: Check = (_value, at, { issues, context }, volume) => {
  if (!isExternal(volume)) return;
  const target = externalName(String(at[1]), volume);
  if (!context.tenant.isOwnedVolume(target)) {
    issues.add(at, `external volume ${target} ${REFUSED} (it is not one of this organization's volumes)`);
  }
};

const checkVolumeDriver: Check = (value, at, { issues }, volume) => {
  if (!isExternal(volume) && String(value) !== "local") {
    issues.add(at, `volume driver ${String(value)} ${REFUSED} (local only)`);
  }
};

const checkExternalEntry: Check = (_value, at, { issues }, entry) => {
  if (isExternal(entry))
    issues.add(at, `external ${String(at[0])} ${REFUSED} (they are not this organization's)`);
};

const checkEntryFile: Check = (value, at, { issues, context }) => {
  checkFile(issues, context, at, `${String(at[0])}.file`, String(value));
};

// ---- The table ----

const ulimitKeys: KeyTable = {
  "*": checked("ulimit values", undefined, { soft: allowed(), hard: allowed() }),
};
const hookRefusal = refused(
  "runs a command in the container around its confinement (privileged, or as root)",
);
const blkioDevice = allowed({ path: allowed(), rate: allowed() });
const updateConfig = allowed({
  delay: allowed(),
  failure_action: allowed(),
  max_failure_ratio: allowed(),
  monitor: allowed(),
  order: allowed(),
  parallelism: allowed(),
});

const serviceKeys: KeyTable = {
  annotations: data,
  attach: allowed(),
  blkio_config: allowed({
    device_read_bps: blkioDevice,
    device_read_iops: blkioDevice,
    device_write_bps: blkioDevice,
    device_write_iops: blkioDevice,
    weight: allowed(),
    weight_device: allowed({ path: allowed(), weight: allowed() }),
  }),
  build: checked("a string is the build context", checkBuildString, {
    additional_contexts: checked(
      "inside the sources, a service of the file, or an image",
      checkAdditionalContexts,
      "any",
    ),
    args: data,
    cache_from: checked("an image, or type=registry,ref=<image>", checkCacheFrom),
    cache_to: refused("writes the build cache to a host path or a registry of the file's choosing"),
    context: checked("a path inside the stack's sources", checkBuildContext),
    dockerfile: checked("a path inside the build context", checkDockerfilePath),
    dockerfile_inline: checked("images and paths of the inline Dockerfile", checkDockerfileInline),
    entitlements: refused("grants the build extra privileges"),
    extra_hosts: data,
    isolation: allowed(),
    labels: data,
    network: checked("default or none", checkBuildNetwork),
    no_cache: allowed(),
    platforms: allowed(),
    privileged: refused("runs the build privileged"),
    provenance: allowed(),
    pull: allowed(),
    sbom: allowed(),
    secrets: refused("hands files or variables of the host to the build"),
    shm_size: allowed(),
    ssh: refused("forwards the host's SSH agent or keys to the build"),
    tags: checked("image references", checkImageList),
    target: allowed(),
    ulimits: checked("ulimit caps", checkUlimits, ulimitKeys),
  }),
  cap_add: refused("adds Linux capabilities to the container"),
  cap_drop: allowed(),
  cgroup: checked("the container's own namespace", namespace("private")),
  cgroup_parent: refused("places the container in a host cgroup of its choosing"),
  command: allowed(),
  configs: allowed({ source: allowed(), target: allowed(), uid: allowed(), gid: allowed(), mode: allowed() }),
  container_name: allowed(),
  cpu_count: allowed(),
  cpu_percent: allowed(),
  cpu_period: allowed(),
  cpu_quota: allowed(),
  cpu_rt_period: refused("asks for real-time scheduling on the shared host"),
  cpu_rt_runtime: refused("asks for real-time scheduling on the shared host"),
  cpu_shares: allowed(),
  cpus: allowed(),
  cpuset: allowed(),
  credential_spec: refused("reads a credential file of the host"),
  depends_on: allowed({ "*": allowed({ condition: allowed(), required: allowed(), restart: allowed() }) }),
  deploy: allowed({
    endpoint_mode: allowed(),
    labels: data,
    mode: allowed(),
    placement: allowed({
      constraints: checked("node.platform.os or node.platform.arch only", checkPlacement),
      max_replicas_per_node: allowed(),
      preferences: allowed({ spread: allowed() }),
    }),
    replicas: allowed(),
    resources: allowed({
      limits: allowed({
        cpus: allowed(),
        memory: allowed(),
        pids: checked(`1 to ${MAX_PIDS_LIMIT}`, checkPidsLimit),
      }),
      reservations: allowed({
        cpus: allowed(),
        memory: allowed(),
        devices: refused("passes host devices into the container"),
        generic_resources: refused("reserves the nodes' generic resources (GPUs and the like)"),
      }),
    }),
    restart_policy: allowed({
      condition: allowed(),
      delay: allowed(),
      max_attempts: allowed(),
      window: allowed(),
    }),
    rollback_config: updateConfig,
    update_config: updateConfig,
  }),
  develop: refused(
    "drives `docker compose watch`, which the platform does not run (its exec hooks run privileged)",
  ),
  device_cgroup_rules: refused("opens host devices to the container"),
  devices: refused("passes host devices into the container"),
  dns: allowed(),
  dns_opt: allowed(),
  dns_search: allowed(),
  domainname: allowed(),
  entrypoint: allowed(),
  env_file: checked("under the stack's files", checkFileList, {
    path: checked("under the stack's files"),
    format: allowed(),
    required: allowed(),
  }),
  environment: data,
  expose: allowed(),
  extends: allowed({ file: refused("reads another file of the host"), service: allowed() }),
  external_links: refused("links containers that are not part of this stack"),
  extra_hosts: data,
  gpus: refused("passes host GPUs into the container"),
  group_add: allowed(),
  healthcheck: allowed({
    disable: allowed(),
    interval: allowed(),
    retries: allowed(),
    start_interval: allowed(),
    start_period: allowed(),
    test: allowed(),
    timeout: allowed(),
  }),
  hostname: allowed(),
  image: checked("image reference: no ID, nothing the platform builds or keeps", checkServiceImage),
  init: allowed(),
  ipc: checked("the container's own namespace", namespace("private", "shareable", "none")),
  isolation: allowed(),
  label_file: checked("under the stack's files", checkFileList),
  labels: data,
  links: allowed(),
  logging: allowed({ driver: checked("json-file, local or none", checkLoggingDriver), options: data }),
  mac_address: allowed(),
  mem_limit: allowed(),
  mem_reservation: allowed(),
  mem_swappiness: allowed(),
  memswap_limit: allowed(),
  models: refused("runs AI models through the host's Docker Model Runner"),
  network_mode: checked("the container's own namespace", namespace("none")),
  networks: checked("aliases and addresses on the platform network", checkPlatformAttachment, {
    "*": allowed({
      aliases: checked("aliases and addresses on the platform network"),
      driver_opts: refused("sets the endpoint's driver options (its interface's sysctls among them)"),
      gw_priority: allowed(),
      interface_name: allowed(),
      ipv4_address: checked("aliases and addresses on the platform network"),
      ipv6_address: checked("aliases and addresses on the platform network"),
      link_local_ips: checked("aliases and addresses on the platform network"),
      mac_address: checked("aliases and addresses on the platform network"),
      priority: allowed(),
    }),
  }),
  oom_kill_disable: refused("keeps the kernel from killing the container when the host runs out of memory"),
  oom_score_adj: checked("0 or more", checkOomScoreAdj),
  pid: checked("the container's own namespace", namespace()),
  pids_limit: checked(`1 to ${MAX_PIDS_LIMIT}`, checkPidsLimit),
  platform: allowed(),
  ports: checked("published ports free for the organization", checkPorts, {
    app_protocol: allowed(),
    host_ip: allowed(),
    mode: allowed(),
    name: allowed(),
    protocol: checked("published ports free for the organization"),
    published: checked("published ports free for the organization"),
    target: allowed(),
  }),
  post_start: hookRefusal,
  pre_stop: hookRefusal,
  privileged: checked("false", checkPrivileged),
  profiles: allowed(),
  provider: refused("makes Compose run a binary or plugin of the host to manage the service"),
  pull_policy: allowed(),
  pull_refresh_after: allowed(),
  read_only: allowed(),
  restart: allowed(),
  runtime: checked("runc", checkRuntime),
  scale: allowed(),
  secrets: allowed({ source: allowed(), target: allowed(), uid: allowed(), gid: allowed(), mode: allowed() }),
  security_opt: checked("no-new-privileges only", checkSecurityOpts),
  shm_size: allowed(),
  stdin_open: allowed(),
  stop_grace_period: allowed(),
  stop_signal: allowed(),
  storage_opt: refused("sets storage driver options of the shared engine"),
  sysctls: checked("safe sysctls only", checkSysctls, "any"),
  tmpfs: checked("a size of at most 1g", checkServiceTmpfs),
  tty: allowed(),
  ulimits: checked("ulimit caps", checkUlimits, ulimitKeys),
  use_api_socket: refused("hands the Docker API to the container"),
  user: allowed(),
  userns_mode: checked("the container's own namespace", namespace()),
  uts: checked("the container's own namespace", namespace()),
  volumes: checked(
    "bind mounts under the stack's files, image mounts under the image rule, tmpfs sized",
    checkVolumes,
    {
      bind: allowed({
        create_host_path: allowed(),
        propagation: allowed(),
        recursive: allowed(),
        selinux: allowed(),
      }),
      consistency: allowed(),
      image: allowed({ subpath: allowed() }),
      read_only: allowed(),
      source: checked("bind mounts under the stack's files, image mounts under the image rule"),
      target: allowed(),
      tmpfs: allowed({ mode: allowed(), size: checked("at most 1g", checkTmpfsSize) }),
      type: checked("no npipe or cluster mounts"),
      volume: allowed({ labels: data, nocopy: allowed(), subpath: allowed() }),
    },
  ),
  volumes_from: checked("services of this file", checkVolumesFrom),
  working_dir: allowed(),
};

const externalKey = (run: Check) => checked("the organization's own", run, { name: allowed() });

/** Every key of a Compose file for a tenant, shaped like the Compose Specification's properties. */
export const TENANT_KEY_RULES: KeyTable = {
  version: allowed(),
  name: allowed(),
  include: refused("reads other files of the host"),
  models: refused("runs AI models through the host's Docker Model Runner"),
  services: allowed({ "*": allowed(serviceKeys) }),
  networks: allowed({
    "*": allowed({
      attachable: allowed(),
      driver: checked("bridge or overlay", checkNetworkDriver),
      driver_opts: refused("sets options of the network driver on the shared host"),
      enable_ipv4: allowed(),
      enable_ipv6: allowed(),
      external: externalKey(checkExternalNetwork),
      internal: allowed(),
      ipam: refused("takes subnets, which are the platform's to allocate"),
      labels: data,
      name: allowed(),
    }),
  }),
  volumes: allowed({
    "*": allowed({
      driver: checked("local", checkVolumeDriver),
      driver_opts: refused("mounts a host path (a local volume with options is a bind mount)"),
      external: externalKey(checkExternalVolume),
      labels: data,
      name: allowed(),
    }),
  }),
  secrets: allowed({
    "*": allowed({
      driver: refused("stores the secret through a plugin of the host"),
      driver_opts: refused("sets options of a secret driver of the host"),
      environment: refused("reads the deploying process's environment"),
      external: externalKey(checkExternalEntry),
      file: checked("under the stack's files", checkEntryFile),
      labels: data,
      name: allowed(),
      template_driver: allowed(),
    }),
  }),
  configs: allowed({
    "*": allowed({
      content: allowed(),
      environment: refused("reads the deploying process's environment"),
      external: externalKey(checkExternalEntry),
      file: checked("under the stack's files", checkEntryFile),
      labels: data,
      name: allowed(),
      template_driver: allowed(),
    }),
  }),
};

/**
 * Walks a mapping (or each mapping of a list) against a table: a refused key is a 400 naming its
 * path, a checked key's check runs, an unclassified key is refused. `x-` keys of fixed mappings
 * are Compose's extension fields, which Compose ignores.
 */
function walk(value: unknown, table: KeyTable, at: Path, scope: Scope): void {
  eachItem(value, at, (item, itemAt) => {
    const record = asRecord(item);
    if (!record) return;
    for (const [key, child] of Object.entries(record)) {
      const keyAt = [...itemAt, key];
      const rule = table[key] ?? table["*"];
      if (!rule) {
        if (!key.startsWith("x-")) {
          scope.issues.add(keyAt, `${keyName(keyAt)} ${REFUSED} (no tenancy rule classifies this key yet)`);
        }
        continue;
      }
      if (rule.verdict === "refused") {
        if (isSet(child)) scope.issues.add(keyAt, `${keyName(keyAt)} ${REFUSED} (it ${rule.why})`);
        continue;
      }
      if (rule.verdict === "checked") rule.run?.(child, keyAt, scope, record);
      if (rule.keys && rule.keys !== "any") walk(child, rule.keys, keyAt, scope);
    }
  });
}

export function checkTenancy(
  document: Record<string, unknown>,
  context: TenancyContext,
  issues: IssueList,
): void {
  const platformKeys = new Set(
    entriesOf(document.networks)
      .filter(
        ([key, entry]) => entry && isExternal(entry) && externalName(key, entry) === context.platformNetwork,
      )
      .map(([key]) => key),
  );
  const serviceNames = new Set(Object.keys(asRecord(document.services) ?? {}));
  walk(document, TENANT_KEY_RULES, [], { issues, context, serviceNames, platformKeys });
}
