/**
 * Read-only access to the files of the host being audited, below a root directory ("/" on a
 * real server, a fixture directory in tests). Every path is resolved inside the root; missing
 * or unreadable files read as undefined, since an absent file is a normal audit answer.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../path-within.ts";

export class HostFiles {
  readonly root: string;

  constructor(root = "/") {
    this.root = path.resolve(root);
  }

  /** The real path of host path `hostPath` (absolute, as on the host), kept inside the root. */
  resolve(hostPath: string): string {
    const resolved = path.resolve(this.root, `.${path.posix.resolve("/", hostPath)}`);
    if (!isWithin(this.root, resolved)) {
      throw new Error(`path ${hostPath} leaves the audit root`);
    }
    return resolved;
  }

  async read(hostPath: string): Promise<string | undefined> {
    try {
      return await readFile(this.resolve(hostPath), "utf8");
    } catch {
      return undefined;
    }
  }

  async exists(hostPath: string): Promise<boolean> {
    try {
      await stat(this.resolve(hostPath));
      return true;
    } catch {
      return false;
    }
  }

  /** Names of the entries in a directory, sorted; [] when it does not exist. */
  async list(hostDirectory: string): Promise<string[]> {
    try {
      return (await readdir(this.resolve(hostDirectory))).sort();
    } catch {
      return [];
    }
  }
}

/** Lines of a config file without comments (`#` to end of line) and blank lines, trimmed. */
export function configLines(text: string | undefined, commentStart = /#/): string[] {
  if (!text) return [];
  return text
    .split("\n")
    .map((line) => {
      const match = commentStart.exec(line);
      return (match ? line.slice(0, match.index) : line).trim();
    })
    .filter((line) => line.length > 0);
}

/** `KEY=value` pairs of a shell-style file (/etc/default/ufw, /etc/ufw/ufw.conf); quotes removed. */
export function shellAssignments(text: string | undefined): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of configLines(text)) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) values.set(match[1]!, match[2]!.trim().replace(/^(["'])(.*)\1$/, "$2"));
  }
  return values;
}
