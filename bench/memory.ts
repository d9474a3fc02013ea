/**
 * `pnpm bench:memory`: resident memory (VmRSS of the measured process itself, from
 * /proc/<pid>/status, and PSS from /proc/<pid>/smaps_rollup) and cold start, each beside a
 * reference measured in the same run:
 *
 * - the built control plane (dist/, `node` as `npm start` runs it) on the machine's external
 *   Postgres and on the embedded PostgreSQL (no DATABASE_URL), idle and after 10,000
 *   authenticated project.all requests; beside a bare `node -e` http server and the same
 *   sources run under tsx (`node --import tsx`). On the embedded PostgreSQL the PSS is the
 *   control plane's plus its whole postmaster tree's (PSS shares the server's shared memory
 *   fairly among its processes, where summed RSS would count it once per process);
 * - the built agent connected to NATS, idle, beside its sources under tsx;
 * - the cold start of the control plane to its first `/health` 200 on an already-migrated
 *   Postgres database (median of BENCH_STARTS runs), built and under tsx; and on the embedded
 *   PostgreSQL: the first start (initdb, server start, migrations, listening) and later starts
 *   (the server started again after a clean stop: median of BENCH_STARTS), and a start after a
 *   SIGKILL of the control plane (its server still running, reused).
 *
 * Ports are free ones picked at run time; Postgres and NATS come from TEST_DATABASE_URL and
 * NATS_URL. The control plane runs without NATS (its in-process queue), so that it does not
 * touch the shared NATS's streams; the agent needs NATS and gets it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import pg from "pg";
import { freePort } from "../apps/agent/src/testing/net.ts";
import { postmasterPid, processTree } from "../apps/control-plane/src/testing/processes.ts";
import { AgentClient, connect, NatsAgentTransport } from "../packages/agent-protocol/src/index.ts";
import { registerBenchOwner } from "./support.ts";

const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const requests = Number(process.env.BENCH_REQUESTS ?? 10_000);
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 3000);
const starts = Number(process.env.BENCH_STARTS ?? 5);
const root = path.resolve(import.meta.dirname, "..");

/** How the control plane and the agent are run: built (as `npm start` runs it) or from the sources. */
type Runtime = "built" | "tsx";
const CONTROL_PLANE = {
  built: ["dist/control-plane/main.js"],
  tsx: ["--import", "tsx", "apps/control-plane/src/main.ts"],
};
const AGENT = { built: ["dist/agent/main.js"], tsx: ["--import", "tsx", "apps/agent/src/main.ts"] };
/**
 * The fixed lines deploy/agent/install.sh writes into the installed agent's environment (its
 * agent.env: MALLOC_MMAP_THRESHOLD_, NODE_OPTIONS), so that the built agent runs as installed.
 */
const AGENT_PRODUCTION_ENV = agentProductionEnv();

function agentProductionEnv(): Record<string, string> {
  const script = readFileSync(path.join(root, "deploy/agent/install.sh"), "utf8");
  const env = Object.fromEntries(
    [...script.matchAll(/^\s*printf '([A-Z_]+)=([^%'\\]+)\\n'$/gm)].map(([, name, value]) => [name, value]),
  );
  if (!env.MALLOC_MMAP_THRESHOLD_)
    throw new Error("deploy/agent/install.sh writes no MALLOC_MMAP_THRESHOLD_");
  return env as Record<string, string>;
}
/**
 * The environment and node flags of `npm start` (package.json), so that the built figures are
 * the production ones:
 * - MALLOC_MMAP_THRESHOLD_=131072 pins glibc's default: without it, once a large block (the
 *   16 MiB of a password's scrypt, on a libuv worker thread) has been freed, glibc raises the
 *   threshold and serves the next ones from that thread's arena, whose pages then stay resident
 *   after free (about 16 MiB per worker thread that ever hashed a password).
 * - --max-semi-space-size=4: V8 grows the young generation to 2 x 16 MiB while the control
 *   plane starts (module loading, migrations) and keeps it, about 20 MiB of resident memory an
 *   idle process never uses; 4 MiB semi-spaces showed no req/s change on project.all here.
 */
const START = productionStart();

