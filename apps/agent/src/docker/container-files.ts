/**
 * Files of one container, only through Docker's archive API (GET/PUT /containers/{id}/archive):
 * no shell and no exec, so nothing of a path is ever run, and the engine resolves every path
 * (and every symbolic link on it) inside the container's own root filesystem.
 *
 * - The container must be inside the command's scope (inspectInScope: NOT_FOUND otherwise, as
 *   for a missing container), and is then addressed by the full id that was checked.
 * - A path is made absolute and normalised here first: `.` and empty segments dropped, a `..`
 *   segment, NUL or another control character refused (INVALID_ARGUMENT).
 * - LIST reads the directory's tar only for its headers (file contents are skipped as they
 *   stream by) and stops after MAX_LIST_SCAN_BYTES or MAX_LIST_ENTRIES: the answer is then
 *   marked `partial`.
 * - READ answers at most MAX_TEXT_FILE_BYTES of a regular file, marked `truncated` when the file
 *   is longer; a file holding NUL bytes or invalid UTF-8 is binary and refused (INVALID_ARGUMENT),
 *   as are a directory and a symbolic link.
 * - WRITE takes at most MAX_WRITE_BYTES; it replaces the file keeping its owner and mode (a new
 *   one is root's, 0644). Its directory must exist.
 * - DELETE is the one operation the archive API cannot do: it runs `rm -rf -- <path>` as root in
 *   the running container through the exec API, as an argument vector (no shell parses the path,
 *   which reaches rm as one argument after `--`). `/`, the top-level system directories and
 *   anything under /proc, /sys or /dev are refused first; a missing path is NOT_FOUND; a stopped
 *   container or one without `rm` (distroless) is FAILED_PRECONDITION.
 */
import type { IncomingMessage } from "node:http";
import { posix } from "node:path";
import {
  type ContainerFileEntry,
  type ContainerFilesCommand,
  type ContainerFilesResult,
  undeletablePathReason,
} from "@platform/agent-protocol";
import type Docker from "dockerode";
import { Header, Pax } from "tar";
import { CommandError } from "../command-error.ts";
import { inspectInScope } from "./containers.ts";
import { execIn } from "./exec.ts";

/** The most READ answers of a file (Dokploy's CONTAINER_FILE_SIZE_LIMIT, 512 KiB). */
export const MAX_TEXT_FILE_BYTES = 512 * 1024;
/** The largest file WRITE takes (one NATS message carries it). */
export const MAX_WRITE_BYTES = 512 * 1024;
/** LIST stops after streaming this much of the directory's tar. */
export const MAX_LIST_SCAN_BYTES = 256 * 1024 * 1024;
/** LIST answers at most this many entries. */
export const MAX_LIST_ENTRIES = 10_000;
/** The longest path accepted. */
export const MAX_PATH_LENGTH = 4096;

/**
 * `path` as an absolute path inside the container's root: `.` and empty segments dropped; `..`,
 * NUL and other control characters refused.
 */
export function normaliseContainerPath(path: string): string {
  if (typeof path !== "string" || path.trim() === "") {
    throw new CommandError("INVALID_ARGUMENT", "path is required");
  }
  if (path.length > MAX_PATH_LENGTH) {
    throw new CommandError("INVALID_ARGUMENT", `path: at most ${MAX_PATH_LENGTH} characters`);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(path)) {
    throw new CommandError("INVALID_ARGUMENT", "path: NUL and control characters are not allowed");
  }
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) {
    throw new CommandError("INVALID_ARGUMENT", "path: a '..' segment is not allowed");
  }
  return `/${segments.join("/")}`;
}

interface TarEntry {
  name: string;
  /** The tar type flag: "0" a file, "5" a directory, "2" a symbolic link, … */
  type: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  linkName: string;
}

function field(block: Buffer, offset: number, length: number): string {
  const raw = block.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString("utf8");
}

function octal(block: Buffer, offset: number, length: number): number {
  const text = field(block, offset, length).trim();
  return text === "" ? 0 : Number.parseInt(text, 8);
}

/** PAX records (`<length> key=value\n`) of an extended header. */
function paxRecords(content: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number.parseInt(content.subarray(at, space).toString("ascii"), 10);
    if (!(length > 0)) break;
    const record = content.subarray(space + 1, at + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    if (equals > 0) records[record.slice(0, equals)] = record.slice(equals + 1);
    at += length;
  }
  return records;
}

