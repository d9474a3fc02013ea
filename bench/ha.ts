/**
 * `pnpm bench:ha`: several control planes on one database (issue 40). Requests per second of
 * project.all (100 projects) and application.one, called with an API key, with one, two and three
 * copies on this machine (the client spreads its connections evenly over the copies, as a
 * round-robin balancer would); then the time from kill -9 of the copy running a deployment to the
 * deployment done on another copy, beside the lease time it waits for (LEASE_MS). Copies differ
 * only in PLATFORM_INSTANCE_ID, PORT and PLATFORM_DATA_DIR; without NATS (each copy's in-process
 * queue and agent). Then with NATS JetStream (a private server with JWT, issue 40 item 6e): one
 * copy runs a deployment with a second one of the application queued behind it, is killed with
 * SIGKILL and started again at once (same instance id): the time from its restart (and from the
 * kill) to the queued deployment running, and to both done; and the same kill with a second
 * copy alive, which finishes both. Prints figures, asserts nothing.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { startJwtNats } from "../apps/control-plane/src/agents/testing/nats-jwt.ts";
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

async function startCopy(
  databaseUrl: string,
  index: number,
  env: Record<string, string> = {},
  again?: { port: number; dataDir: string },
): Promise<Copy & { port: number }> {
  const port = again?.port ?? (await freePort());
  const dataDir = again?.dataDir ?? mkdtempSync(path.join(tmpdir(), `platform-bench-ha-${index}-`));
  const child = startControlPlane(port, {
    DATABASE_URL: databaseUrl,
    PLATFORM_LOCAL_PROXY: "false",
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_INSTANCE_ID: `bench-copy-${index}`,
    PLATFORM_SECRET_KEY: SECRET,
    ...env,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/health`);
  return { base, child, dataDir, port };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * With NATS: an application deployed twice in a row on copy 1 (of `copyCount`), copy 1 killed
 * with SIGKILL while it runs the first; with `restart`, started again at once. Prints the times
 * from the kill (and the restart) to the second deployment running and to both done.
 */
async function resumeWithNats(copyCount: number, restart: boolean): Promise<void> {
  const nats = await startJwtNats({ jetstream: true });
  const database = await createScratchDatabase("platform_bench_ha_nats");
  const copies: (Copy & { port: number })[] = [];
  let serviceName: string | undefined;
  try {
    for (let i = 1; i <= copyCount; i++) copies.push(await startCopy(database.url, 10 + i, nats.env));
    const first = copies[0]!;
    const register = await fetch(`${first.base}/api/auth.register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bench@example.com", password: "bench-password-1", name: "Bench" }),
    });
    const { token } = (await register.json()) as { token: string };
    const call = async (base: string, name: string, input: unknown) => {
      const response = await fetch(`${base}/api/${name}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(input),
      });
      if (!response.ok) throw new Error(`${name} failed: ${await response.text()}`);
      return (await response.json()) as Record<string, any>;
    };
    const created = await call(first.base, "project.create", { name: "resume" });
    const application = await call(first.base, "application.create", {
      name: "resume app",
      environmentId: created.environment.environmentId,
    });
    const { applicationId } = application;
    serviceName = application.appName as string;
    await call(first.base, "application.saveDockerProvider", { applicationId, dockerImage: IMAGE });
    await call(first.base, "application.update", {
      applicationId,
      command: `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`,
    });
    // Asked of the copy that stays, or of copy 1 once it is back.
    let observer = copies[copyCount - 1]!;
    const statuses = async (): Promise<string[]> => {
      try {
        const response = await fetch(`${observer.base}/api/deployment.all?applicationId=${applicationId}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        if (!response.ok) return [];
        const all = (await response.json()) as { deploymentId: string; status: string }[];
        return ids.map((id) => all.find((d) => d.deploymentId === id)?.status ?? "?");
      } catch {
        return [];
      }
    };
    const ids: string[] = [];
    ids.push((await call(first.base, "application.deploy", { applicationId })).deploymentId);
    ids.push((await call(first.base, "application.deploy", { applicationId })).deploymentId);
    while ((await statuses())[0] !== "running") await new Promise((resolve) => setTimeout(resolve, 20));
    first.child.kill("SIGKILL");
    const killedAt = Date.now();
    let restartedAt: number | undefined;
    if (restart) {
      await new Promise((resolve) => first.child.once("exit", resolve));
      copies[0] = await startCopy(database.url, 11, nats.env, first);
      restartedAt = Date.now();
      observer = copies[copyCount - 1]!;
    }
    let secondRunningAt: number | undefined;
    for (;;) {
      const now = await statuses();
      if (secondRunningAt === undefined && (now[1] === "running" || now[1] === "done"))
        secondRunningAt = Date.now();
      if (now.length === 2 && now.every((s) => s === "done" || s === "error")) break;
      if (Date.now() - killedAt > 180_000) throw new Error(`not resumed within 180 s: ${now.join(",")}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const doneAt = Date.now();
    const final = await statuses();
    const what = restart
      ? `NATS, ${copyCount} cop${copyCount === 1 ? "y" : "ies"}, the killed copy restarted at once (${seconds(restartedAt! - killedAt)} after the kill)`
      : `NATS, ${copyCount} copies, the other copy takes over`;
    console.log(`\n${what}:`);
    if (restartedAt !== undefined) {
      console.log(`  restart -> queued deployment running: ${seconds(secondRunningAt! - restartedAt)}`);
    }
    console.log(`  kill -9 -> queued deployment running: ${seconds(secondRunningAt! - killedAt)}`);
    console.log(`  kill -9 -> both done: ${seconds(doneAt - killedAt)} (statuses ${final.join(",")})`);
  } finally {
    for (const copy of copies) {
      copy.child.kill("SIGKILL");
      rmSync(copy.dataDir, { recursive: true, force: true });
    }
    if (serviceName) await docker(["service", "rm", serviceName]).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    await database.drop();
    await nats.stop();
  }
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

if (!process.env.BENCH_HA_ONLY_NATS) await main();
await resumeWithNats(1, true);
await resumeWithNats(2, false);
