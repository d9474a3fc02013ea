/**
 * `pnpm bench:api`: requests per second and p50/p99 latency of project.all (100 projects) and
 * project.create, served by the control plane on Postgres, beside a bare Hono hello-world
 * measured in the same run on the same machine. Each server runs in its own process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import pg from "pg";

const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const root = path.resolve(import.meta.dirname, "..");
const tsx = path.join(root, "node_modules/.bin/tsx");

function start(script: string, port: number, env: Record<string, string> = {}): ChildProcess {
  return spawn(tsx, [script], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not come up`);
}

interface Figures {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

async function measure(name: string, options: autocannon.Options): Promise<Figures> {
  // Warm up, then measure.
  await autocannon({ ...options, duration: 2, connections });
  const result = await autocannon({ ...options, duration: durationSeconds, connections });
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function main(): Promise<void> {
  const databaseName = `platform_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${databaseName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${databaseName}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), "platform-bench-"));

  const apiPort = 3911;
  const helloPort = 3912;
  const api = start("apps/control-plane/src/main.ts", apiPort, {
    DATABASE_URL: url.toString(),
    PLATFORM_LOCAL_PROXY: "false",
    PLATFORM_DATA_DIR: dataDir,
  });
  const hello = start("bench/hello-hono.ts", helloPort);
  try {
    await waitFor(`http://127.0.0.1:${apiPort}/health`);
    await waitFor(`http://127.0.0.1:${helloPort}/`);
    const base = `http://127.0.0.1:${apiPort}`;
    const register = await fetch(`${base}/api/auth.register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bench@example.com", password: "bench-password-1", name: "Bench" }),
    });
    const { token } = (await register.json()) as { token: string };
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    for (let i = 0; i < 100; i++) {
      const created = await fetch(`${base}/api/project.create`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: `project ${i}`, description: "benchmark project" }),
      });
      if (!created.ok) throw new Error(`project.create failed: ${await created.text()}`);
    }

    const baseline = await measure("bare Hono hello-world", { url: `http://127.0.0.1:${helloPort}/` });
    const all = await measure("project.all (100 projects)", { url: `${base}/api/project.all`, headers });
    const create = await measure("project.create", {
      url: `${base}/api/project.create`,
      method: "POST",
      headers,
      body: JSON.stringify({ name: "bench project", description: "created under load" }),
    });

    console.log(`\nbench:api — ${durationSeconds}s per run, ${connections} connections, Postgres\n`);
    console.log("procedure                     req/s    p50 ms   p99 ms  errors  ratio to bare Hono");
    for (const figures of [baseline, all, create]) {
      const ratio = (figures.requestsPerSecond / baseline.requestsPerSecond).toFixed(3);
      console.log(
        `${figures.name.padEnd(28)} ${String(figures.requestsPerSecond).padStart(6)}  ${String(figures.p50Ms).padStart(7)}  ${String(figures.p99Ms).padStart(7)}  ${String(figures.errors).padStart(6)}  ${ratio}`,
      );
    }
  } finally {
    api.kill("SIGTERM");
    hello.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await admin.query(`drop database if exists ${databaseName} with (force)`);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
