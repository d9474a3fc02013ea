/**
 * What the benchmarks share: the control plane run as its own process the way `npm start` runs
 * it, a scratch Postgres database for it, the in-process control plane of the deploy benchmarks (bench:deploy, bench:database)
 * with an owner and a project, the docker CLI, and the figures they print.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../apps/control-plane/src/testing/harness.ts";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");

/**
 * The control plane as package.json's start script runs it in production (it builds first when
 * the build is stale, then execs plain node on the built JavaScript, so the child's pid is the
 * server's own), listening on 127.0.0.1:`port`.
 */
export function startControlPlane(port: number, env: Record<string, string>): ChildProcess {
  const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  return spawn("sh", ["-c", manifest.scripts.start], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
}

/** Runs the docker CLI; answers its trimmed stdout, throws on a non-zero exit. */
export const docker = async (args: string[]) =>
  (await run("docker", args, { maxBuffer: 16 << 20 })).stdout.trim();

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

export interface ScratchDatabase {
  /** The new database's URL (the admin URL with its name). */
  url: string;
  /** Drops the database (closing what is still connected) and the admin connection. */
  drop(): Promise<void>;
}

/** Creates `<prefix>_<random>` through `adminUrl` (TEST_DATABASE_URL or the local test server). */
export async function createScratchDatabase(
  prefix: string,
  adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

export interface BenchPlatform {
  platform: TestPlatform;
  /** Calls a procedure as the owner; throws unless it answers 200. */
  call(name: string, input: Record<string, unknown>): Promise<any>;
  /** The environment of the project "Bench" the rounds deploy into. */
  environmentId: string;
}

/**
 * The control plane in this process on NATS and a fresh Postgres database, its agent on the
 * local Docker Engine (work files in `mainDirectory`), with its own deployment stream
 * (`BENCH_<NAME>_<pid>`), an owner and a project.
 */
export async function startBenchPlatform(
  name: string,
  env: Record<string, string>,
  mainDirectory: string,
): Promise<BenchPlatform> {
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const platform = await startTestPlatform(
    { NATS_URL: natsUrl, LOG_LEVEL: "warn", ...env },
    {
      agents: { localAgent: { mainDirectory } },
      deployments: {
        stream: `BENCH_${name.toUpperCase()}_${process.pid}`,
        subjectPrefix: `bench.${name}.${process.pid}`,
      },
    },
  );
  try {
    const owner = await platform.registerOwner();
    const call = (procedure: string, input: Record<string, unknown>) =>
      platform.mutateOk(procedure, input, { token: owner.token });
    const project = await call("project.create", { name: "Bench" });
    return { platform, call, environmentId: project.environment.environmentId };
  } catch (error) {
    await platform.close();
    throw error;
  }
}

/** One line per round of a platform-versus-docker-CLI benchmark. */
export function printRound(round: number, rounds: number, platformMs: number, cliMs: number): void {
  process.stdout.write(
    `round ${round + 1}/${rounds}: platform ${platformMs.toFixed(0)} ms, docker CLI ${cliMs.toFixed(0)} ms\n`,
  );
}

/** The medians of both ways and their ratio, under `title`; `platformWay` names the procedure, `cliWay` the reference. */
export function printComparison(
  title: string,
  platformWay: string,
  viaPlatform: number[],
  viaCli: number[],
  cliWay = "docker service create (bare CLI)",
) {
  const platformMs = median(viaPlatform);
  const cliMs = median(viaCli);
  console.log(`\n${title} (median of ${viaPlatform.length} rounds)`);
  console.log(`  ${platformWay.padEnd(42)}  ${platformMs.toFixed(0).padStart(7)} ms`);
  console.log(`  ${cliWay.padEnd(42)}  ${cliMs.toFixed(0).padStart(7)} ms`);
  console.log(`  ${"ratio platform / CLI".padEnd(42)}  ${(platformMs / cliMs).toFixed(2).padStart(7)}`);
}

/**
 * Registers the first user of a fresh control plane and returns an API key of its organization.
 * Benchmarks load the API with the key, as scripts do: sessions spend a per-session rate limit
 * (PLATFORM_SESSION_RATE_LIMIT) that a load of thousands of requests would turn into 429s.
 */
export async function registerBenchOwner(base: string, email: string): Promise<{ apiKey: string }> {
  const register = await fetch(`${base}/api/auth.register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "bench-password-1", name: "Bench" }),
  });
  if (!register.ok) throw new Error(`auth.register failed: ${await register.text()}`);
  const owner = (await register.json()) as { token: string; user: { organizationId: string } };
  const created = await fetch(`${base}/api/user.createApiKey`, {
    method: "POST",
    headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", metadata: { organizationId: owner.user.organizationId } }),
  });
  if (!created.ok) throw new Error(`user.createApiKey failed: ${await created.text()}`);
  return { apiKey: ((await created.json()) as { key: string }).key };
}

/** Polls 127.0.0.1:port until it answers `body` (within `timeoutMs`); answers the moment it did. */
export async function servedAt(port: number, body: string, timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      if ((await response.text()).trim() === body) return performance.now();
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`nothing served "${body}" on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

/**
 * Builds `platform-bench/<name>:<pid>`: busybox's httpd serving `body` on 8080, from a context
 * directory of its own (the caller removes the image and the directory).
 */
export async function buildServingImage(
  name: string,
  body: string,
): Promise<{ tag: string; context: string }> {
  const baseImage = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
  const tag = `platform-bench/${name}:${process.pid}`;
  const context = await mkdtemp(path.join(tmpdir(), `platform-bench-${name}-`));
  await writeFile(path.join(context, "index.html"), body);
  await writeFile(
    path.join(context, "Dockerfile"),
    `FROM ${baseImage}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
  );
  await docker(["build", "--quiet", "--tag", tag, context]);
  return { tag, context };
}
