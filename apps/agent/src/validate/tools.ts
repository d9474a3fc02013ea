/**
 * Validate fact "tools": whether a build or backup tool (rclone, nixpacks, pack, railpack) is on
 * the agent's PATH, and its version, by running `<tool> --version` (argv, no shell) with a
 * timeout. A missing tool, a failure or a timeout all read as not installed.
 */
import { execFile } from "node:child_process";
import type { ToolStatus } from "@platform/agent-protocol";

export interface ToolProbeOptions {
  /** PATH to search (default: the agent's own). */
  searchPath?: string;
  timeoutMs?: number;
}

/** The first version number in a `--version` output: "rclone v1.60.1" -> "1.60.1". */
export function parseVersion(output: string): string | undefined {
  return /\bv?(\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?)/.exec(output)?.[1];
}

export function toolStatus(
  executable: string,
  options: ToolProbeOptions = {},
  versionArgs: readonly string[] = ["--version"],
): Promise<ToolStatus> {
  const env = { PATH: options.searchPath ?? process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin" };
  return new Promise((resolve) => {
    execFile(
      executable,
      [...versionArgs],
      { env, timeout: options.timeoutMs ?? 5000, maxBuffer: 64 * 1024 },
      (error, stdout, stderr) => {
        if (error) return resolve({ enabled: false });
        const version = parseVersion(`${stdout}\n${stderr}`);
        resolve(version === undefined ? { enabled: true } : { enabled: true, version });
      },
    );
  });
}
