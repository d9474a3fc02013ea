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

const COMPOSE_PROBE_TIMEOUT_MS = 30_000;

/** The Compose command of a server: its argv prefix and version. */
export interface ComposeCommand {
  command: string;
  /** Arguments before Compose's own (`compose` for the docker CLI plugin). */
  args: string[];
  version?: string;
}

/**
 * Compose for stacks of composeType `docker-compose`: the docker CLI's `compose` plugin (v2),
 * else the `docker-compose` command (v1, what Debian bookworm ships); undefined when neither
 * answers. The agent deploys with it (deploy/stack.ts) and server.validate reports it.
 */
export async function findComposeCommand(
  docker: string,
  probeOptions: ToolProbeOptions = {},
): Promise<ComposeCommand | undefined> {
  // docker-compose v1 is a Python program: it takes seconds to answer on a busy host.
  const options = { ...probeOptions, timeoutMs: probeOptions.timeoutMs ?? COMPOSE_PROBE_TIMEOUT_MS };
  const v2 = await toolStatus(docker, options, ["compose", "version"]);
  if (v2.enabled) return { command: docker, args: ["compose"], version: v2.version };
  const v1 = await toolStatus("docker-compose", options, ["version"]);
  if (v1.enabled) return { command: "docker-compose", args: [], version: v1.version };
  return undefined;
}

export async function composeStatus(options: ToolProbeOptions = {}): Promise<ToolStatus> {
  const found = await findComposeCommand("docker", options);
  if (!found) return { enabled: false };
  return found.version === undefined ? { enabled: true } : { enabled: true, version: found.version };
}
