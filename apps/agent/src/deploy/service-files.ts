/**
 * The one writer of the files the platform mounts into services, whatever their kind
 * (applications, database services, compose stacks): an application's .env file
 * (`ServiceSpec.files`) and file mounts (`ServiceMount` of type `file`, Dokploy's file mounts),
 * and a compose stack's file mounts with its compose file (stack.ts).
 *
 * Files live in <main directory>/applications/<service name>/files/<version>/… (a stack's in
 * <main directory>/compose/<appName>/files/<version>/…), where <version>
 * is a hash of every file of the deploy: a rollback to an earlier version finds its files, and
 * versions no running spec names are removed. Every host path is kept inside that directory
 * (no '..', no absolute path, no link followed: the directories are the agent's own). The
 * directory records its owner beside it (files-owner.json) when first written; a write for another owner is
 * refused (FAILED_PRECONDITION), as the proxy's files are (proxy/holders.ts): a control-plane
 * bug cannot make one tenant's deploy overwrite another's files.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ResourceOwner, ServiceSpec } from "@platform/agent-protocol";
import { CommandError } from "../command-error.ts";
import { hasControlCharacters, invalid } from "./validate.ts";

/** A file to write: `hostPath` relative to the version directory, mounted at `containerPath`. */
export interface ServiceFile {
  hostPath: string;
  containerPath: string;
  content: string;
}

/** A read-only bind mount of a written file, as Docker's service API takes it. */
export interface FileMount {
  Type: "bind";
  Source: string;
  Target: string;
  ReadOnly: true;
}

/** Beside the files directory (applications/<name>/files-owner.json), never among its versions. */
const OWNER_FILE = "files-owner.json";
/** File mounts live under this subdirectory, so a filePath never meets a `files` entry. */
const MOUNTS_SUBDIRECTORY = "mounts";

export function filesDirectory(mainDirectory: string, serviceName: string): string {
  return path.join(mainDirectory, "applications", serviceName, "files");
}

/** The parts of a path, refused (INVALID_ARGUMENT naming `field`) when one would leave its root. */
function safeParts(field: string, value: string, absolute: boolean): string[] {
  if (absolute !== value.startsWith("/") || hasControlCharacters(value) || value.includes(",")) {
    throw invalid(
      field,
      `${JSON.stringify(value.slice(0, 100))} must be ${absolute ? "an absolute" : "a relative"} path`,
    );
  }
  const parts = value.split("/").filter((part) => part && part !== ".");
  if (parts.length === 0 || parts.includes("..")) {
    throw invalid(field, `${JSON.stringify(value.slice(0, 100))} must name a file without '..'`);
  }
  return parts;
}

/** Every file of the spec (its `files` and its file mounts), each path checked. */
export function serviceFilesOf(spec: ServiceSpec): ServiceFile[] {
  const files: ServiceFile[] = Object.entries(spec.files ?? {}).map(([containerPath, content]) => ({
    hostPath: safeParts("spec.files", containerPath, true).join("/"),
    containerPath,
    content,
  }));
  for (const mount of spec.mounts ?? []) {
    if (mount.type !== "file") continue;
    safeParts("spec.mounts", mount.target, true);
    files.push({
      hostPath: [MOUNTS_SUBDIRECTORY, ...safeParts("spec.mounts", mount.source, false)].join("/"),
      containerPath: mount.target,
      content: mount.content ?? "",
    });
  }
  return files.sort((a, b) => a.containerPath.localeCompare(b.containerPath));
}

/** Refuses a files directory recorded for another owner; records `owner` on first use. */
async function claimDirectory(filesRoot: string, owner: ResourceOwner): Promise<void> {
  const ownerFile = path.join(path.dirname(filesRoot), OWNER_FILE);
  const recorded = await readFile(ownerFile, "utf8").catch(() => undefined);
  const mine = JSON.stringify({ organizationId: owner.organizationId, resource: owner.resource });
  if (recorded !== undefined && recorded !== mine) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `the files of service ${path.basename(path.dirname(filesRoot))} belong to someone else: nothing was written`,
    );
  }
  if (recorded === undefined) {
    await mkdir(filesRoot, { recursive: true, mode: 0o700 });
    await writeFile(ownerFile, mine, { mode: 0o600 });
  }
}

/**
 * Writes `files` for the service `serviceName` of `owner` into a new version directory and
 * answers their read-only bind mounts. `keepSources` are host paths of the running spec's mounts:
 * their versions are kept (a rollback needs them), every other version is removed.
 */
export async function writeServiceFiles(
  mainDirectory: string,
  serviceName: string,
  owner: ResourceOwner,
  files: readonly ServiceFile[],
  keepSources: readonly string[] = [],
  onWritten: (containerPath: string) => void = () => {},
): Promise<FileMount[]> {
  const written = await writeFilesVersion(
    filesDirectory(mainDirectory, serviceName),
    owner,
    files,
    keepSources,
    onWritten,
  );
  return written.mounts;
}

/**
 * The writer itself, for any files root (an application's `applications/<name>/files`, a
 * compose stack's `compose/<appName>/files`): the version directory of `files` (a hash of them)
 * under `filesRoot`, the other versions removed but those `keepSources` lie in.
 */
export async function writeFilesVersion(
  filesRoot: string,
  owner: ResourceOwner,
  files: readonly ServiceFile[],
  keepSources: readonly string[] = [],
  onWritten: (containerPath: string) => void = () => {},
): Promise<{ directory: string; mounts: FileMount[] }> {
  await claimDirectory(filesRoot, owner);
  const version = createHash("sha256")
    .update(
      JSON.stringify(files.map(({ hostPath, containerPath, content }) => [hostPath, containerPath, content])),
    )
    .digest("hex")
    .slice(0, 16);
  const keep = new Set([version]);
  for (const source of keepSources) {
    const relative = path.relative(filesRoot, source);
    if (relative && !relative.startsWith("..") && !path.isAbsolute(relative)) {
      keep.add(relative.split(path.sep)[0] as string);
    }
  }
  for (const entry of await readdir(filesRoot).catch(() => [] as string[])) {
    if (!keep.has(entry)) await rm(path.join(filesRoot, entry), { recursive: true, force: true });
  }
  const versionDir = path.join(filesRoot, version);
  const mounts: FileMount[] = [];
  for (const file of files) {
    const hostPath = path.join(versionDir, ...safeParts("hostPath", file.hostPath, false));
    await mkdir(path.dirname(hostPath), { recursive: true, mode: 0o700 });
    await writeFile(hostPath, file.content, { mode: 0o644 });
    mounts.push({ Type: "bind", Source: hostPath, Target: file.containerPath, ReadOnly: true });
    onWritten(file.containerPath);
  }
  return { directory: versionDir, mounts };
}
