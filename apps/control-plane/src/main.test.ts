/**
 * The control plane as users start it (`npm start`: the built dist/control-plane/main.js on
 * Node's own ESM loader, the embedded PostgreSQL), not through Vitest's module transform: catches
 * imports that only work under the test runner. A first start killed (SIGKILL) while it creates the embedded database starts
 * again, and a data directory of PGlite (the embedded database of earlier versions) is refused.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, describe, expect, it, vi } from "vitest";
import { CONTROL_PLANE_ENTRY } from "../../../scripts/built-entries.mjs";

const repositoryRoot = fileURLToPath(new URL("../../..", import.meta.url));
let child: ChildProcess | undefined;
let dataDirectory: string | undefined;

afterAll(async () => {
  if (child) await stop(child);
  if (dataDirectory) await rm(dataDirectory, { recursive: true, force: true, maxRetries: 5 });
});

/**
 * A temporary data directory that the embedded server's system user can enter (when the test
 * runs as root): mkdtemp makes it 0700.
 */
async function searchableTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  return dir;
}

/** SIGTERM, and its exit awaited: the control plane stops its PostgreSQL server before it exits. */
async function stop(started: ChildProcess): Promise<void> {
  if (started.exitCode !== null || started.signalCode !== null) return;
  const exited = new Promise((resolve) => started.once("exit", resolve));
  started.kill("SIGTERM");
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
}

/** The control plane on the embedded PostgreSQL in `dataDir`, in a process group of its own. */
function startEmbedded(
  dataDir: string,
  port: number,
  output: string[],
  env: Record<string, string> = {},
): ChildProcess {
  const started = spawn(process.execPath, [CONTROL_PLANE_ENTRY], {
    cwd: repositoryRoot,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: "127.0.0.1",
      PLATFORM_DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      // A real traefik:v3 service on ports 80/443 of the test machine is not wanted here.
      PLATFORM_LOCAL_PROXY: "false",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  started.stdout?.on("data", (chunk) => output.push(String(chunk)));
  started.stderr?.on("data", (chunk) => output.push(String(chunk)));
  return started;
}

async function waitHealthy(started: ChildProcess, port: number, output: string[]): Promise<void> {
  await vi.waitFor(
    async () => {
      expect(started.exitCode, output.join("")).toBeNull();
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
    },
    { timeout: 60_000, interval: 250 },
  );
}

describe("pnpm start", () => {
  it("starts on the embedded PostgreSQL and serves health, the API and the agent bootstrap", async () => {
    dataDirectory = await searchableTempDir("cp-start-");
    const port = await freePort();
    const output: string[] = [];
    // Requests forwarded by a "proxy" on 127.0.0.1 stand for another machine's (issue 37 finding 11).
    child = startEmbedded(dataDirectory, port, output, { PLATFORM_TRUSTED_PROXIES: "127.0.0.1" });
    const base = `http://127.0.0.1:${port}`;
    await waitHealthy(child, port, output);
    expect(await (await fetch(`${base}/health`)).json()).toMatchObject({
      status: "ok",
      checks: { database: { kind: "embedded" } },
    });
    const openapi = await fetch(`${base}/api/openapi.json`);
    expect(openapi.status).toBe(200);
    const script = await fetch(`${base}/agent/install.sh`);
    expect(script.status).toBe(200);
    expect(await script.text()).toMatch(/^#!\/bin\/sh/);

    // The start printed the set-up token another machine's first registration needs.
    const printed = /Set-up token: ([\w-]+) .*\/\?setup=([\w-]+)/.exec(output.join(""));
    expect(printed, output.join("")).not.toBeNull();
    expect(printed![2]).toBe(printed![1]);
    const register = (setupToken?: string) =>
      fetch(`${base}/api/auth.register`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.7" },
        body: JSON.stringify({
          email: "owner@example.com",
          password: "correct-horse-battery",
          name: "Owner",
          setupToken,
        }),
      });
    expect((await register()).status).toBe(403);
    expect((await register(printed![1])).status).toBe(200);
  }, 90_000);

  it("starts again after a first start was killed (SIGKILL) while creating the embedded database", async () => {
    const dataDir = await searchableTempDir("cp-killed-");
    const output: string[] = [];
    try {
      const port = await freePort();
      const first = startEmbedded(dataDir, port, output);
      // The database is being created in a sibling directory, renamed into place when complete.
      await vi.waitFor(
        async () => {
          expect((await readdir(dataDir)).some((entry) => entry.startsWith("postgres.initializing-"))).toBe(
            true,
          );
        },
        { timeout: 30_000, interval: 20 },
      );
      process.kill(-(first.pid as number), "SIGKILL");
      await new Promise((resolve) => first.once("exit", resolve));
      expect(existsSync(path.join(dataDir, "postgres", "PG_VERSION"))).toBe(false);

      const second = startEmbedded(dataDir, port, output);
      try {
        await waitHealthy(second, port, output);
        const health = await (await fetch(`http://127.0.0.1:${port}/health`)).json();
        expect(health).toMatchObject({ status: "ok", checks: { database: { kind: "embedded" } } });
        expect((await readdir(dataDir)).filter((entry) => entry.startsWith("postgres"))).toEqual([
          "postgres",
          "postgres.password",
        ]);
      } finally {
        await stop(second);
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
    }
  }, 120_000);

  it("refuses a data directory that holds a PGlite database, saying what to do, and changes nothing", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "cp-pglite-"));
    const output: string[] = [];
    try {
      // What PGlite left: a Postgres data directory under <PLATFORM_DATA_DIR>/pglite.
      await mkdir(path.join(dataDir, "pglite", "base"), { recursive: true });
      await writeFile(path.join(dataDir, "pglite", "PG_VERSION"), "17\n");
      const started = startEmbedded(dataDir, await freePort(), output);
      const code = await new Promise((resolve) => started.once("exit", resolve));
      expect(code).toBe(1);
      const said = output.join("");
      expect(said).toContain(`${path.join(dataDir, "pglite")} holds a PGlite database`);
      expect(said).toContain(`mv ${path.join(dataDir, "pglite")} ${path.join(dataDir, "pglite.old")}`);
      expect((await readdir(dataDir)).sort()).toEqual(["pglite"]);
    } finally {
      await rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
    }
  }, 60_000);
});
