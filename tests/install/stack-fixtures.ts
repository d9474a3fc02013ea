/**
 * What the tests that install the production stack with deploy/install.sh share: the locally
 * built images of the stack's dependencies (no registry is reachable here), HTTP to 127.0.0.1
 * with a Host header, retries, and the removal of everything a stack of a test made.
 */
import { execFile, execFileSync } from "node:child_process";
import { rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);
export const repoRoot = path.resolve(import.meta.dirname, "../..");

export interface Answer {
  status: number;
  body: any;
  text: string;
}

/** One HTTP request to 127.0.0.1:`port` with the Host header `host`. */
export function request(
  port: number,
  host: string,
  method: string,
  pathname: string,
  options: { body?: unknown; token?: string } = {},
): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: pathname,
        timeout: 30_000,
        headers: {
          host,
          ...(payload ? { "content-type": "application/json" } : {}),
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: response.statusCode ?? 0, body, text });
        });
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error("timed out")));
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

/** A failure `eventually` does not retry: the state it saw will not change by waiting. */
export class FinalFailure extends Error {}

/** Retries `check` until it passes or `timeoutMs` ends (then throws its last failure). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (error instanceof FinalFailure) throw error;
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs / 1000} s: ${(last as Error)?.message ?? last}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

export async function docker(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync("docker", args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/** The last line a build script of scripts/ prints: the image it built (or found up to date). */
export function built(script: string, ...args: string[]): string {
  const output = execFileSync("bash", [path.join(repoRoot, "scripts", script), ...args], {
    cwd: repoRoot,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return output.trim().split("\n").at(-1)!.trim();
}

/**
 * The images the stack runs besides the control plane, built here from Debian's packages (each
 * script rebuilds only when its inputs changed, so the install tests share them), and the
 * Debian base a control plane image is built on.
 */
export function stackImages(): { postgres: string; nats: string; traefik: string; debian: string } {
  const [postgres, nats] = built("build-stack-images.sh").split(" ");
  return {
    postgres: postgres!,
    nats: nats!,
    traefik: built("build-traefik-router-image.sh"),
    debian: built("build-debian-image.sh", "bookworm"),
  };
}

/**
 * Removes stack `stack` as install.sh made it: its services, then (once their containers are
 * gone) its secrets, volumes and networks (`network` is the overlay it was given), and the work
 * directory a killed install leaves.
 */
export async function removeStack(stack: string, network: string, services: string[] = []): Promise<void> {
  const quietly = (...args: string[]) => docker(...args).catch(() => "");
  for (const service of services) await quietly("service", "rm", service);
  await quietly("stack", "rm", stack);
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const left = await quietly("ps", "-aq", "--filter", `label=com.docker.stack.namespace=${stack}`);
    const others = await Promise.all(
      services.map((service) =>
        quietly("ps", "-aq", "--filter", `label=com.docker.swarm.service.name=${service}`),
      ),
    );
    if (left === "" && others.every((ids) => ids === "")) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const secrets = await quietly("secret", "ls", "-q", "--filter", `label=platform.stack=${stack}`);
  if (secrets) await quietly("secret", "rm", ...secrets.split("\n"));
  const volumes = await quietly(
    "volume",
    "ls",
    "-q",
    "--filter",
    `label=com.docker.stack.namespace=${stack}`,
  );
  if (volumes) await quietly("volume", "rm", ...volumes.split("\n"));
  for (let attempt = 0; attempt < 10; attempt++) {
    await quietly("network", "rm", `${stack}_internal`, network);
    const left = await quietly("network", "ls", "-q", "--filter", `name=${stack}`);
    if (left === "") break;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  await rm(path.join(tmpdir(), `platform-install-${stack}`), { recursive: true, force: true });
}

/** Where and with what a test installs the stack. */
export interface InstallTarget {
  stack: string;
  network: string;
  ports: { http: number; https: number; controlPlane: number; nats: number };
  mainDirectory: string;
  backupDirectory: string;
  images: { postgres: string; nats: string; traefik: string };
}

/** The arguments of `script` (deploy/install.sh or a copy) with the test's names, ports and images. */
export function installArguments(script: string, target: InstallTarget, ...extra: string[]): string[] {
  const { ports, images } = target;
  return [
    script,
    "--stack",
    target.stack,
    "--network",
    target.network,
    "--http-port",
    String(ports.http),
    "--https-port",
    String(ports.https),
    "--port",
    String(ports.controlPlane),
    "--nats-port",
    String(ports.nats),
    "--url",
    `http://127.0.0.1:${ports.controlPlane}`,
    "--nats-url",
    `nats://127.0.0.1:${ports.nats}`,
    "--main-directory",
    target.mainDirectory,
    "--backup-directory",
    target.backupDirectory,
    "--postgres-image",
    images.postgres,
    "--nats-image",
    images.nats,
    "--traefik-image",
    images.traefik,
    "--timeout",
    "240",
    ...extra,
  ];
}
