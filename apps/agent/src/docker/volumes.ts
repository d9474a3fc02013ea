/**
 * Named volumes of the engine (dockerVolume.*): listing, inspecting, removing, and the files
 * inside one. Every command carries the caller's scope (isInContainerScope): a volume labelled
 * for another organization, an unlabelled one without includeUnmanaged and the platform's own
 * are answered NOT_FOUND in the engine's own words, as a volume that does not exist.
 *
 * Files are read and written as volume backups do (backup/volume.ts): through Docker's archive
 * API on a helper container of the empty helper image that is created and never started, with
 * the volume at /volume. Symbolic links inside the volume are resolved by the engine inside that
 * container (whose root is the empty image), never on the host. Only deletion needs a process:
 * `rm -rf -- <path>` (argv, no shell) in a short-lived container of the tools image
 * (PLATFORM_VOLUME_TOOLS_IMAGE, default busybox) with no network, a read-only root and the
 * volume as its only mount.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { Readable } from "node:stream";
import type {
  ContainerScope,
  InspectVolumeCommand,
  ListVolumesCommand,
  RemoveVolumeCommand,
  Volume,
  VolumeConfig,
  VolumeFileCommand,
  VolumeFileEntry,
  VolumeFileResult,
  VolumeList,
  VolumeRemoved,
} from "@platform/agent-protocol";
import { INTERNAL_LABEL, isInContainerScope } from "@platform/ownership";
import type Docker from "dockerode";
import { ensureHelperImage, HELPER_IMAGE } from "../backup/volume.ts";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus, systemDiskUsage } from "./engine.ts";

/** Docker's volume names (and Dokploy's check): no leading `.` or `-`, no `/`. */
export const VOLUME_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
/** The most of a file read answers, and the most a write takes. */
export const VOLUME_FILE_LIMIT = 512 * 1024;
/** A directory listing stops after this many entries (and says it was truncated). */
export const VOLUME_LIST_LIMIT = 2000;
/** A directory listing stops after reading this much of the directory's archive. */
export const VOLUME_LIST_BYTES_LIMIT = 256 * 1024 * 1024;
const MOUNT = "/volume";
const DEFAULT_TOOLS_IMAGE = "busybox:1.37";

export function requireScope(scope: ContainerScope | undefined): ContainerScope {
  if (!scope?.organizationId) throw new CommandError("INVALID_ARGUMENT", "scope: organizationId is required");
  return scope;
}

export function checkVolumeName(name: string): string {
  if (!name || name.length > 255 || !VOLUME_NAME_PATTERN.test(name)) {
    throw new CommandError("INVALID_ARGUMENT", "volumeName: must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$");
  }
  return name;
}

/**
 * An absolute path inside the volume, normalised (`//`, `.` folded, no trailing `/`). A `..`
 * segment, a NUL or a relative path is refused, never resolved.
 */
export function normaliseVolumePath(raw: string): string {
  if (typeof raw !== "string" || !raw.startsWith("/") || raw.length > 4096) {
    throw new CommandError("INVALID_ARGUMENT", "path: must be an absolute path inside the volume");
  }
  if (raw.includes("\0")) throw new CommandError("INVALID_ARGUMENT", "path: must not contain NUL");
  if (raw.split("/").includes(".."))
    throw new CommandError("INVALID_ARGUMENT", "path: must not contain '..'");
  const normalised = path.posix.normalize(raw);
  return normalised.length > 1 && normalised.endsWith("/") ? normalised.slice(0, -1) : normalised;
}

function notFound(name: string): CommandError {
  // The engine's words for a missing volume: the two answers cannot be told apart.
  return new CommandError("NOT_FOUND", `get ${name}: no such volume`);
}

/** The volume's inspect data when it is inside the scope; NOT_FOUND otherwise. */
async function inspectInScope(docker: Docker, volumeName: string, scope: ContainerScope | undefined) {
  const name = checkVolumeName(volumeName);
  const expected = requireScope(scope);
  let info: Docker.VolumeInspectInfo;
  try {
    info = await docker.getVolume(name).inspect();
  } catch (error) {
    if (engineStatus(error) === 404) throw notFound(name);
    throw error;
  }
  if (!isInContainerScope((info.Labels ?? {}) as Record<string, string>, [info.Name], expected)) {
    throw notFound(name);
  }
  return info;
}