/**
 * Reads a tar stream entry by entry: `visit` gets each entry with at most `keepBytes` of its
 * content and answers true to stop. Contents past that are skipped as they stream by. Stops (and
 * answers `capped`) after `maxBytes` of the stream.
 */
async function scanTar(
  stream: AsyncIterable<Buffer>,
  options: { keepBytes: number; maxBytes: number },
  visit: (entry: TarEntry, content: Buffer) => boolean,
): Promise<{ capped: boolean }> {
  let buffer: Buffer = Buffer.alloc(0);
  let streamed = 0;
  let current: {
    entry: TarEntry;
    remaining: number;
    padding: number;
    kept: Buffer[];
    keptBytes: number;
    keepLimit: number;
  } | null = null;
  let skip = 0;
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  for await (const chunk of stream) {
    streamed += chunk.length;
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      if (skip > 0) {
        const skipped = Math.min(skip, buffer.length);
        buffer = buffer.subarray(skipped);
        skip -= skipped;
        if (skip > 0) break;
      }
      if (current) {
        const take = Math.min(current.remaining, buffer.length);
        const keep = Math.min(take, Math.max(0, current.keepLimit - current.keptBytes));
        if (keep > 0) {
          current.kept.push(Buffer.from(buffer.subarray(0, keep)));
          current.keptBytes += keep;
        }
        buffer = buffer.subarray(take);
        current.remaining -= take;
        if (current.remaining > 0) break;
        const { entry, kept, padding } = current;
        current = null;
        skip = padding;
        const content = Buffer.concat(kept);
        if (entry.type === "x") {
          pax = paxRecords(content);
          continue;
        }
        if (entry.type === "g") continue;
        if (entry.type === "L") {
          longName = field(content, 0, content.length);
          continue;
        }
        if (visit(entry, content)) return { capped: false };
        continue;
      }
      if (buffer.length < 512) break;
      const block = buffer.subarray(0, 512);
      buffer = buffer.subarray(512);
      if (block.every((byte) => byte === 0)) return { capped: false };
      const prefix = field(block, 345, 155);
      const shortName = field(block, 0, 100);
      const special = ["x", "g", "L"].includes(field(block, 156, 1));
      const entry: TarEntry = {
        name: special ? "" : (pax.path ?? longName ?? (prefix ? `${prefix}/${shortName}` : shortName)),
        type: field(block, 156, 1) || "0",
        size: pax.size !== undefined && !special ? Number(pax.size) : octal(block, 124, 12),
        mode: octal(block, 100, 8),
        uid: octal(block, 108, 8),
        gid: octal(block, 116, 8),
        linkName: special ? "" : (pax.linkpath ?? field(block, 157, 100)),
      };
      if (!special) {
        pax = {};
        longName = undefined;
      }
      current = {
        entry,
        remaining: entry.size,
        padding: (512 - (entry.size % 512)) % 512,
        kept: [],
        keptBytes: 0,
        // Extended headers are kept whole (they are small: their names and sizes).
        keepLimit: special ? 1024 * 1024 : options.keepBytes,
      };
    }
    if (streamed > options.maxBytes) return { capped: true };
  }
  return { capped: false };
}

/** Docker's stat of the archived path (the X-Docker-Container-Path-Stat header). */
interface PathStat {
  name: string;
  size: number;
  mode: number;
  linkTarget: string;
}

/** Go's os.ModeDir and os.ModeSymlink bits in the stat's mode. */
const MODE_DIR = 2 ** 31;
const MODE_SYMLINK = 2 ** 27;

function pathStatOf(archive: IncomingMessage): PathStat | undefined {
  const header = archive.headers["x-docker-container-path-stat"];
  if (typeof header !== "string") return undefined;
  try {
    return JSON.parse(Buffer.from(header, "base64").toString("utf8")) as PathStat;
  } catch {
    return undefined;
  }
}

/** The archive of `path`; a missing path is NOT_FOUND naming it (not the engine's words). */
async function archiveOf(container: Docker.Container, path: string): Promise<IncomingMessage> {
  try {
    return (await container.getArchive({ path })) as unknown as IncomingMessage;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) {
      throw new CommandError("NOT_FOUND", `no such file or directory in the container: ${path}`);
    }
    throw error;
  }
}

function isDirectoryMode(mode: number): boolean {
  // The mode is a uint32 in the JSON; `&` would take it as a signed 32-bit number.
  return Math.floor(mode / MODE_DIR) % 2 === 1;
}