function productionStart(): { env: Record<string, string>; flags: string[] } {
  const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const start = /((?:[A-Z_]+=\S+ )*)exec node ((?:--\S+ )*)dist\/control-plane\/main\.js/.exec(
    manifest.scripts.start,
  );
  if (!start) throw new Error("package.json's start script does not exec node dist/control-plane/main.js");
  const words = (text: string | undefined) => (text ?? "").split(" ").filter(Boolean);
  const env = Object.fromEntries(
    words(start[1]).map((assignment) => assignment.split("=", 2) as [string, string]),
  );
  return { env, flags: words(start[2]) };
}

const children = new Set<ChildProcess>();

function startNode(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await Promise.race([exited, sleep(10_000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function rssMiB(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
}

/** The PSS of these processes, in MiB (a process gone meanwhile counts nothing). */
function pssMiB(pids: number[]): number {
  let kiB = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      kiB += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
    } catch {}
  }
  return kiB / 1024;
}

/** Polls `url` every 10 ms until it answers 200; the time since `since`, in ms. */
async function firstOk(
  url: string,
  child: ChildProcess,
  since: number,
  timeoutMs = 120_000,
): Promise<number> {
  while (performance.now() - since < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).status === 200) return performance.now() - since;
    } catch {}
    await sleep(10);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

interface Server {
  child: ChildProcess;
  base: string;
  startMs: number;
}

async function startControlPlane(runtime: Runtime, env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const args = runtime === "built" ? [...START.flags, ...CONTROL_PLANE.built] : CONTROL_PLANE.tsx;
  const started = performance.now();
  const child = startNode(args, {
    ...(runtime === "built" ? START.env : {}),
    PORT: String(port),
    HOST: "127.0.0.1",
    PLATFORM_LOCAL_PROXY: "false",
    ...env,
  });
  const base = `http://127.0.0.1:${port}`;
  const startMs = await firstOk(`${base}/health`, child, started);
  return { child, base, startMs };
}

/** A user with an API key and a few projects, so that project.all does real work. */
async function bearerOf(base: string): Promise<string> {
  const { apiKey } = await registerBenchOwner(base, "bench@example.com");
  for (let i = 0; i < 10; i++) {
    const created = await fetch(`${base}/api/project.create`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `project ${i}`, description: "memory benchmark" }),
    });
    if (!created.ok) throw new Error(`project.create failed: ${await created.text()}`);
  }
  return apiKey;
}

async function load(url: string, headers: Record<string, string> = {}): Promise<void> {
  const result = await autocannon({ url, headers, amount: requests, connections: 10 });
  const failed = result.errors + result.non2xx;
  if (failed > 0) throw new Error(`${url}: ${failed} of ${requests} requests failed`);
}

interface Row {
  what: string;
  idle: number;
  after?: number;
  /** PSS of the process and, on the embedded PostgreSQL, of its postmaster tree. */
  pssIdle?: number;
  pssAfter?: number;
}

/**
 * Idle RSS once settled, and RSS after `requests` requests (then settled again); with
 * `pssOf`, the PSS of those processes too.
 */
async function measureServer(
  what: string,
  child: ChildProcess,
  url: string,
  headers?: Record<string, string>,
  pssOf?: () => number[],
): Promise<Row> {
  await sleep(settleMs);
  const idle = rssMiB(child);
  const pssIdle = pssOf && pssMiB(pssOf());
  await load(url, headers);
  await sleep(settleMs);
  return { what, idle, after: rssMiB(child), pssIdle, pssAfter: pssOf && pssMiB(pssOf()) };
}

async function bareHttpServer(): Promise<Row> {
  const port = await freePort();
  const child = startNode(
    ["-e", `require("node:http").createServer((q, s) => s.end("ok")).listen(${port}, "127.0.0.1")`],
    {},
  );
  await firstOk(`http://127.0.0.1:${port}/`, child, performance.now());
  try {
    return await measureServer("bare `node -e` http server", child, `http://127.0.0.1:${port}/`);
  } finally {
    await stop(child);
  }
}