function toVolume(info: Docker.VolumeInspectInfo & { CreatedAt?: string }): Volume {
  const usage = (info as { UsageData?: { Size?: number; RefCount?: number } | null }).UsageData;
  return {
    name: info.Name,
    driver: info.Driver ?? "",
    scope: info.Scope ?? "",
    mountpoint: info.Mountpoint ?? "",
    labels: (info.Labels ?? {}) as Record<string, string>,
    createdAt: info.CreatedAt ?? "",
    sizeBytes: usage?.Size ?? -1,
    refCount: usage?.RefCount ?? -1,
  };
}

export async function listVolumes(docker: Docker, command: ListVolumesCommand): Promise<VolumeList> {
  const scope = requireScope(command.scope);
  const infos = command.withSize
    ? (((await systemDiskUsage(docker)) as { Volumes?: Docker.VolumeInspectInfo[] | null }).Volumes ?? [])
    : ((await docker.listVolumes()).Volumes ?? []);
  const volumes = infos
    .filter((info) => isInContainerScope((info.Labels ?? {}) as Record<string, string>, [info.Name], scope))
    .map(toVolume)
    .sort((a, b) => a.name.localeCompare(b.name));
  return { volumes };
}

export async function inspectVolume(docker: Docker, command: InspectVolumeCommand): Promise<VolumeConfig> {
  const info = await inspectInScope(docker, command.volumeName, command.scope);
  return { inspectJson: JSON.stringify(info) };
}

export async function removeVolume(docker: Docker, command: RemoveVolumeCommand): Promise<VolumeRemoved> {
  const info = await inspectInScope(docker, command.volumeName, command.scope);
  try {
    await docker.getVolume(info.Name).remove();
  } catch (error) {
    if (engineStatus(error) === 409) {
      throw new CommandError(
        "FAILED_PRECONDITION",
        `the volume ${info.Name} is in use: ${engineMessage(error)}`,
      );
    }
    if (engineStatus(error) === 404) throw notFound(info.Name);
    throw error;
  }
  return {};
}

// ---- files -----------------------------------------------------------------------------------

async function loadTar() {
  return import("tar");
}

/** A created, never started container of the empty helper image with the volume at /volume. */
async function helperContainer(docker: Docker, volumeName: string, readOnly: boolean) {
  await ensureHelperImage(docker);
  return docker.createContainer({
    name: `platform-volume-files-${randomBytes(6).toString("hex")}`,
    Image: HELPER_IMAGE,
    Cmd: ["none"],
    Labels: { [INTERNAL_LABEL]: "volume-files" },
    HostConfig: {
      NetworkMode: "none",
      Mounts: [{ Type: "volume", Source: volumeName, Target: MOUNT, ReadOnly: readOnly }],
    },
  });
}

interface TarEntryHeader {
  path: string;
  type: string;
  size: number;
  mode?: number;
  uid?: number;
  gid?: number;
}

/**
 * Reads the archive of `target` in the helper, handing each entry to `onEntry` (which returns
 * false to stop early). Answers undefined when the path does not exist.
 */
async function walkArchive(
  helper: Docker.Container,
  target: string,
  onEntry: (header: TarEntryHeader, body: Readable) => boolean | Promise<boolean>,
  bytesLimit = Number.POSITIVE_INFINITY,
): Promise<{ stoppedEarly: boolean } | undefined> {
  let archive: Readable;
  try {
    archive = (await helper.getArchive({ path: target })) as unknown as Readable;
  } catch (error) {
    if (engineStatus(error) === 404) return undefined;
    throw error;
  }
  const tar = await loadTar();
  let stoppedEarly = false;
  let read = 0;
  const pending: Promise<unknown>[] = [];
  const parser = new tar.Parser({
    onReadEntry: (entry) => {
      if (stoppedEarly) {
        entry.resume();
        return;
      }
      const header: TarEntryHeader = {
        path: entry.path,
        type: entry.type,
        size: entry.size ?? 0,
        mode: entry.mode,
        uid: entry.uid,
        gid: entry.gid,
      };
      const verdict = Promise.resolve(onEntry(header, entry as unknown as Readable)).then((more) => {
        if (!more) stoppedEarly = true;
      });
      pending.push(verdict);
    },
  });
  try {
    for await (const chunk of archive) {
      read += (chunk as Buffer).length;
      parser.write(chunk as Buffer);
      // Not waiting for the entries' handlers here: a handler reading an entry's body needs the
      // chunks that follow.
      if (stoppedEarly || read > bytesLimit) {
        stoppedEarly = true;
        break;
      }
    }
    if (!stoppedEarly) parser.end();
    await Promise.all(pending);
  } finally {
    archive.destroy();
  }
  return { stoppedEarly };
}

