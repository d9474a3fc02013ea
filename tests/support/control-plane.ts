/**
 * End-to-end support: the control plane as its own process (`node dist/control-plane/main.js`,
 * as `npm start` runs it) on a spare port of 127.0.0.1 with a fresh
 * database, and a small client of its public HTTP API (procedures and the deployment log stream).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { createTestDatabase } from "../../apps/control-plane/src/testing/harness.ts";
import { CONTROL_PLANE_ENTRY } from "../../scripts/built-entries.mjs";

const repositoryRoot = path.resolve(import.meta.dirname, "../..");

/** The last `count` lines of a process's output, for failure messages. */
export function tail(lines: string[], count = 60): string {
  const all = lines.join("").split("\n");
  return all.slice(-count).join("\n");
}

export interface ControlPlaneProcess {
  /** http://127.0.0.1:<port>, also its PLATFORM_URL. */
  url: string;
  child: ChildProcess;
  /** stdout and stderr chunks as they came. */
  output: string[];
  /** Stops the process (SIGTERM, SIGKILL after 10 s), drops its database, removes its data. */
  stop(): Promise<void>;
}

/**
 * Starts the control plane with `env` (NATS settings, ...) on a fresh database: a new Postgres
 * database. Resolves once
 * GET /health answers 200; throws with the process's output otherwise. `options.databaseUrl`
 * may rewrite the Postgres URL the process gets (a fault test puts a proxy in between);
 * `options.output` collects the process's output from its start, before it is healthy.
 */
export async function startControlPlaneProcess(
  env: Record<string, string>,
  options: {
    databaseUrl?: (url: string) => string;
    output?: string[];
    /** A database shared with other copies (tests/ha): used as it is, and not dropped by stop(). */
    database?: { target: { url: string } };
  } = {},
): Promise<ControlPlaneProcess> {
  const database = options.database
    ? { target: options.database.target, drop: async () => {} }
    : await createTestDatabase();
  const target = database.target;
  const dataDir = await mkdtemp(path.join(tmpdir(), "e2e-cp-data-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const output: string[] = options.output ?? [];
  const child = spawn(process.execPath, [CONTROL_PLANE_ENTRY], {
    cwd: repositoryRoot,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: "127.0.0.1",
      PLATFORM_URL: url,
      PLATFORM_DATA_DIR: dataDir,
      DATABASE_URL: options.databaseUrl?.(target.url) ?? target.url,
      LOG_LEVEL: "warn",
      // No Traefik service on ports 80/443 of the test machine.
      PLATFORM_LOCAL_PROXY: "false",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk) => output.push(String(chunk)));
  child.stderr?.on("data", (chunk) => output.push(String(chunk)));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 60_000;
  let last = "no answer";
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(
        `the control plane exited (${child.exitCode ?? child.signalCode}) before it was healthy:\n${tail(output)}`,
      );
    }
    try {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      const body = await response.text();
      if (response.status === 200) return { url, child, output, stop };
      last = `${response.status} ${body.slice(0, 200)}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(`the control plane was not healthy within 60 s (last: ${last}):\n${tail(output)}`);
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
}

export interface DeploymentLog {
  /** The `log` events' data: "<ISO timestamp> <line>". */
  lines: string[];
  /** The `end` event's data. */
  end: { status: string; errorMessage: string | null };
}

/** A client of the public API: `/api/{router}.{procedure}`, queries as GET, mutations as POST. */
export class ApiClient {
  /** Session token sent as `Authorization: Bearer`. */
  token: string | undefined;

  constructor(readonly baseUrl: string) {}

  private headers(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }

  private async send<T>(name: string, init: RequestInit): Promise<ApiResponse<T>> {
    const response = await fetch(`${this.baseUrl}/api/${name}`, {
      ...init,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {}
    return { status: response.status, body: body as T };
  }

  /** GET with the input as plain query parameters. */
  query<T = any>(name: string, input: Record<string, unknown> = {}): Promise<ApiResponse<T>> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(input)) {
      if (value !== undefined)
        params.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
    }
    const qs = params.toString();
    return this.send(`${name}${qs ? `?${qs}` : ""}`, { method: "GET", headers: this.headers() });
  }

  /** POST with the input as a JSON body. */
  mutate<T = any>(name: string, input: unknown = {}): Promise<ApiResponse<T>> {
    return this.send(name, {
      method: "POST",
      headers: { ...this.headers(), "content-type": "application/json" },
      body: JSON.stringify(input),
    });
  }

  /** query() that throws with the answer unless it is a 200; returns the body. */
  async queryOk<T = any>(name: string, input: Record<string, unknown> = {}): Promise<T> {
    return ok(name, await this.query<T>(name, input));
  }

  /** mutate() that throws with the answer unless it is a 200; returns the body. */
  async mutateOk<T = any>(name: string, input: unknown = {}): Promise<T> {
    return ok(name, await this.mutate<T>(name, input));
  }

  /** Follows GET /api/deployment.logs (server-sent events) until its `end` event. */
  async followDeploymentLog(deploymentId: string, timeoutMs = 60_000): Promise<DeploymentLog> {
    const url = `${this.baseUrl}/api/deployment.logs?deploymentId=${encodeURIComponent(deploymentId)}`;
    const response = await fetch(url, { headers: this.headers(), signal: AbortSignal.timeout(timeoutMs) });
    if (response.status !== 200 || !response.body) {
      throw new Error(`deployment.logs answered ${response.status}: ${await response.text()}`);
    }
    const lines: string[] = [];
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true }).replaceAll("\r\n", "\n");
        for (let split = buffer.indexOf("\n\n"); split !== -1; split = buffer.indexOf("\n\n")) {
          const event = parseEvent(buffer.slice(0, split));
          buffer = buffer.slice(split + 2);
          if (event.event === "log") lines.push(event.data);
          else if (event.event === "end") return { lines, end: JSON.parse(event.data) };
        }
      }
    } catch (error) {
      throw new Error(
        `deployment.logs did not end (${(error as Error).message}); the log so far:\n${lines.join("\n")}`,
      );
    }
    throw new Error(`deployment.logs closed without an end event; the log so far:\n${lines.join("\n")}`);
  }
}

function ok<T>(name: string, response: ApiResponse<T>): T {
  if (response.status !== 200) {
    throw new Error(`${name} answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

/** One server-sent event block: its `event` and its `data` lines joined by newlines. */
function parseEvent(block: string): { event: string; data: string } {
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return { event, data: data.join("\n") };
}
