/**
 * `pnpm bench:api`: requests per second and p50/p99 latency of project.all (100 projects),
 * project.one, application.one and project.create, served by the control plane on Postgres and
 * called with an API key, beside two references measured in the same run on the same machine:
 * a bare Hono hello-world, and the minimal same-stack server of bench/reference-server.ts that
 * answers project.all with the same bytes (checked) from the same rows. Each server runs in its
 * own process, on a port from the environment (BENCH_API_PORT, BENCH_HELLO_PORT,
 * BENCH_REFERENCE_PORT) or else a free one the OS gives. The control plane runs as `npm start`
 * runs it in production (package.json's start script: built JavaScript under plain node).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { createScratchDatabase, startControlPlane } from "./support.ts";

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

/** The port named by `variable`, else one the OS reports free. */
async function portFrom(variable: string): Promise<number> {
  if (process.env[variable]) return Number(process.env[variable]);
  return await new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
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
  const database = await createScratchDatabase("platform_bench");
  const dataDir = mkdtempSync(path.join(tmpdir(), "platform-bench-"));

  const apiPort = await portFrom("BENCH_API_PORT");
  const helloPort = await portFrom("BENCH_HELLO_PORT");
  const referencePort = await portFrom("BENCH_REFERENCE_PORT");
  const api = startControlPlane(apiPort, {
    DATABASE_URL: database.url,
    PLATFORM_LOCAL_PROXY: "false",
    PLATFORM_DATA_DIR: dataDir,
  });
  const hello = start("bench/hello-hono.ts", helloPort);
  let reference: ChildProcess | undefined;
  try {
    await waitFor(`http://127.0.0.1:${apiPort}/health`);
    await waitFor(`http://127.0.0.1:${helloPort}/`);
    const base = `http://127.0.0.1:${apiPort}`;
    const register = await fetch(`${base}/api/auth.register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bench@example.com", password: "bench-password-1", name: "Bench" }),
    });
    const owner = (await register.json()) as { token: string; user: { organizationId: string } };
    const call = async (name: string, input: unknown) => {
      const response = await fetch(`${base}/api/${name}`, {
        method: "POST",
        headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
        body: JSON.stringify(input),
      });
      if (!response.ok) throw new Error(`${name} failed: ${await response.text()}`);
      return (await response.json()) as Record<string, any>;
    };
    // The benchmark calls with an API key (no rate limit, no usage budget), as scripts do.
    const { key } = await call("user.createApiKey", {
      name: "bench",
      metadata: { organizationId: owner.user.organizationId },
    });
    const headers = { "x-api-key": key as string, "content-type": "application/json" };
    let first: { projectId: string; environmentId: string } | undefined;
    for (let i = 0; i < 100; i++) {
      const created = await call("project.create", {
        name: `project ${i}`,
        description: "benchmark project",
      });
      first ??= { projectId: created.project.projectId, environmentId: created.environment.environmentId };
    }
    const application = await call("application.create", {
      name: "bench app",
      environmentId: first!.environmentId,
    });

    reference = start("bench/reference-server.ts", referencePort, { DATABASE_URL: database.url });
    await waitFor(`http://127.0.0.1:${referencePort}/health`);
    const referenceUrl = `http://127.0.0.1:${referencePort}/api/project.all`;
    const [ours = "", theirs = ""] = await Promise.all(
      [`${base}/api/project.all`, referenceUrl].map(async (u) => (await fetch(u, { headers })).text()),
    );
    if (ours === "" || ours !== theirs) {
      let at = 0;
      while (at < ours.length && ours[at] === theirs[at]) at++;
      throw new Error(
        `the reference server does not send project.all's bytes: from byte ${at}, ours ${ours.slice(at, at + 160)} / the reference's ${theirs.slice(at, at + 160)}`,
      );
    }

    const baseline = await measure("bare Hono hello-world", { url: `http://127.0.0.1:${helloPort}/` });
    const same = await measure("same-stack reference", { url: referenceUrl, headers });
    const figures = [
      baseline,
      same,
      await measure(`project.all (100 projects, ${Math.round(ours.length / 1024)} KB)`, {
        url: `${base}/api/project.all`,
        headers,
      }),
      await measure("project.one", {
        url: `${base}/api/project.one?projectId=${first!.projectId}`,
        headers,
      }),
      await measure("application.one", {
        url: `${base}/api/application.one?applicationId=${application.applicationId}`,
        headers,
      }),
      await measure("project.create", {
        url: `${base}/api/project.create`,
        method: "POST",
        headers,
        body: JSON.stringify({ name: "bench project", description: "created under load" }),
      }),
    ];

    console.log(`\nbench:api — ${durationSeconds}s per run, ${connections} connections, Postgres\n`);
    console.log(
      `${"what".padEnd(36)} ${"req/s".padStart(6)}  ${"p50 ms".padStart(7)}  ${"p99 ms".padStart(7)}  ${"errors".padStart(6)}  ${"÷ bare Hono".padStart(11)}  ${"÷ reference".padStart(11)}`,
    );
    for (const f of figures) {
      const toBare = (f.requestsPerSecond / baseline.requestsPerSecond).toFixed(4);
      const toReference = (f.requestsPerSecond / same.requestsPerSecond).toFixed(2);
      console.log(
        `${f.name.padEnd(36)} ${String(f.requestsPerSecond).padStart(6)}  ${String(f.p50Ms).padStart(7)}  ${String(f.p99Ms).padStart(7)}  ${String(f.errors).padStart(6)}  ${toBare.padStart(11)}  ${toReference.padStart(11)}`,
      );
    }
  } finally {
    api.kill("SIGTERM");
    hello.kill("SIGTERM");
    reference?.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