async function controlPlaneRow(what: string, runtime: Runtime, env: Record<string, string>): Promise<Row> {
  const server = await startControlPlane(runtime, env);
  const embedded = !env.DATABASE_URL;
  const pssOf = () => [
    server.child.pid as number,
    ...(embedded ? processTree(postmasterPid(env.PLATFORM_DATA_DIR as string)) : []),
  ];
  try {
    const token = await bearerOf(server.base);
    const url = `${server.base}/api/project.all`;
    return await measureServer(what, server.child, url, { authorization: `Bearer ${token}` }, pssOf);
  } finally {
    await stop(server.child);
  }
}

async function agentRow(what: string, runtime: Runtime): Promise<Row> {
  const serverId = `bench-memory-${process.pid}-${runtime}`;
  const mainDirectory = mkdtempSync(path.join(tmpdir(), "platform-bench-memory-agent-"));
  const child = startNode(runtime === "built" ? AGENT.built : AGENT.tsx, {
    ...(runtime === "built" ? AGENT_PRODUCTION_ENV : {}),
    NATS_URL: natsUrl,
    AGENT_SERVER_ID: serverId,
    AGENT_CONFIG_FILE: path.join(mainDirectory, "absent.json"),
    AGENT_MAIN_DIR: mainDirectory,
  });
  const connection = await connect({ servers: natsUrl });
  const client = new AgentClient(new NatsAgentTransport(connection), 5000);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.ping(serverId, 500);
        break;
      } catch (error) {
        if (attempt > 120) throw new Error(`the agent did not answer: ${(error as Error).message}`);
        await sleep(250);
      }
    }
    await sleep(settleMs);
    return { what, idle: rssMiB(child) };
  } finally {
    await connection.close();
    await stop(child);
    rmSync(mainDirectory, { recursive: true, force: true });
  }
}

async function coldStarts(runtime: Runtime, databaseUrl: string, dataDir: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < starts; i++) {
    const server = await startControlPlane(runtime, {
      DATABASE_URL: databaseUrl,
      PLATFORM_DATA_DIR: dataDir,
    });
    times.push(server.startMs);
    await stop(server.child);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;
}

/**
 * The embedded PostgreSQL's starts in a new data directory: the first (initialise, start,
 * migrate, listen), later ones after a clean stop (median of BENCH_STARTS), and one after a
 * SIGKILL of the control plane, whose server is then found running and reused.
 */
async function embeddedStarts(dataDir: string): Promise<{ first: number; later: number; afterKill: number }> {
  const env = { PLATFORM_DATA_DIR: dataDir };
  const firstServer = await startControlPlane("built", env);
  await stop(firstServer.child);
  const times: number[] = [];
  for (let i = 0; i < starts; i++) {
    const server = await startControlPlane("built", env);
    times.push(server.startMs);
    await stop(server.child);
  }
  const killed = await startControlPlane("built", env);
  killed.child.kill("SIGKILL");
  await new Promise((resolve) => killed.child.once("exit", resolve));
  const reused = await startControlPlane("built", env);
  await stop(reused.child);
  return {
    first: firstServer.startMs,
    later: times.sort((a, b) => a - b)[Math.floor(times.length / 2)] as number,
    afterKill: reused.startMs,
  };
}

