/**
 * The README's `npm start` with no DATABASE_URL: the control plane runs on a real PostgreSQL
 * server whose data directory is in PLATFORM_DATA_DIR (its postmaster names it with `-D`), with
 * no WebAssembly database engine in the control plane. A SIGKILL of the control plane keeps
 * every row: the next start reuses the postmaster it left, or, when that died too, starts it
 * again on the same data. As root the server runs as its own system user; as a normal user, as
 * that user.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMBEDDED_POSTGRES_USER } from "../../apps/control-plane/src/db/embedded.ts";
import { postmasterPid, processTree } from "../../apps/control-plane/src/testing/processes.ts";
import { ApiClient } from "../support/control-plane.ts";
import { type NpmStart, spawnNpmStart } from "../support/npm-start.ts";

const root = path.resolve(import.meta.dirname, "../..");
const isRoot = process.getuid?.() === 0;

let dir: string;
let env: NodeJS.ProcessEnv;
const started: NpmStart[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "platform-embedded-"));
  // Searchable by the users the servers run as (mkdtemp makes it 0700).
  await chmod(dir, 0o755);
  env = { ...process.env };
  for (const name of ["npm_config_user_agent", "DATABASE_URL", "NATS_URL", "NATS_CREDS", "PORT", "HOST"]) {
    delete env[name];
  }
  // npm start builds dist/ when stale: done here once, so that a normal user's start only reads it.
  execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: root, stdio: "ignore" });
}, 120_000);

afterAll(async () => {
  for (const { child } of started) {
    if (child.pid && child.exitCode === null && child.signalCode === null)
      process.kill(-child.pid, "SIGKILL");
  }
  // Servers a failed test left running on its data directories.
  for (const pid of postmastersIn(dir)) process.kill(pid, "SIGKILL");
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
};

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z");
  } catch {
    return false;
  }
};

/** Every live postmaster whose data directory (`-D`) is under `parent`. */
function postmastersIn(parent: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      const argv = cmdline(pid);
      const data = argv[argv.indexOf("-D") + 1];
      return (
        argv.indexOf("-D") > 0 &&
        path.basename(argv[0] ?? "") === "postgres" &&
        !!data?.startsWith(`${parent}/`)
      );
    })
    .filter(isAlive);
}

async function start(
  dataDir: string,
  runAs?: { uid: number; gid: number },
  extraEnv: NodeJS.ProcessEnv = {},
) {
  const npmStart = await spawnNpmStart(root, { ...env, ...extraEnv }, dataDir, runAs);
  started.push(npmStart);
  const output = await npmStart.listening(90_000);
  expect(output).toContain(`Platform control plane listening on http://127.0.0.1:${npmStart.port}`);
  const health = await fetch(`http://127.0.0.1:${npmStart.port}/health`);
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ checks: { database: { status: "up", kind: "embedded" } } });
  return npmStart;
}

