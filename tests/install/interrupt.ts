/**
 * Runs deploy/install.sh and kills it with SIGKILL (its whole process group: the script and the
 * docker commands it runs) at a chosen moment, as a lost SSH session or a power cut would:
 *
 * - `command`: the moment the script runs a docker command whose arguments match (a `docker`
 *   first on PATH stops there instead of running it), e.g. the `stack deploy` after every
 *   secret and the network exist;
 * - `api`: in the middle of one docker command's work: that command talks to the Docker Engine
 *   through a proxy that forwards every request but holds the `count`-th one matching `request`
 *   (e.g. the second service creation of `docker stack deploy`), so the Engine has done part of
 *   the work when the script dies.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";

export type KillMoment = { command: RegExp } | { api: { command: RegExp; request: RegExp; count: number } };

const DOCKER_SOCKET = "/var/run/docker.sock";

/** A proxy to the Docker Engine that holds the `count`-th request matching `pattern` ("METHOD /path"). */
async function holdingProxy(socketPath: string, pattern: RegExp, count: number) {
  let seen = 0;
  let onHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const server = http.createServer((incoming, outgoing) => {
    const line = `${incoming.method} ${incoming.url}`;
    if (pattern.test(line) && ++seen === count) {
      onHeld();
      return; // never forwarded nor answered: the client dies waiting
    }
    const upstream = http.request(
      { socketPath: DOCKER_SOCKET, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    held,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

/**
 * Runs `bash <args>` and SIGKILLs its process group at `moment`; fails if the script ended
 * before reaching it (with its output). Resolves once the group is dead.
 */
export async function installKilledAt(
  args: string[],
  moment: KillMoment,
  timeoutMs = 300_000,
): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), "platform-install-kill-"));
  const realDocker = execFileSync("bash", ["-c", "command -v docker"], { encoding: "utf8" }).trim();
  const stopped = path.join(directory, "stopped");
  const proxySocket = path.join(directory, "docker.sock");
  const stopAt = "command" in moment ? moment.command : null;
  const proxied = "api" in moment ? moment.api : null;
  await writeFile(
    path.join(directory, "docker"),
    `#!/bin/bash
# The test's docker: the real one, except at the moment the test kills the install.
args="$*"
if [ -n "$PLATFORM_TEST_KILL_AT" ] && [[ "$args" =~ $PLATFORM_TEST_KILL_AT ]]; then : >${quote(stopped)}; exec sleep 600; fi
if [ -n "$PLATFORM_TEST_PROXIED" ] && [[ "$args" =~ $PLATFORM_TEST_PROXIED ]]; then export DOCKER_HOST=${quote(`unix://${proxySocket}`)}; fi
exec ${quote(realDocker)} "$@"
`,
  );
  await chmod(path.join(directory, "docker"), 0o755);
  const proxy = proxied ? await holdingProxy(proxySocket, proxied.request, proxied.count) : null;

  let output = "";
  const child = spawn("bash", args, {
    detached: true,
    env: {
      ...process.env,
      PATH: `${directory}:${process.env.PATH}`,
      PLATFORM_TEST_KILL_AT: stopAt?.source ?? "",
      PLATFORM_TEST_PROXIED: proxied?.command.source ?? "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  try {
    const reached = proxy
      ? proxy.held
      : new Promise<void>((resolve) => {
          const timer = setInterval(() => {
            if (existsSync(stopped)) {
              clearInterval(timer);
              resolve();
            }
          }, 50);
          child.once("exit", () => clearInterval(timer));
        });
    const outcome = await Promise.race([
      reached.then(() => "reached" as const),
      exited(child).then(() => "ended" as const),
      new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), timeoutMs).unref()),
    ]);
    if (outcome !== "reached") {
      throw new Error(`install.sh ${outcome} before the moment to kill it (${describe(moment)}):\n${output}`);
    }
    return output;
  } finally {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {}
    await exited(child);
    await proxy?.close();
    await rm(directory, { recursive: true, force: true });
  }
}

function describe(moment: KillMoment): string {
  return "command" in moment
    ? `docker ${moment.command.source}`
    : `request ${moment.api.count} matching ${moment.api.request.source}`;
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