async function createDatabase(admin: pg.Client): Promise<{ name: string; url: string }> {
  const name = `platform_bench_${randomBytes(4).toString("hex")}`;
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

function mib(value: number | undefined): string {
  return value === undefined ? "" : value.toFixed(1);
}

async function main(): Promise<void> {
  execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: root, stdio: "inherit" });
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const databases: string[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), "platform-bench-memory-"));
  // Entered by the embedded server's own system user when the bench runs as root.
  chmodSync(dataDir, 0o755);
  try {
    const rows: Row[] = [await bareHttpServer()];
    for (const runtime of ["built", "tsx"] as const) {
      const database = await createDatabase(admin);
      databases.push(database.name);
      rows.push(
        await controlPlaneRow(`control plane, Postgres, ${runtime}`, runtime, {
          DATABASE_URL: database.url,
          PLATFORM_DATA_DIR: path.join(dataDir, `postgres-${runtime}`),
        }),
      );
    }
    for (const runtime of ["built", "tsx"] as const) {
      rows.push(
        await controlPlaneRow(`control plane, embedded PG, ${runtime}`, runtime, {
          PLATFORM_DATA_DIR: path.join(dataDir, `embedded-${runtime}`),
        }),
      );
    }
    for (const runtime of ["built", "tsx"] as const)
      rows.push(await agentRow(`agent on NATS, ${runtime}`, runtime));

    // A migrated database: the first start migrates it, the timed ones find it up to date.
    const migrated = await createDatabase(admin);
    databases.push(migrated.name);
    await stop(
      (await startControlPlane("built", { DATABASE_URL: migrated.url, PLATFORM_DATA_DIR: dataDir })).child,
    );
    const coldBuilt = await coldStarts("built", migrated.url, dataDir);
    const coldTsx = await coldStarts("tsx", migrated.url, dataDir);
    const embedded = await embeddedStarts(path.join(dataDir, "embedded-starts"));

    console.log(`\nbench:memory — VmRSS in MiB after ${settleMs} ms idle, and after ${requests} requests`);
    console.log("(project.all with 10 projects, 10 connections; the bare server answers `ok`)\n");
    console.log("PSS: the control plane's, plus its postmaster tree's on the embedded PostgreSQL\n");
    const header = ["idle", "after", "PSS idle", "PSS after"].map((title) => title.padStart(10)).join("");
    console.log(`${"process".padEnd(38)}${header}`);
    for (const row of rows) {
      const figures = [row.idle, row.after, row.pssIdle, row.pssAfter].map((value) =>
        mib(value).padStart(10),
      );
      console.log(`${row.what.padEnd(38)}${figures.join("")}`);
    }
    console.log(`\ncold start to the first /health 200, migrated Postgres (median of ${starts}):`);
    console.log(
      `  built (${Object.entries(START.env)
        .map(([name, value]) => `${name}=${value} `)
        .join("")}node ${START.flags.join(" ")} dist/control-plane/main.js): ${coldBuilt.toFixed(0)} ms`,
    );
    console.log(`  sources under tsx (node --import tsx):      ${coldTsx.toFixed(0)} ms`);
    console.log("cold start to the first /health 200, embedded PostgreSQL (built):");
    console.log(`  first start (initdb, start, migrate, listen):  ${embedded.first.toFixed(0)} ms`);
    console.log(
      `  later start (server stopped with it; median of ${starts}): ${embedded.later.toFixed(0)} ms`,
    );
    console.log(`  start after a SIGKILL (server found running):   ${embedded.afterKill.toFixed(0)} ms`);
    const find = (what: string) => rows.find((row) => row.what === what)?.idle ?? Number.NaN;
    console.log("\ntargets:");
    console.log(
      `  control plane idle RSS on Postgres <= 110 MiB: ${mib(find("control plane, Postgres, built"))}`,
    );
    const agentEnv = Object.entries(AGENT_PRODUCTION_ENV).map(([name, value]) => `${name}=${value}`);
    console.log(
      `  agent idle RSS <= 64 MiB (${agentEnv.join(" ")} node dist/agent/main.js): ${mib(find("agent on NATS, built"))}`,
    );
    console.log(`  cold start <= 1000 ms: ${coldBuilt.toFixed(0)}`);
    const pss = (what: string) => rows.find((row) => row.what === what);
    const onEmbedded = pss("control plane, embedded PG, built");
    const onExternal = pss("control plane, Postgres, built");
    console.log(
      `  embedded: first start <= 5000 ms: ${embedded.first.toFixed(0)}; later starts <= 1500 ms: ${embedded.later.toFixed(0)}`,
    );
    console.log(
      `  embedded: PSS idle <= 150 MiB: ${mib(onEmbedded?.pssIdle)} (external Postgres, control plane only: ${mib(onExternal?.pssIdle)})`,
    );
    console.log(
      `  embedded: PSS after ${requests} requests <= 200 MiB: ${mib(onEmbedded?.pssAfter)} (external Postgres: ${mib(onExternal?.pssAfter)})`,
    );
  } finally {
    await Promise.all([...children].map(stop));
    for (const name of databases) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