async function listDirectory(container: Docker.Container, path: string): Promise<ContainerFilesResult> {
  const archive = await archiveOf(container, path);
  const stat = pathStatOf(archive);
  if (stat && !isDirectoryMode(stat.mode)) {
    archive.destroy();
    throw new CommandError("INVALID_ARGUMENT", `path: ${path} is not a directory`);
  }
  const entries: ContainerFileEntry[] = [];
  let partial = false;
  // The archive of `/` names its entries `/<child>…`; any other's `<base>/<child>…`.
  const depth = path === "/" ? 1 : 2;
  try {
    const { capped } = await scanTar(archive, { keepBytes: 0, maxBytes: MAX_LIST_SCAN_BYTES }, (entry) => {
      const parts = entry.name.split("/").filter((part) => part !== "" && part !== ".");
      if (parts.length !== depth) return false;
      entries.push({ name: parts[depth - 1] ?? "", isDirectory: entry.type === "5" });
      if (entries.length >= MAX_LIST_ENTRIES) {
        partial = true;
        return true;
      }
      return false;
    });
    partial ||= capped;
  } finally {
    archive.destroy();
  }
  // Directories first, then by name (Dokploy's order).
  entries.sort((a, b) =>
    a.isDirectory !== b.isDirectory ? (a.isDirectory ? -1 : 1) : a.name.localeCompare(b.name),
  );
  return { entries, content: new Uint8Array(), truncated: false, partial };
}

/** The longest prefix of `bytes` that does not end inside a UTF-8 sequence. */
function wholeCharacters(bytes: Buffer): Buffer {
  let end = bytes.length;
  // Step back over continuation bytes (10xxxxxx) to the lead byte of the last sequence.
  let at = end - 1;
  while (at >= 0 && at > end - 4 && ((bytes[at] ?? 0) & 0xc0) === 0x80) at -= 1;
  if (at >= 0) {
    const lead = bytes[at] ?? 0;
    const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (at + length > end) end = at;
  }
  return bytes.subarray(0, end);
}

async function readFile(container: Docker.Container, path: string): Promise<ContainerFilesResult> {
  const archive = await archiveOf(container, path);
  const stat = pathStatOf(archive);
  if (stat && isDirectoryMode(stat.mode)) {
    archive.destroy();
    throw new CommandError("INVALID_ARGUMENT", `path: ${path} is a directory`);
  }
  let file: { entry: TarEntry; content: Buffer } | undefined;
  try {
    await scanTar(
      archive,
      { keepBytes: MAX_TEXT_FILE_BYTES + 1, maxBytes: Number.MAX_SAFE_INTEGER },
      (entry, content) => {
        file = { entry, content };
        return true;
      },
    );
  } finally {
    archive.destroy();
  }
  if (!file) throw new CommandError("NOT_FOUND", `no such file in the container: ${path}`);
  if (file.entry.type === "2") {
    throw new CommandError(
      "INVALID_ARGUMENT",
      `path: ${path} is a symbolic link to ${file.entry.linkName}; read its target`,
    );
  }
  if (file.entry.type !== "0" && file.entry.type !== "7") {
    throw new CommandError("INVALID_ARGUMENT", `path: ${path} is not a regular file`);
  }
  const truncated = file.entry.size > MAX_TEXT_FILE_BYTES;
  const bytes = truncated ? wholeCharacters(file.content.subarray(0, MAX_TEXT_FILE_BYTES)) : file.content;
  const binary = () =>
    new CommandError("INVALID_ARGUMENT", `path: ${path} is a binary file; only text files can be read`);
  if (bytes.includes(0)) throw binary();
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw binary();
  }
  return { entries: [], content: bytes, truncated, partial: false };
}

