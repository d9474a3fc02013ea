/**
 * The proxy's files on the server, under <main directory>/traefik: traefik.yml (scope "static"),
 * dynamic/<name> ("dynamic") and dynamic/certificates/<name> ("certificate"). Names are plain
 * file names, never paths; a directory that resolves (through symbolic links) anywhere else than
 * where it belongs is refused, and only regular files are read, replaced or removed, so nothing
 * outside the proxy's directory is ever touched. Writes are atomic: a temporary file in the same
 * directory, fsync, rename.
 */
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { chmod, lstat, mkdir, open, readdir, realpath, rename, unlink } from "node:fs/promises";
import path from "node:path";
import {
  CERTIFICATES_DIRECTORY_NAME,
  DYNAMIC_DIRECTORY_NAME,
  PROXY_DIRECTORY_NAME,
  STATIC_CONFIG_FILE_NAME,
} from "@platform/traefik-config/paths.ts";
import { CommandError } from "../command-error.ts";

/**
 * The largest file the agent writes or reads: configuration and PEM files are far smaller, and
 * the command or reply carrying it must fit in one NATS message (1 MiB by default).
 */
export const MAX_PROXY_FILE_BYTES = 512 * 1024;
const FILE_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
const MAX_FILE_NAME_LENGTH = 255;
const DYNAMIC_EXTENSIONS = [".yml", ".yaml"];
// Traefik's file provider loads every .yml/.yaml/.toml file below its directory, the
// certificates directory included: a certificate named like that would be read as configuration.
const CONFIGURATION_EXTENSIONS = [".yml", ".yaml", ".toml"];
// Unpaired UTF-16 surrogates (with the u flag a pair is one code point and does not match).
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const SCOPES = ["static", "dynamic", "certificate"] as const;
type Scope = (typeof SCOPES)[number];

/** Where one proxy file lives and how it is created. */
export interface ProxyFileLocation {
  /** Directories below the main directory, outermost first. */
  directories: { relative: string; mode: number }[];
  fileName: string;
  fileMode: number;
}

const invalid = (message: string) => new CommandError("INVALID_ARGUMENT", message);

function checkScope(scope: unknown): Scope {
  if (typeof scope === "string" && (SCOPES as readonly string[]).includes(scope)) return scope as Scope;
  throw invalid(`scope must be one of ${SCOPES.join(", ")}`);
}

function checkFileName(fileName: unknown): string {
  if (
    typeof fileName !== "string" ||
    fileName.length > MAX_FILE_NAME_LENGTH ||
    !FILE_NAME_PATTERN.test(fileName) ||
    fileName.includes("..")
  ) {
    throw invalid(
      `fileName must be a plain file name (letters, digits, '.', '_', '-', starting with a letter or digit, no '..', at most ${MAX_FILE_NAME_LENGTH} characters)`,
    );
  }
  return fileName;
}

const hasExtension = (fileName: string, extensions: string[]) =>
  extensions.includes(path.extname(fileName).toLowerCase());

/** Checks scope and fileName; throws INVALID_ARGUMENT naming the field. */
export function proxyFileLocation(scopeValue: unknown, fileNameValue: unknown): ProxyFileLocation {
  const scope = checkScope(scopeValue);
  const proxyDirectory = { relative: PROXY_DIRECTORY_NAME, mode: 0o755 };
  if (scope === "static") {
    return { directories: [proxyDirectory], fileName: STATIC_CONFIG_FILE_NAME, fileMode: 0o644 };
  }
  const fileName = checkFileName(fileNameValue);
  const dynamicDirectory = { relative: path.join(PROXY_DIRECTORY_NAME, DYNAMIC_DIRECTORY_NAME), mode: 0o755 };
  if (scope === "dynamic") {
    if (!hasExtension(fileName, DYNAMIC_EXTENSIONS)) {
      throw invalid("fileName of a dynamic configuration file must end in .yml or .yaml");
    }
    return { directories: [proxyDirectory, dynamicDirectory], fileName, fileMode: 0o644 };
  }
  if (hasExtension(fileName, CONFIGURATION_EXTENSIONS)) {
    throw invalid("fileName of a certificate must not end in .yml, .yaml or .toml");
  }
  const certificatesDirectory = {
    relative: path.join(dynamicDirectory.relative, CERTIFICATES_DIRECTORY_NAME),
    mode: 0o700,
  };
  return {
    directories: [proxyDirectory, dynamicDirectory, certificatesDirectory],
    fileName,
    fileMode: 0o600,
  };
}

/** Checks the content of a file to write; throws INVALID_ARGUMENT naming `field`. */
export function checkContent(content: unknown, field = "content"): string {
  if (typeof content !== "string" || content.length === 0) throw invalid(`${field} must not be empty`);
  if (LONE_SURROGATE.test(content)) throw invalid(`${field} must be valid UTF-8 text`);
  if (Buffer.byteLength(content, "utf8") > MAX_PROXY_FILE_BYTES) {
    throw invalid(`${field} is larger than ${MAX_PROXY_FILE_BYTES} bytes`);
  }
  return content;
}

/** The proxy's files below one main directory. */
export class ProxyFiles {
  constructor(private readonly mainDirectory: string) {}