/** Signals npm's whole process group (npm, its shell, the control plane) and awaits their end. */
async function kill(npmStart: NpmStart, signal: NodeJS.Signals) {
  const tree = processTree(npmStart.child.pid as number);
  process.kill(-(npmStart.child.pid as number), signal);
  await until(() => tree.every((pid) => !isAlive(pid)), `the end of npm start after ${signal}`);
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000) {
  for (const deadline = Date.now() + timeoutMs; !condition(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("npm start on the embedded PostgreSQL", () => {
  it("runs a postgres server with -D in the data directory, under its own user, and no WebAssembly engine", async () => {
    const dataDir = path.join(dir, "tree");
    const npmStart = await start(dataDir);
    const postmaster = postmasterPid(dataDir);
    const argv = cmdline(postmaster);
    expect(path.basename(argv[0] ?? "")).toBe("postgres");
    expect(argv[argv.indexOf("-D") + 1]).toBe(path.join(dataDir, "postgres"));
    expect(postmastersIn(dir)).toEqual([postmaster]);
    // No TCP port: the server listens on a Unix socket in its data directory only.
    expect(argv).toContain("listen_addresses=");
    expect(existsSync(path.join(dataDir, "postgres", ".s.PGSQL.5432"))).toBe(true);
    const owner = statSync(`/proc/${postmaster}`).uid;
    if (isRoot) {
      const expected = Number(execFileSync("id", ["-u", EMBEDDED_POSTGRES_USER], { encoding: "utf8" }));
      expect(owner).toBe(expected);
      expect(owner).not.toBe(0);
      expect(statSync(path.join(dataDir, "postgres")).uid).toBe(expected);
    }
    const password = path.join(dataDir, "postgres.password");
    expect(statSync(password).mode & 0o777).toBe(0o600);

    // The control plane: a node process under npm, with no PGlite (a WebAssembly Postgres) loaded
    // or installed.
    const tree = processTree(npmStart.child.pid as number);
    const controlPlane = tree.find((pid) =>
      cmdline(pid).some((arg) => arg.endsWith("dist/control-plane/main.js")),
    );
    expect(controlPlane, "the control plane process").toBeDefined();
    for (const pid of tree) {
      expect(cmdline(pid).join(" ")).not.toMatch(/pglite/i);
      const maps = readFileSync(`/proc/${pid}/maps`, "utf8");
      expect(maps).not.toMatch(/pglite|\.wasm/i);
    }
    const resolveFromControlPlane = createRequire(path.join(root, "apps/control-plane/package.json")).resolve;
    expect(() => resolveFromControlPlane("@electric-sql/pglite")).toThrow();

    // Stopped with the control plane.
    await kill(npmStart, "SIGTERM");
    expect(isAlive(postmaster)).toBe(false);
    expect(existsSync(path.join(dataDir, "postgres", "postmaster.pid"))).toBe(false);
  }, 180_000);

  it("keeps every row across a SIGKILL of the control plane, with its postmaster alive or dead", async () => {
    const dataDir = path.join(dir, "kill");
    let npmStart = await start(dataDir);
    const api = new ApiClient(`http://127.0.0.1:${npmStart.port}`);
    const session = await api.mutateOk("auth.register", {
      email: "owner@example.com",
      password: "correct-horse-battery",
      name: "Owner",
    });
    api.token = session.token;
    const names = ["Kept 1", "Kept 2", "Kept 3"];
    for (const name of names) await api.mutateOk("project.create", { name });
    const projectNames = async (port: number) => {
      const client = new ApiClient(`http://127.0.0.1:${port}`);
      client.token = session.token;
      const projects: { name: string }[] = await client.queryOk("project.all");
      return projects.map((project) => project.name).sort();
    };

    // The control plane killed: its postmaster stays, and the next start uses it.
    const first = postmasterPid(dataDir);
    await kill(npmStart, "SIGKILL");
    expect(isAlive(first)).toBe(true);
    npmStart = await start(dataDir);
    expect(postmasterPid(dataDir)).toBe(first);
    expect(postmastersIn(dataDir)).toEqual([first]);
    expect(await projectNames(npmStart.port)).toEqual(names);

    // Both killed, mid-write of nothing in particular: the next start starts the server again
    // (crash recovery) on the same data, and only one.
    await kill(npmStart, "SIGKILL");
    process.kill(first, "SIGKILL");
    npmStart = await start(dataDir);
    const second = postmasterPid(dataDir);
    expect(second).not.toBe(first);
    expect(postmastersIn(dataDir)).toEqual([second]);
    expect(await projectNames(npmStart.port)).toEqual(names);
    await kill(npmStart, "SIGTERM");
    expect(isAlive(second)).toBe(false);
  }, 300_000);

  it.runIf(isRoot)(
    "runs as a normal user too: the server is that user's",
    async () => {
      const uid = Number(execFileSync("id", ["-u", "nobody"], { encoding: "utf8" }));
      const gid = Number(execFileSync("id", ["-g", "nobody"], { encoding: "utf8" }));
      const home = path.join(dir, "nobody");
      mkdirSync(home);
      chownSync(home, uid, gid);
      const dataDir = path.join(home, "data");
      const npmStart = await start(
        dataDir,
        { uid, gid },
        { HOME: home, npm_config_cache: path.join(home, ".npm") },
      );
      const postmaster = postmasterPid(dataDir);
      expect(statSync(`/proc/${postmaster}`).uid).toBe(uid);
      expect(statSync(path.join(dataDir, "postgres")).uid).toBe(uid);
      await kill(npmStart, "SIGTERM");
      expect(isAlive(postmaster)).toBe(false);
    },
    180_000,
  );
});