/** The owner and mode of an existing file at `path`, if there is one. */
async function existingFile(container: Docker.Container, path: string): Promise<TarEntry | undefined> {
  let archive: IncomingMessage;
  try {
    archive = (await container.getArchive({ path })) as unknown as IncomingMessage;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
  const stat = pathStatOf(archive);
  let found: TarEntry | undefined;
  try {
    if (stat && (isDirectoryMode(stat.mode) || Math.floor(stat.mode / MODE_SYMLINK) % 2 === 1)) {
      throw new CommandError(
        "INVALID_ARGUMENT",
        `path: ${path} is ${isDirectoryMode(stat.mode) ? "a directory" : "a symbolic link"}`,
      );
    }
    await scanTar(archive, { keepBytes: 0, maxBytes: Number.MAX_SAFE_INTEGER }, (entry) => {
      found = entry;
      return true;
    });
  } finally {
    archive.destroy();
  }
  return found;
}

/** A tar holding one regular file `name` with these bytes, owner and mode. */
function singleFileTar(
  name: string,
  content: Uint8Array,
  owner: { mode: number; uid: number; gid: number },
): Buffer {
  const mtime = new Date();
  const header = new Header({
    path: name,
    mode: owner.mode,
    uid: owner.uid,
    gid: owner.gid,
    size: content.length,
    mtime,
    type: "File",
  });
  const blocks: Buffer[] = [];
  // A name too long for the ustar header goes in a PAX header before it.
  if (header.encode()) blocks.push(new Pax({ path: name, mtime }).encode());
  blocks.push(header.block as Buffer);
  blocks.push(Buffer.from(content));
  blocks.push(Buffer.alloc((512 - (content.length % 512)) % 512));
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

async function writeFile(
  container: Docker.Container,
  path: string,
  content: Uint8Array,
): Promise<ContainerFilesResult> {
  if (path === "/") throw new CommandError("INVALID_ARGUMENT", "path: / is a directory");
  if (content.length > MAX_WRITE_BYTES) {
    throw new CommandError("INVALID_ARGUMENT", `content: at most ${MAX_WRITE_BYTES} bytes`);
  }
  const existing = await existingFile(container, path);
  const owner = existing
    ? { mode: existing.mode & 0o7777, uid: existing.uid, gid: existing.gid }
    : { mode: 0o644, uid: 0, gid: 0 };
  const tar = singleFileTar(posix.basename(path), content, owner);
  const directory = posix.dirname(path);
  try {
    await container.putArchive(tar, { path: directory, noOverwriteDirNonDir: "true" });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) {
      throw new CommandError("NOT_FOUND", `no such directory in the container: ${directory}`);
    }
    throw error;
  }
  return { entries: [], content: new Uint8Array(), truncated: false, partial: false };
}

/** Refuses `/`, a protected top-level directory and anything under /proc, /sys, /dev. */
export function checkDeletablePath(path: string): void {
  const reason = undeletablePathReason(path);
  if (reason) throw new CommandError("INVALID_ARGUMENT", `path: ${reason}`);
}

async function deletePath(
  docker: Docker,
  container: Docker.Container,
  running: boolean,
  path: string,
): Promise<ContainerFilesResult> {
  checkDeletablePath(path);
  if (!running) {
    throw new CommandError("FAILED_PRECONDITION", "the container is not running: start it to delete a file");
  }
  try {
    await container.infoArchive({ path });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) {
      throw new CommandError("NOT_FOUND", `no such file or directory in the container: ${path}`);
    }
    throw error;
  }
  let outcome: Awaited<ReturnType<typeof execIn>>;
  try {
    // An argument vector: the path is rm's one operand after `--`, whatever characters it holds.
    outcome = await execIn(docker, container.id, ["rm", "-rf", "--", path], { user: "0" });
  } catch (error) {
    const message = (error as Error).message ?? "";
    if ((error as { statusCode?: number }).statusCode === 409) {
      throw new CommandError(
        "FAILED_PRECONDITION",
        "the container is not running: start it to delete a file",
      );
    }
    if (/executable file not found|no such file or directory/i.test(message)) {
      throw new CommandError("FAILED_PRECONDITION", "the container has no rm: its files cannot be deleted");
    }
    throw error;
  }
  if (
    outcome.exitCode === 126 ||
    outcome.exitCode === 127 ||
    /executable file not found/i.test(outcome.output)
  ) {
    throw new CommandError("FAILED_PRECONDITION", "the container has no rm: its files cannot be deleted");
  }
  if (outcome.exitCode !== 0) {
    throw new CommandError(
      "FAILED",
      `rm failed (exit ${outcome.exitCode}): ${outcome.output.trim().slice(0, 500)}`,
    );
  }
  return { entries: [], content: new Uint8Array(), truncated: false, partial: false };
}

export async function containerFiles(
  docker: Docker,
  command: ContainerFilesCommand,
): Promise<ContainerFilesResult> {
  const path = normaliseContainerPath(command.path);
  const { info } = await inspectInScope(docker, command.containerId, command.scope);
  const container = docker.getContainer(info.Id);
  switch (command.operation) {
    case "LIST":
      return listDirectory(container, path);
    case "READ":
      return readFile(container, path);
    case "WRITE":
      return writeFile(container, path, command.content ?? new Uint8Array());
    case "DELETE":
      return deletePath(docker, container, info.State?.Running === true, path);
    default:
      throw new CommandError("INVALID_ARGUMENT", "operation: one of LIST, READ, WRITE, DELETE is required");
  }
}