  /** Writes `content` atomically; returns the file's absolute path. */
  async write(location: ProxyFileLocation, content: string): Promise<string> {
    const directory = await this.directory(location, { create: true });
    if (directory === undefined) throw new Error("unreachable: the directory was created");
    const target = path.join(directory, location.fileName);
    refuseUnlessRegularFile(target, await lstatOrUndefined(target));

    // Hidden and ending in .tmp, so Traefik never loads it; short enough for any file name.
    const temporaryName = `.${location.fileName.slice(0, 200)}.${randomBytes(6).toString("hex")}.tmp`;
    const temporary = path.join(directory, temporaryName);
    // O_EXCL + O_NOFOLLOW: never open something planted under the temporary name.
    const handle = await open(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      location.fileMode,
    );
    try {
      try {
        await handle.writeFile(content, "utf8");
        await handle.chmod(location.fileMode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      // rename replaces the directory entry itself and never follows a link at the target.
      await rename(temporary, target);
    } catch (error) {
      await unlink(temporary).catch(() => {});
      throw error;
    }
    await syncDirectory(directory);
    return target;
  }

  /** The file's content, or undefined when there is no such file. */
  async read(location: ProxyFileLocation): Promise<string | undefined> {
    const directory = await this.directory(location, { create: false });
    if (directory === undefined) return undefined;
    const target = path.join(directory, location.fileName);
    const stats = await lstatOrUndefined(target);
    if (stats === undefined) return undefined;
    refuseUnlessRegularFile(target, stats);
    if (stats.size > MAX_PROXY_FILE_BYTES) {
      throw new CommandError("FAILED", `${target} is larger than ${MAX_PROXY_FILE_BYTES} bytes`);
    }
    const handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  }

  /**
   * The names of the configuration files (.yml/.yaml regular files with a plain name) directly in
   * the dynamic directory, sorted; [] when it does not exist. Links, directories (the certificates
   * directory among them) and anything else are left out.
   */
  async listDynamic(): Promise<string[]> {
    const directory = await this.directory(proxyFileLocation("dynamic", "list.yml"), { create: false });
    if (directory === undefined) return [];
    const entries = await readdir(directory, { withFileTypes: true });
    return entries
      .filter(
        (entry) =>
          entry.isFile() &&
          entry.name.length <= MAX_FILE_NAME_LENGTH &&
          FILE_NAME_PATTERN.test(entry.name) &&
          !entry.name.includes("..") &&
          hasExtension(entry.name, DYNAMIC_EXTENSIONS),
      )
      .map((entry) => entry.name)
      .sort();
  }

  /** Removes the file; false when there was none. */
  async remove(location: ProxyFileLocation): Promise<boolean> {
    const directory = await this.directory(location, { create: false });
    if (directory === undefined) return false;
    const target = path.join(directory, location.fileName);
    const stats = await lstatOrUndefined(target);
    if (stats === undefined) return false;
    refuseUnlessRegularFile(target, stats);
    try {
      await unlink(target);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return false;
      throw error;
    }
    await syncDirectory(directory);
    return true;
  }

  /**
   * The real path of the file's directory, checked to be exactly where it belongs below the
   * (real) main directory; with `create`, missing directories are made with their modes.
   * Undefined when a directory is missing and `create` is false.
   */
  private async directory(
    location: ProxyFileLocation,
    { create }: { create: boolean },
  ): Promise<string | undefined> {
    if (create) await mkdir(this.mainDirectory, { recursive: true, mode: 0o755 });
    let mainDirectory: string;
    try {
      mainDirectory = await realpath(this.mainDirectory);
    } catch (error) {
      if (!create && errorCode(error) === "ENOENT") return undefined;
      throw error;
    }
    let directory = mainDirectory;
    for (const { relative, mode } of location.directories) {
      const expected = path.join(mainDirectory, relative);
      let created = false;
      if (create) {
        try {
          await mkdir(expected, { mode });
          created = true;
        } catch (error) {
          if (errorCode(error) !== "EEXIST") throw error;
        }
      }
      let actual: string;
      try {
        actual = await realpath(expected);
      } catch (error) {
        if (!create && errorCode(error) === "ENOENT") return undefined;
        throw error;
      }
      if (actual !== expected || !(await lstat(actual)).isDirectory()) {
        throw invalid(
          `${expected} is not a directory of its own (a symbolic link or a file); refusing to use it`,
        );
      }
      if (created) await chmod(actual, mode); // whatever the umask
      directory = actual;
    }
    const innermost = location.directories.at(-1);
    // The certificates directory stays private even if it was created earlier with another mode.
    if (create && innermost && innermost.mode === 0o700) await chmod(directory, 0o700);
    return directory;
  }
}

function refuseUnlessRegularFile(target: string, stats: Stats | undefined): void {
  if (stats !== undefined && !stats.isFile()) {
    throw invalid(
      `${target} exists and is not a regular file (a symbolic link or a directory); refusing to use it`,
    );
  }
}

async function lstatOrUndefined(target: string): Promise<Stats | undefined> {
  try {
    return await lstat(target);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

/** Makes a rename or unlink durable. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : undefined;
}
