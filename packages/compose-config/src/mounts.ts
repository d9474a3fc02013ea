/**
 * Reading the values of a Compose file that name host resources: bind-mount sources (short and
 * long volume syntax), Dokploy-style `../files/<x>` sources, and published ports (short syntax
 * with host IPs and ranges, long syntax).
 */
import { posix } from "node:path";

/** Where a path-like source points. */
export type HostPath =
  /** Under the stack's files directory (`../files/<x>` or the directory's absolute path): `absolute` is where. */
  | { kind: "files"; absolute: string }
  /** Written as `../files/...` but leaving the files directory once `..` is resolved. */
  | { kind: "escapes"; absolute: string }
  /** Any other host path (absolute, `./`, `~`). */
  | { kind: "host" };

const FILES_PREFIX = "../files";

/** True when a volume source is a path on the host (Compose's rule: it starts with `.`, `/` or `~`). */
export function isHostPathSource(source: string): boolean {
  return /^[./~]/.test(source) || source.includes("/") || source.includes("\\") || /^[A-Za-z]:/.test(source);
}

function inside(directory: string, candidate: string): boolean {
  return candidate === directory || candidate.startsWith(`${directory}/`);
}

/**
 * Resolves a host path as the platform does: `../files/<x>` (the layout Dokploy's templates use)
 * lands under `filesDirectory` and must stay there once `..` segments are resolved; any other
 * relative or absolute path is a host path (unless it already lies inside `filesDirectory`).
 */
export function resolveHostPath(source: string, filesDirectory: string): HostPath {
  const directory = posix.resolve("/", filesDirectory);
  if (source.startsWith("/")) {
    const absolute = posix.resolve(source);
    return inside(directory, absolute) ? { kind: "files", absolute } : { kind: "host" };
  }
  const normalized = source.startsWith("./") ? source.slice(2) : source;
  if (normalized === FILES_PREFIX || normalized.startsWith(`${FILES_PREFIX}/`)) {
    const absolute = posix.resolve(directory, `.${normalized.slice(FILES_PREFIX.length)}`);
    return inside(directory, absolute) ? { kind: "files", absolute } : { kind: "escapes", absolute };
  }
  return { kind: "host" };
}

/** A service volume in short syntax, split as Compose splits it. */
export interface ShortVolume {
  source?: string;
  target: string;
  mode?: string;
}

export function parseShortVolume(value: string): ShortVolume {
  const parts = value.split(":");
  if (parts.length === 1) return { target: value };
  const [source, target, ...mode] = parts;
  return { source, target: target ?? "", ...(mode.length > 0 ? { mode: mode.join(":") } : {}) };
}

export function formatShortVolume(volume: ShortVolume): string {
  return [volume.source, volume.target, volume.mode].filter((part) => part !== undefined).join(":");
}

/** One published-port entry read from either syntax. */
export interface PortEntry {
  target: string;
  /** The published host ports (a range expanded); empty when Docker picks one. */
  published: number[];
  /** The text of the published part, as written ("8080", "8000-8010"); undefined when absent. */
  publishedText?: string;
  protocol: string;
  hostIp?: string;
}

/** Parses a published range or port ("8080", "8000-8010"); undefined when malformed. */
export function parsePortRange(text: string): number[] | undefined {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  if (!match) return undefined;
  const start = Number(match[1]);
  const end = match[2] === undefined ? start : Number(match[2]);
  if (start < 1 || end > 65535 || end < start) return undefined;
  if (end - start >= 65535) return undefined;
  return Array.from({ length: end - start + 1 }, (_, index) => start + index);
}

/**
 * Reads a `ports` item: a number (target only), the short string syntax
 * `[HOST_IP:][PUBLISHED[-RANGE]:]TARGET[-RANGE][/PROTOCOL]` (IPv6 host IPs in brackets) or the long
 * syntax object. Undefined when it cannot be read.
 */
export function parsePort(item: unknown): PortEntry | undefined {
  if (typeof item === "number") return { target: String(item), published: [], protocol: "tcp" };
  if (typeof item === "string") {
    let text = item.trim();
    let protocol = "tcp";
    const slash = text.lastIndexOf("/");
    if (slash !== -1) {
      protocol = text.slice(slash + 1).toLowerCase();
      text = text.slice(0, slash);
    }
    let hostIp: string | undefined;
    const bracket = /^\[([^\]]*)\]:(.*)$/.exec(text);
    if (bracket) {
      hostIp = bracket[1];
      text = bracket[2]!;
    }
    const parts = text.split(":");
    const target = parts.pop() ?? "";
    const publishedText = parts.length > 0 ? parts.pop() : undefined;
    if (parts.length > 0) {
      if (hostIp !== undefined) return undefined;
      hostIp = parts.join(":");
    }
    if (!/^\d+(-\d+)?$/.test(target)) return undefined;
    if (publishedText === undefined || publishedText === "") {
      return { target, published: [], protocol, ...(hostIp !== undefined ? { hostIp } : {}) };
    }
    const published = parsePortRange(publishedText);
    if (!published) return undefined;
    return { target, published, publishedText, protocol, ...(hostIp !== undefined ? { hostIp } : {}) };
  }
  if (item && typeof item === "object" && !Array.isArray(item)) {
    const port = item as Record<string, unknown>;
    const protocol = typeof port.protocol === "string" ? port.protocol.toLowerCase() : "tcp";
    const hostIp = typeof port.host_ip === "string" ? port.host_ip : undefined;
    const target = String(port.target ?? "");
    if (port.published === undefined || port.published === null || port.published === "") {
      return { target, published: [], protocol, ...(hostIp !== undefined ? { hostIp } : {}) };
    }
    const publishedText = String(port.published);
    const published = parsePortRange(publishedText);
    if (!published) return undefined;
    return { target, published, publishedText, protocol, ...(hostIp !== undefined ? { hostIp } : {}) };
  }
  return undefined;
}
