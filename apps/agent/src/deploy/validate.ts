/**
 * Checks of everything in a command that reaches argv, a path or a URL. The control plane
 * validated it already; the agent checks again because it is the one running git and docker.
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import { appNameProblem, isExistingAppName } from "@platform/names";
import { CommandError } from "../command-error.ts";
import { isWithin } from "../path-within.ts";

/** True when `text` holds a control character (NUL, newline, escape, DEL, ...). */
export function hasControlCharacters(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

export function invalid(field: string, message: string): CommandError {
  return new CommandError("INVALID_ARGUMENT", `${field}: ${message}`);
}

/** appName / service name: used in paths and as the Swarm service name (the shared rule). */
export function checkAppName(field: string, value: string): void {
  const problem = appNameProblem(value);
  if (problem) throw invalid(field, problem);
}

/**
 * The name of a service that may exist already (observe, start, stop, reload, remove): valid under
 * today's appName rule or the older one (names.ts isExistingAppName), so that what was created
 * under the old rule can still be followed and torn down.
 */
export function checkExistingAppName(field: string, value: string): void {
  if (!isExistingAppName(value))
    throw invalid(field, "must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$ (at most 63 characters)");
}

// Docker's reference grammar, simplified: lowercase path components, optional registry port and tag.
const IMAGE_NAME =
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

export function checkImageName(field: string, value: string): void {
  if (!IMAGE_NAME.test(value)) throw invalid(field, "is not a valid image reference");
}

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function checkKeys(field: string, values: Record<string, string> | undefined): void {
  for (const key of Object.keys(values ?? {})) {
    if (!ENV_KEY.test(key))
      throw invalid(field, `key ${JSON.stringify(key)} must match ^[A-Za-z_][A-Za-z0-9_]*$`);
  }
}

export function checkBuildStage(field: string, value: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value)) throw invalid(field, "is not a valid stage name");
}

/**
 * A branch name by git check-ref-format's rules, restricted to characters without meaning to a
 * shell (no ; & | $ ` quotes, spaces, ...).
 */
export function checkBranch(field: string, branch: string): void {
  const fail = (why: string) => invalid(field, why);
  if (!branch) throw fail("is required");
  if (!/^[A-Za-z0-9._/+@=,-]+$/.test(branch)) throw fail("contains characters not allowed in a branch name");
  if (branch.startsWith("-")) throw fail("must not start with '-'");
  if (branch === "@" || branch.includes("..") || branch.includes("//"))
    throw fail("is not a valid branch name");
  if (branch.startsWith("/") || branch.endsWith("/") || branch.endsWith("."))
    throw fail("is not a valid branch name");
  for (const component of branch.split("/")) {
    if (component.startsWith(".") || component.endsWith(".lock")) throw fail("is not a valid branch name");
  }
}

const SCP_LIKE = /^(?:([^@/:]+)@)?([^/:]+):(.+)$/;

/** https://, http://, ssh:// or user@host:path; nothing git could turn into a command or option. */
export function checkGitUrl(field: string, url: string): { kind: "http" | "ssh" } {
  const fail = (why: string) => invalid(field, why);
  if (!url) throw fail("is required");
  if (hasControlCharacters(url) || /\s/.test(url))
    throw fail("must not contain spaces or control characters");
  if (url.startsWith("-") || url.includes("--upload-pack") || url.includes("--config")) {
    throw fail("must not carry git options");
  }
  if (/^[A-Za-z0-9+.-]+::/.test(url)) throw fail("transport helpers (<transport>::) are not allowed");
  if (/^file:/i.test(url)) throw fail("file: URLs are not allowed");
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme) {
    if (scheme !== "https" && scheme !== "http" && scheme !== "ssh") {
      throw fail("must be an https://, http:// or ssh:// URL (or user@host:path)");
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw fail("is not a valid URL");
    }
    const pathname = decodeURIComponent(parsed.pathname).replace(/^\/+/, "");
    if (!parsed.hostname || parsed.hostname.startsWith("-")) throw fail("has an invalid host");
    if (decodeURIComponent(parsed.username).startsWith("-")) throw fail("has an invalid user");
    if (!pathname || pathname.startsWith("-")) throw fail("has an invalid path");
    if (scheme !== "ssh" && (parsed.username || parsed.password)) {
      throw fail("must not carry credentials (give them as httpUsername/httpPassword)");
    }
    return { kind: scheme === "ssh" ? "ssh" : "http" };
  }
  const scp = SCP_LIKE.exec(url);
  if (!scp) throw fail("must be an https://, http:// or ssh:// URL (or user@host:path)");
  const [, user, host, repoPath] = scp;
  if (user?.startsWith("-") || host?.startsWith("-") || repoPath?.startsWith("-")) {
    throw fail("user, host and path must not start with '-'");
  }
  return { kind: "ssh" };
}

/** Why a path cannot stay below its directory (checked in this order). */
export type RelativePathProblem = "control characters" | "absolute" | "parent";

/**
 * The core of the relative path checks: refuses (with `refuse`'s error) control characters, an
 * absolute path (/, \ or a drive letter) and any ".." part; returns the path's parts joined
 * with "/", without empty and "." parts.
 */
export function normaliseRelativePath(raw: string, refuse: (problem: RelativePathProblem) => Error): string {
  if (hasControlCharacters(raw)) throw refuse("control characters");
  if (raw.startsWith("/") || raw.startsWith("\\") || /^[A-Za-z]:/.test(raw)) throw refuse("absolute");
  const parts = raw.split(/[/\\]+/).filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw refuse("parent");
  return parts.join("/");
}

const RELATIVE_PATH_MESSAGES: Record<RelativePathProblem, string> = {
  "control characters": "must not contain control characters",
  absolute: "must be relative to the source root",
  parent: "must not contain '..'",
};

/**
 * A path inside the source (buildPath, dockerfile, ...): relative, no "..", no control
 * characters. Returns it normalised ("" for the root).
 */
export function checkRelativePath(field: string, value: string | undefined): string {
  const raw = (value ?? "").trim();
  if (!raw || raw === "." || raw === "./" || raw === "/") return "";
  return normaliseRelativePath(raw, (problem) => invalid(field, RELATIVE_PATH_MESSAGES[problem]));
}

/**
 * Resolves `relative` under `root` and checks the real path (symlinks followed) is still inside
 * `within`. Missing targets are checked through their nearest existing parent.
 */
export async function resolveInside(
  field: string,
  within: string,
  root: string,
  relative: string,
): Promise<string> {
  const target = path.resolve(root, relative);
  const realWithin = await realpath(within);
  let existing = target;
  let rest = "";
  for (;;) {
    try {
      const real = await realpath(existing);
      const resolved = rest ? path.join(real, rest) : real;
      if (!isWithin(realWithin, resolved)) {
        throw invalid(field, "points outside the source");
      }
      return resolved;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      const parent = path.dirname(existing);
      if (parent === existing) throw invalid(field, "does not exist");
      rest = rest ? path.join(path.basename(existing), rest) : path.basename(existing);
      existing = parent;
    }
  }
}
