/**
 * Archive sources (drop uploads): downloaded with a size cap and a SHA-256 check, then unpacked
 * with `tar` / `yauzl` after every entry has been checked: no absolute path, no "..", no device
 * or FIFO, no link leading outside, entry count and total size capped. Anything wrong refuses
 * the whole archive before a single file is written.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { lstat, mkdir, readdir, readlink, realpath, rm, symlink } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import type { ArchiveSource } from "@platform/agent-protocol";
import type yauzl from "yauzl";
import { CommandError } from "../command-error.ts";
import { isWithin } from "../path-within.ts";
import { cancelled } from "./jobs.ts";
import type { LogStream } from "./log-stream.ts";
import { invalid, normaliseRelativePath, type RelativePathProblem } from "./validate.ts";

export interface ArchiveLimits {
  /** Bytes of the downloaded archive. */
  maxDownloadBytes: number;
  /** Sum of the unpacked entries' sizes. */
  maxUnpackedBytes: number;
  maxEntries: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxDownloadBytes: 512 * 1024 * 1024,
  maxUnpackedBytes: 2 * 1024 * 1024 * 1024,
  maxEntries: 100_000,
};

export function checkArchiveSource(source: ArchiveSource): void {
  if (source.format !== "tar.gz" && source.format !== "zip")
    throw invalid("archive.format", "must be tar.gz or zip");
  if (!/^[a-fA-F0-9]{64}$/.test(source.sha256 ?? ""))
    throw invalid("archive.sha256", "must be a hex SHA-256");
  let url: URL;
  try {
    url = new URL(source.url);
  } catch {
    throw invalid("archive.url", "is not a valid URL");
  }
  if (!["http:", "https:", "file:"].includes(url.protocol))
    throw invalid("archive.url", "must be http(s):// or file://");
}

/** Downloads (or copies, for file://) the archive to `target`, checking size and SHA-256. */
export async function fetchArchive(
  source: ArchiveSource,
  target: string,
  limits: ArchiveLimits,
  signal: AbortSignal,
): Promise<void> {
  const url = new URL(source.url);
  const hash = createHash("sha256");
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > limits.maxDownloadBytes) {
        callback(new CommandError("FAILED", `the archive is larger than ${limits.maxDownloadBytes} bytes`));
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  try {
    if (url.protocol === "file:") {
      await pipeline(
        createReadStream(fileURLToPath(url)),
        meter,
        createWriteStream(target, { mode: 0o600 }),
        { signal },
      );
    } else {
      const response = await fetch(url, { signal, redirect: "error" });
      if (!response.ok || !response.body) {
        throw new CommandError("FAILED", `downloading the archive failed: HTTP ${response.status}`);
      }
      const declared = Number(response.headers.get("content-length") ?? 0);
      if (declared > limits.maxDownloadBytes) {
        throw new CommandError("FAILED", `the archive is larger than ${limits.maxDownloadBytes} bytes`);
      }
      await pipeline(response.body, meter, createWriteStream(target, { mode: 0o600 }), { signal });
    }
  } catch (error) {
    if (signal.aborted) throw cancelled();
    if (error instanceof CommandError) throw error;
    throw new CommandError("FAILED", `downloading the archive failed: ${(error as Error).message}`);
  }
  const digest = hash.digest("hex");
  if (digest !== source.sha256.toLowerCase()) {
    throw new CommandError("FAILED", "the archive does not match its SHA-256");
  }
}

interface EntryInfo {
  path: string;
  kind: "file" | "directory" | "symlink" | "hardlink" | "other";
  size: number;
  linkTarget?: string;
}

function refused(entryPath: string, why: string): CommandError {
  return new CommandError(
    "INVALID_ARGUMENT",
    `archive: entry ${JSON.stringify(entryPath.slice(0, 200))} ${why}`,
  );
}

const ENTRY_PATH_REFUSALS: Record<RelativePathProblem, string> = {
  "control characters": "has control characters in its name",
  absolute: "is absolute",
  parent: "contains '..'",
};