const isDirectoryType = (type: string) => type === "Directory";

async function listFiles(helper: Docker.Container, target: string): Promise<VolumeFileResult> {
  const entries = new Map<string, VolumeFileEntry>();
  let first: TarEntryHeader | undefined;
  let tooMany = false;
  const walked = await walkArchive(
    helper,
    target,
    (header, body) => {
      (body as unknown as { resume(): void }).resume();
      if (!first) {
        first = header;
        return isDirectoryType(header.type);
      }
      // The archive of /volume/a names its entries a/..., the root's volume/...
      const inside = header.path.replace(/\/$/, "").split("/").slice(1);
      if (inside.length !== 1 || !inside[0]) return true;
      if (entries.size >= VOLUME_LIST_LIMIT) {
        tooMany = true;
        return false;
      }
      entries.set(inside[0], {
        name: inside[0],
        isDirectory: isDirectoryType(header.type),
        sizeBytes: isDirectoryType(header.type) ? 0 : header.size,
      });
      return true;
    },
    VOLUME_LIST_BYTES_LIMIT,
  );
  if (!walked || !first) throw new CommandError("NOT_FOUND", "path: no such file or directory in the volume");
  if (!isDirectoryType(first.type)) throw new CommandError("INVALID_ARGUMENT", "path: is not a directory");
  const sorted = [...entries.values()].sort((a, b) =>
    a.isDirectory !== b.isDirectory ? (a.isDirectory ? -1 : 1) : a.name.localeCompare(b.name),
  );
  return { entries: sorted, content: new Uint8Array(), truncated: tooMany || walked.stoppedEarly };
}

async function readFile(helper: Docker.Container, target: string): Promise<VolumeFileResult> {
  let header: TarEntryHeader | undefined;
  const chunks: Buffer[] = [];
  let length = 0;
  const walked = await walkArchive(helper, target, async (entry, body) => {
    if (header) {
      (body as unknown as { resume(): void }).resume();
      return false;
    }
    header = entry;
    if (entry.type !== "File" && entry.type !== "OldFile" && entry.type !== "ContiguousFile") {
      (body as unknown as { resume(): void }).resume();
      return false;
    }
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      if (length < VOLUME_FILE_LIMIT + 1) {
        chunks.push(buffer.subarray(0, VOLUME_FILE_LIMIT + 1 - length));
        length += Math.min(buffer.length, VOLUME_FILE_LIMIT + 1 - length);
      }
      if (length > VOLUME_FILE_LIMIT) break;
    }
    return false;
  });
  if (!walked || !header) throw new CommandError("NOT_FOUND", "path: no such file in the volume");
  if (isDirectoryType(header.type)) throw new CommandError("INVALID_ARGUMENT", "path: is a directory");
  if (header.type !== "File" && header.type !== "OldFile" && header.type !== "ContiguousFile") {
    throw new CommandError("INVALID_ARGUMENT", "path: is not a regular file");
  }
  const content = Buffer.concat(chunks);
  return {
    entries: [],
    content: new Uint8Array(content.subarray(0, VOLUME_FILE_LIMIT)),
    truncated: header.size > VOLUME_FILE_LIMIT || content.length > VOLUME_FILE_LIMIT,
  };
}

/** The first entry's header of the archive of `target` (its owner and mode), or undefined. */
async function statOf(helper: Docker.Container, target: string): Promise<TarEntryHeader | undefined> {
  let header: TarEntryHeader | undefined;
  await walkArchive(helper, target, (entry, body) => {
    (body as unknown as { resume(): void }).resume();
    header ??= entry;
    return false;
  });
  return header;
}

