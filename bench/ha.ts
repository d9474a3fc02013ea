/**
 * `pnpm bench:ha`: several control planes on one database (issue 40). Requests per second of
 * project.all (100 projects) and application.one, called with an API key, with one, two and three
 * copies on this machine (the client spreads its connections evenly over the copies, as a
 * round-robin balancer would); then the time from kill -9 of the copy running a deployment to the
 * deployment done on another copy, beside the lease time it waits for (LEASE_MS). Copies differ
 * only in PLATFORM_INSTANCE_ID, PORT and PLATFORM_DATA_DIR; without NATS (each copy's in-process
 * queue and agent). Prints figures, asserts nothing.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { LEASE_MS } from "../apps/control-plane/src/deployments/leases.ts";
import { createScratchDatabase, docker, startControlPlane } from "./support.ts";

const durationSeconds = Number(process.env.BENCH_SECONDS ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 12);
const IMAGE = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
const SECRET = "bench-ha-secret-key-0123456789abcdef0123";

async function freePort(): Promise<number> {
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
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not come up`);
}

interface Copy {
  base: string;
  child: ChildProcess;
  dataDir: string;
}

async function startCopy(databaseUrl: string, index: number): Promise<Copy> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), `platform-bench-ha-${index}-`));
  const child = startControlPlane(port, {
    DATABASE_URL: databaseUrl,
    PLATFORM_LOCAL_PROXY: "false",
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_INSTANCE_ID: `bench-copy-${index}`,
    PLATFORM_SECRET_KEY: SECRET,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/health`);
  return { base, child, dataDir };
}

/** Requests per second of `route` spread over the copies, summed. */
async function measure(copies: Copy[], route: string, headers: Record<string, string>): Promise<number> {
  const run = (duration: number) =>
    Promise.all(
      copies.map((copy) =>
        autocannon({
          url: `${copy.base}${route}`,
          headers,
          duration,
          connections: Math.max(1, Math.round(connections / copies.length)),
        }),
      ),
    );
  await run(2);
  const results = await run(durationSeconds);
  const errors = results.reduce((sum, result) => sum + result.errors + result.non2xx, 0);
  if (errors > 0) throw new Error(`${route}: ${errors} failed requests`);
  return Math.round(results.reduce((sum, result) => sum + result.requests.average, 0));
}

async function main(): Promise<void> {
  const database = await createScratchDatabase("platform_bench_ha");
  const copies: Copy[] = [];
  let serviceName: string | undefined;
  try {
    copies.push(await startCopy(database.url, 1));
    const [first] = copies as [Copy];
    const register = await fetch(`${first.base}/api/auth.register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bench@example.com", password: "bench-password-1", name: "Bench" }),
    });
    const owner = (await register.json()) as { token: string; user: { organizationId: string } };
    const call = async (base: string, name: string, input: unknown) => {
      const response = await fetch(`${base}/api/${name}`, {
        method: "POST",
        headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
        body: JSON.stringify(input),
      });
      if (!response.ok) throw new Error(`${name} failed: ${await response.text()}`);
      return (await response.json()) as Record<string, any>;
    };
    const { key } = await call(first.base, "user.createApiKey", {
      name: "bench",
      metadata: { organizationId: owner.user.organizationId },
    });
    const headers = { "x-api-key": key as string };
    let environmentId: string | undefined;
    for (let i = 0; i < 100; i++) {
      const created = await call(first.base, "project.create", { name: `project ${i}` });
      environmentId ??= created.environment.environmentId as string;
    }
    const application = await call(first.base, "application.create", { name: "bench app", environmentId });
    const { applicationId } = application;

    const rows: { copies: number; projectAll: number; applicationOne: number }[] = [];
    for (let count = 1; count <= 3; count++) {
      while (copies.length < count) copies.push(await startCopy(database.url, copies.length + 1));
      rows.push({
        copies: count,
        projectAll: await measure(copies, "/api/project.all", headers),
        applicationOne: await measure(copies, `/api/application.one?applicationId=${applicationId}`, headers),
      });
    }
    console.log(
      `\nrequests/s on this machine (${connections} connections spread over the copies, ${durationSeconds} s)`,
    );
    console.log("copies  project.all  application.one");
    for (const row of rows) {
      console.log(`${String(row.copies).padEnd(8)}${String(row.projectAll).padEnd(13)}${row.applicationOne}`);
    }

    // Takeover: the copy that accepted the deployment runs it (its in-process queue); kill -9 it.
    serviceName = application.appName as string;
    await call(first.base, "application.saveDockerProvider", { applicationId, dockerImage: IMAGE });
    await call(first.base, "application.update", {
      applicationId,
      command: `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`,
    });
    const other = copies[1]!;
    const status = async () => {
      const response = await fetch(`${other.base}/api/deployment.all?applicationId=${applicationId}`, {
        headers,
      });
      const all = (await response.json()) as { status: string }[];
      return all.map((deployment) => deployment.status);
    };
    await call(first.base, "application.deploy", { applicationId });
    while (!(await status()).includes("running")) await new Promise((resolve) => setTimeout(resolve, 20));
    first.child.kill("SIGKILL");
    const killedAt = Date.now();
    for (;;) {
      const statuses = await status();
      if (statuses.length > 0 && statuses.every((s) => s === "done" || s === "error")) {
        console.log(
          `\nkill -9 of the copy running a deployment -> done on another copy: ${((Date.now() - killedAt) / 1000).toFixed(1)} s (statuses ${statuses.join(",")}); lease time ${LEASE_MS / 1000} s`,
        );
        break;
      }
      if (Date.now() - killedAt > 180_000)
        throw new Error(`not taken over within 180 s: ${statuses.join(",")}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    for (const copy of copies) {
      copy.child.kill("SIGKILL");
      rmSync(copy.dataDir, { recursive: true, force: true });
    }
    if (serviceName) await docker(["service", "rm", serviceName]).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    await database.drop();
  }
}

await main();
