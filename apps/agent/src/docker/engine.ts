/**
 * The agent's Docker Engine client (dockerode over the local socket) and the classification of
 * its failures into protocol error codes: engine unreachable, object not found, or other.
 */
import Docker from "dockerode";

export const DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock";

/** A dockerode client for the engine at `socketPath`. */
export function createDockerClient(socketPath = DEFAULT_DOCKER_SOCKET, timeoutMs = 60_000): Docker {
  return new Docker({ socketPath, timeout: timeoutMs });
}

const UNREACHABLE_CODES = new Set(["ENOENT", "ECONNREFUSED", "EACCES", "ECONNRESET", "EPIPE", "ETIMEDOUT"]);

/** True when the error means the engine could not be reached at all. */
export function isEngineUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && UNREACHABLE_CODES.has(code);
}

/** The HTTP status the engine answered with, if the error is an engine answer. */
export function engineStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown })?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** The engine's own message for an error answer (its JSON `message`), else the error's. */
export function engineMessage(error: unknown): string {
  const json = (error as { json?: { message?: unknown } })?.json;
  if (json && typeof json.message === "string") return json.message;
  return error instanceof Error ? error.message : String(error);
}

/** Rejects when `promise` takes longer than `timeoutMs`. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(Object.assign(new Error(`${what} timed out after ${timeoutMs} ms`), { code: "ETIMEDOUT" })),
      timeoutMs,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

let diskUsageTurn: Promise<unknown> = Promise.resolve();

/**
 * `docker system df`, one at a time: the engine refuses a disk usage while another runs ("a disk
 * usage operation is already running", a 500), so this agent's own calls wait their turn and one
 * refused because someone else's (the CLI, another process) runs is asked again a few times.
 */
export function systemDiskUsage(docker: Docker): Promise<unknown> {
  const ask = async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await docker.df();
      } catch (error) {
        if (attempt >= 20 || !/disk usage operation is already running/.test(engineMessage(error)))
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  };
  const next = diskUsageTurn.then(ask, ask);
  diskUsageTurn = next.catch(() => undefined);
  return next;
}