async function writeFile(
  helper: Docker.Container,
  target: string,
  content: Uint8Array,
): Promise<VolumeFileResult> {
  if (content.length > VOLUME_FILE_LIMIT) {
    throw new CommandError("INVALID_ARGUMENT", `content: at most ${VOLUME_FILE_LIMIT} bytes`);
  }
  const directory = path.posix.dirname(target);
  const base = path.posix.basename(target);
  if (Buffer.byteLength(base) > 100) {
    throw new CommandError("INVALID_ARGUMENT", "path: the file name must be at most 100 bytes");
  }
  const parent = await statOf(helper, directory);
  if (!parent) throw new CommandError("NOT_FOUND", "path: the directory does not exist in the volume");
  if (!isDirectoryType(parent.type))
    throw new CommandError("INVALID_ARGUMENT", "path: the parent is not a directory");
  const existing = await statOf(helper, target);
  if (existing && isDirectoryType(existing.type)) {
    throw new CommandError("INVALID_ARGUMENT", "path: is a directory");
  }
  // A file keeps its owner and mode; a new one takes its directory's owner.
  const owner = existing ?? parent;
  const tar = await loadTar();
  const header = new tar.Header({
    path: base,
    type: "File",
    mode: existing?.mode ?? 0o644,
    uid: owner.uid ?? 0,
    gid: owner.gid ?? 0,
    size: content.length,
    mtime: new Date(),
  });
  header.encode();
  const padding = (512 - (content.length % 512)) % 512;
  const archive = Buffer.concat([
    header.block as Buffer,
    Buffer.from(content),
    Buffer.alloc(padding),
    Buffer.alloc(1024),
  ]);
  await helper.putArchive(archive, { path: directory });
  return { entries: [], content: new Uint8Array(), truncated: false };
}

/** The image deletion runs in: PLATFORM_VOLUME_TOOLS_IMAGE, else busybox (pulled when missing). */
async function toolsImage(docker: Docker): Promise<string> {
  const image = process.env.PLATFORM_VOLUME_TOOLS_IMAGE?.trim() || DEFAULT_TOOLS_IMAGE;
  try {
    await docker.getImage(image).inspect();
    return image;
  } catch (error) {
    if (engineStatus(error) !== 404) throw error;
  }
  const progress = (await docker.pull(image)) as NodeJS.ReadableStream;
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(progress, (error: Error | null) => (error ? reject(error) : resolve()));
  });
  return image;
}

async function deleteFile(docker: Docker, volumeName: string, target: string): Promise<VolumeFileResult> {
  if (target === MOUNT)
    throw new CommandError("INVALID_ARGUMENT", "path: the volume's root cannot be deleted");
  const container = await docker.createContainer({
    name: `platform-volume-files-${randomBytes(6).toString("hex")}`,
    Image: await toolsImage(docker),
    Entrypoint: ["rm"],
    Cmd: ["-rf", "--", target],
    Labels: { [INTERNAL_LABEL]: "volume-files" },
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: ["DAC_OVERRIDE", "FOWNER"],
      SecurityOpt: ["no-new-privileges"],
      Mounts: [{ Type: "volume", Source: volumeName, Target: MOUNT }],
    },
  });
  try {
    await container.start();
    const exit = (await container.wait()) as { StatusCode?: number };
    if (exit.StatusCode !== 0) {
      throw new CommandError("FAILED", `the file could not be deleted (rm exited with ${exit.StatusCode})`);
    }
  } finally {
    await container.remove({ force: true }).catch(() => {});
  }
  return { entries: [], content: new Uint8Array(), truncated: false };
}

export async function volumeFile(docker: Docker, command: VolumeFileCommand): Promise<VolumeFileResult> {
  const relative = normaliseVolumePath(command.path);
  const target = relative === "/" ? MOUNT : `${MOUNT}${relative}`;
  const operation = command.operation;
  if (operation === "OPERATION_UNSPECIFIED") {
    throw new CommandError("INVALID_ARGUMENT", "operation: LIST, READ, WRITE or DELETE");
  }
  if ((operation === "WRITE" || operation === "DELETE") && relative === "/") {
    throw new CommandError("INVALID_ARGUMENT", "path: the volume's root cannot be written or deleted");
  }
  const info = await inspectInScope(docker, command.volumeName, command.scope);
  if (operation === "DELETE") return deleteFile(docker, info.Name, target);
  const helper = await helperContainer(docker, info.Name, operation !== "WRITE");
  try {
    if (operation === "LIST") return await listFiles(helper, target);
    if (operation === "READ") return await readFile(helper, target);
    return await writeFile(helper, target, command.content);
  } catch (error) {
    if (error instanceof CommandError) throw error;
    if (engineStatus(error) === 404) throw new CommandError("NOT_FOUND", "path: not found in the volume");
    if (engineStatus(error) === 400 || engineStatus(error) === 403) {
      throw new CommandError("INVALID_ARGUMENT", `path: ${engineMessage(error)}`);
    }
    throw error;
  } finally {
    await helper.remove({ force: true }).catch(() => {});
  }
}