/** The entry's path, normalised, or a refusal when it could leave the directory. */
function safeEntryPath(raw: string): string {
  return normaliseRelativePath(raw, (problem) => refused(raw, ENTRY_PATH_REFUSALS[problem]));
}

function checkEntries(entries: EntryInfo[], limits: ArchiveLimits): void {
  if (entries.length > limits.maxEntries) {
    throw new CommandError("INVALID_ARGUMENT", `archive: more than ${limits.maxEntries} entries`);
  }
  let total = 0;
  const symlinks = new Set(
    entries.filter((entry) => entry.kind === "symlink").map((entry) => safeEntryPath(entry.path)),
  );
  // Nothing may be written, or hard-linked, through a symlink of the archive: a chain of links
  // can lead outside even when each target looks harmless on its own.
  const throughSymlink = (entryPath: string) => {
    const parts = entryPath.split("/");
    for (let end = 1; end < parts.length; end++) if (symlinks.has(parts.slice(0, end).join("/"))) return true;
    return false;
  };
  for (const entry of entries) {
    const entryPath = safeEntryPath(entry.path);
    if (throughSymlink(entryPath)) throw refused(entry.path, "lies under a symlink of the archive");
    total += entry.size;
    if (total > limits.maxUnpackedBytes) {
      throw new CommandError(
        "INVALID_ARGUMENT",
        `archive: unpacks to more than ${limits.maxUnpackedBytes} bytes`,
      );
    }
    if (entry.kind === "other") throw refused(entry.path, "is a device, FIFO or other special file");
    if (entry.kind === "symlink" || entry.kind === "hardlink") {
      const target = entry.linkTarget ?? "";
      if (!target || target.startsWith("/") || /^[A-Za-z]:/.test(target))
        throw refused(entry.path, "links to an absolute path");
      // Symlinks are relative to their directory, hard links to the archive root.
      const base = entry.kind === "symlink" ? path.posix.dirname(entryPath) : ".";
      const resolved = path.posix.normalize(path.posix.join(base, target));
      if (resolved === ".." || resolved.startsWith("../"))
        throw refused(entry.path, "links outside the archive");
      if (entry.kind === "hardlink" && (symlinks.has(resolved) || throughSymlink(resolved))) {
        throw refused(entry.path, "hard-links through a symlink");
      }
    }
  }
}

function tarKind(type: string): EntryInfo["kind"] {
  if (type === "File" || type === "OldFile" || type === "ContiguousFile") return "file";
  if (type === "Directory") return "directory";
  if (type === "SymbolicLink") return "symlink";
  if (type === "Link") return "hardlink";
  return "other";
}

/** tar and yauzl load with the first archive: most agents never unpack one. */
const loadTar = () => import("tar");
const loadYauzl = async () => (await import("yauzl")).default;

async function unpackTarGz(file: string, directory: string, limits: ArchiveLimits): Promise<void> {
  const tar = await loadTar();
  const entries: EntryInfo[] = [];
  try {
    await tar.t({
      file,
      gzip: true,
      strict: true,
      onReadEntry: (entry) => {
        entries.push({
          path: entry.path,
          kind: tarKind(entry.type),
          size: entry.size ?? 0,
          linkTarget: entry.linkpath,
        });
        entry.resume();
      },
    });
  } catch (error) {
    throw new CommandError("INVALID_ARGUMENT", `archive: not a valid tar.gz (${(error as Error).message})`);
  }
  checkEntries(entries, limits);
  await tar.x({
    file,
    cwd: directory,
    gzip: true,
    strict: true,
    preserveOwner: false,
    // A second line of defence: only the kinds checked above are written.
    filter: (_path, entry) => "type" in entry && tarKind(entry.type) !== "other",
  });
}

async function openZip(file: string): Promise<yauzl.ZipFile> {
  const yauzl = await loadYauzl();
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false, strictFileNames: true }, (error, zip) =>
      error ? reject(error) : resolve(zip),
    ),
  );
}

function readZipEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on("entry", (entry: yauzl.Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.on("end", () => resolve(entries));
    zip.on("error", reject);
    zip.readEntry();
  });
}

function zipEntryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))),
  );
}

async function zipEntryText(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await zipEntryStream(zip, entry)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const S_IFMT = 0o170000;

async function unpackZip(file: string, directory: string, limits: ArchiveLimits): Promise<void> {
  let zip: yauzl.ZipFile;
  let entries: yauzl.Entry[];
  try {
    zip = await openZip(file);
    entries = await readZipEntries(zip);
  } catch (error) {
    // yauzl refuses absolute and ".." names itself (strictFileNames): say so as a refusal.
    throw new CommandError(
      "INVALID_ARGUMENT",
      `archive: not a valid zip or unsafe entry (${(error as Error).message})`,
    );
  }
  try {
    const infos: EntryInfo[] = [];
    for (const entry of entries) {
      const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
      const isDirectory = entry.fileName.endsWith("/") || mode === 0o040000;
      let kind: EntryInfo["kind"] = isDirectory ? "directory" : "file";
      if (mode === 0o120000) kind = "symlink";
      else if (mode !== 0 && mode !== 0o100000 && mode !== 0o040000) kind = "other";
      const info: EntryInfo = { path: entry.fileName, kind, size: entry.uncompressedSize };
      if (kind === "symlink") {
        if (entry.uncompressedSize > 4096)
          throw refused(entry.fileName, "is a symlink with an oversized target");
        info.linkTarget = await zipEntryText(zip, entry);
      }
      infos.push(info);
    }
    checkEntries(infos, limits);
    // Directories and files first, symlinks last: nothing is ever written through a link.
    const links: EntryInfo[] = [];
    for (const [index, entry] of entries.entries()) {
      const info = infos[index] as EntryInfo;
      const target = path.join(directory, safeEntryPath(info.path));
      if (info.kind === "directory") await mkdir(target, { recursive: true });
      else if (info.kind === "symlink") links.push(info);
      else {
        await mkdir(path.dirname(target), { recursive: true });
        const mode = (entry.externalFileAttributes >>> 16) & 0o111 ? 0o755 : 0o644;
        await pipeline(await zipEntryStream(zip, entry), createWriteStream(target, { mode, flags: "wx" }));
      }
    }
    for (const link of links) {
      const target = path.join(directory, safeEntryPath(link.path));
      await mkdir(path.dirname(target), { recursive: true });
      await symlink(link.linkTarget as string, target);
    }
  } finally {
    zip.close();
  }
}

/** Every symlink under `directory` must resolve (through chains of links) inside it. */
async function checkSymlinksStayInside(directory: string): Promise<void> {
  const root = await realpath(directory);
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        let resolved: string;
        try {
          resolved = await realpath(full);
        } catch {
          // Dangling: judge its target lexically from its own directory.
          resolved = path.resolve(path.dirname(full), await readlink(full));
        }
        if (!isWithin(root, resolved)) {
          throw refused(path.relative(directory, full), "links outside the archive");
        }
      } else if (entry.isDirectory()) await walk(full);
      else if (!entry.isFile()) throw refused(path.relative(directory, full), "is a special file");
    }
  };
  await walk(directory);
}

/** Unpacks `file` into the (empty) `directory`; a refused archive leaves the directory empty. */
export async function unpackArchive(
  file: string,
  format: ArchiveSource["format"],
  directory: string,
  limits: ArchiveLimits,
  log: LogStream,
): Promise<void> {
  await mkdir(directory, { recursive: true });
  try {
    if (format === "zip") await unpackZip(file, directory, limits);
    else await unpackTarGz(file, directory, limits);
    await checkSymlinksStayInside(directory);
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    await mkdir(directory, { recursive: true });
    if (error instanceof CommandError) throw error;
    throw new CommandError("FAILED", `unpacking the archive failed: ${(error as Error).message}`);
  }
  const stats = await lstat(directory);
  if (!stats.isDirectory()) throw new CommandError("FAILED", "unpacking the archive failed");
  log.line(`unpacked the ${format} archive`);
}
