/**
 * The README's `npm start` as a test runs it: in its own process group (killed as one with
 * `process.kill(-child.pid)`), on a spare port of 127.0.0.1, with its output collected.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { freePort } from "../../apps/agent/src/testing/net.ts";

export interface NpmStart {
  child: ChildProcess;
  port: number;
  /**
   * Waits up to `waitMs` for the control plane's "listening" line (or the process's end) and
   * returns the output so far.
   */
  listening(waitMs: number): Promise<string>;
}

/**
 * Starts `npm start` in `cwd` with `env`, its data in `dataDir` and no local Traefik proxy;
 * as the user `runAs` when given (the test runs as root).
 */
export async function spawnNpmStart(
  cwd: string,
  env: NodeJS.ProcessEnv,
  dataDir: string,
  runAs?: { uid: number; gid: number },
): Promise<NpmStart> {
  const port = await freePort();
  const child = spawn("npm", ["start"], {
    cwd,
    ...runAs,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_LOCAL_PROXY: "false",
    },
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const listening = async (waitMs: number) => {
    const deadline = Date.now() + waitMs;
    while (!output.includes("Platform control plane listening") && Date.now() < deadline) {
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return output;
  };
  return { child, port, listening };
}
