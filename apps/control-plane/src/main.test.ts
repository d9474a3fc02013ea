/**
 * The control plane as users start it (`pnpm start`: tsx, Node's own ESM loader, embedded PGlite),
 * not through Vitest's module transform: catches imports that only work under the test runner.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, describe, expect, it, vi } from "vitest";

const repositoryRoot = fileURLToPath(new URL("../../..", import.meta.url));
let child: ChildProcess | undefined;
let dataDirectory: string | undefined;

afterAll(async () => {
  child?.kill("SIGTERM");
  if (dataDirectory) await rm(dataDirectory, { recursive: true, force: true });
});

describe("pnpm start", () => {
  it("starts on embedded PGlite and serves health, the API and the agent bootstrap", async () => {
    dataDirectory = await mkdtemp(path.join(tmpdir(), "cp-start-"));
    const port = await freePort();
    const output: string[] = [];
    child = spawn(process.execPath, ["--import", "tsx", "apps/control-plane/src/main.ts"], {
      cwd: repositoryRoot,
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        HOST: "127.0.0.1",
        PLATFORM_DATA_DIR: dataDirectory,
        LOG_LEVEL: "warn",
        // A real traefik:v3 service on ports 80/443 of the test machine is not wanted here.
        PLATFORM_LOCAL_PROXY: "false",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (chunk) => output.push(String(chunk)));
    child.stderr?.on("data", (chunk) => output.push(String(chunk)));
    const base = `http://127.0.0.1:${port}`;

    await vi.waitFor(
      async () => {
        expect(child?.exitCode, output.join("")).toBeNull();
        const health = await fetch(`${base}/health`);
        expect(health.status).toBe(200);
      },
      { timeout: 60_000, interval: 250 },
    );
    expect(await (await fetch(`${base}/health`)).json()).toMatchObject({
      status: "ok",
      checks: { database: { kind: "pglite" } },
    });
    const openapi = await fetch(`${base}/api/openapi.json`);
    expect(openapi.status).toBe(200);
    const script = await fetch(`${base}/agent/install.sh`);
    expect(script.status).toBe(200);
    expect(await script.text()).toMatch(/^#!\/bin\/sh/);
  }, 90_000);
});
