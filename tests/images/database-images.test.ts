/**
 * The database images of scripts/build-database-images.sh (built by the suite's environment
 * step) hold the environment contract of the official images the platform's database services
 * name: each runs with `docker run -p 127.0.0.1::<port>`, the real client library logs in with
 * the configured user and password, writes and reads, a wrong password is refused, the data
 * outlives `docker restart` and a new container on the same volume (which does not initialize
 * again), and a missing required variable stops the container with a message naming it.
 */
import { execFile } from "node:child_process";
import net from "node:net";
import { promisify } from "node:util";
import mysql from "mysql2/promise";
import pg from "pg";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

const IMAGES = {
  postgres: "platform-test/db-postgres:15",
  mariadb: "platform-test/db-mariadb:11",
  redis: "platform-test/db-redis:7",
  mongo: "platform-test/db-mongo-standin:8",
  libsql: "platform-test/db-libsql-standin:0.24",
};
const READY_TIMEOUT_MS = 120_000;
/** Quotes, a backslash, a dollar and a space: the entrypoints must pass passwords through intact. */
const AWKWARD_PASSWORD = `p'w"d \\ $HOME x`;

const prefix = `dbimg-${process.pid}-${Math.random().toString(36).slice(2, 7)}`;
const containers: string[] = [];
const volumes: string[] = [];
let counter = 0;

async function docker(args: string[]): Promise<string> {
  const { stdout } = await run("docker", args, { maxBuffer: 4 * 1024 * 1024 });
  return stdout.trim();
}

function newName(what: string): string {
  counter += 1;
  return `${prefix}-${what}-${counter}`;
}

function newVolume(what: string): string {
  const name = newName(`${what}-data`);
  volumes.push(name);
  return name;
}

interface ContainerSpec {
  image: string;
  env?: Record<string, string>;
  /** [volume name, path in the container] */
  volume?: [string, string];
  containerPort: number;
  command?: string[];
}

/** `docker run -d` with the port published on a free 127.0.0.1 port; returns the name. */
async function startContainer(what: string, spec: ContainerSpec): Promise<string> {
  const name = newName(what);
  containers.push(name);
  const envArgs = Object.entries(spec.env ?? {}).flatMap(([key, value]) => ["-e", `${key}=${value}`]);
  const volumeArgs = spec.volume ? ["-v", `${spec.volume[0]}:${spec.volume[1]}`] : [];
  await docker([
    "run",
    "-d",
    "--name",
    name,
    "--label",
    "platform.test=database-images",
    "-p",
    `127.0.0.1::${spec.containerPort}`,
    ...envArgs,
    ...volumeArgs,
    spec.image,
    ...(spec.command ?? []),
  ]);
  return name;
}

/** The 127.0.0.1 port Docker published the container's port on (it changes on restart). */
async function publishedPort(name: string, containerPort: number): Promise<number> {
  const mapping = await docker(["port", name, `${containerPort}/tcp`]);
  const port = Number(/127\.0\.0\.1:(\d+)/.exec(mapping)?.[1]);
  if (!port) throw new Error(`${name} publishes no 127.0.0.1 port for ${containerPort}: ${mapping}`);
  return port;
}

async function removeContainer(name: string): Promise<void> {
  await docker(["rm", "-f", "-v", name]).catch(() => {});
}

/** `docker run --rm` in the foreground: the exit code and stderr of a container that stops. */
async function runToExit(
  image: string,
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  const name = newName("exit");
  containers.push(name);
  const envArgs = Object.entries(env).flatMap(([key, value]) => ["-e", `${key}=${value}`]);
  try {
    const { stderr } = await run("docker", ["run", "--rm", "--name", name, ...envArgs, image], {
      timeout: 60_000,
    });
    return { code: 0, stderr };
  } catch (error) {
    const failure = error as { code?: number; stderr?: string };
    return { code: typeof failure.code === "number" ? failure.code : -1, stderr: failure.stderr ?? "" };
  }
}

/** A server that answered and refused the credentials: waiting longer changes nothing. */
function isRefusedLogin(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return code === "28P01" || code === "ER_ACCESS_DENIED_ERROR" || /WRONGPASS/.test(message ?? "");
}

/**
 * Retries `attempt` until it succeeds (the servers accept TCP connections only once they are
 * initialized); on a refused login or timeout, fails with the error and the container's logs.
 */
async function whenReady<T>(name: string, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const state = await docker(["inspect", "--format", "{{.State.Status}}", name]).catch(() => "gone");
      if (Date.now() > deadline || state === "exited" || state === "gone" || isRefusedLogin(error)) {
        const logs = await run("docker", ["logs", "--tail", "30", name]).catch(() => ({
          stdout: "",
          stderr: "",
        }));
        throw new Error(
          `${name} (${state}) never accepted the client: ${(error as Error).message}\n${logs.stdout}${logs.stderr}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** The user the container's main process runs as, by name inside the container. */
async function mainProcessUser(name: string): Promise<string> {
  return docker(["exec", name, "stat", "-c", "%U", "/proc/1"]);
}

beforeAll(async () => {
  for (const image of Object.values(IMAGES)) {
    await docker(["image", "inspect", "--format", "{{.Id}}", image]).catch(() => {
      throw new Error(`the test image ${image} is missing: run scripts/build-database-images.sh`);
    });
  }
});

afterAll(async () => {
  await Promise.all(containers.map(removeContainer));
  await Promise.all(volumes.map((name) => docker(["volume", "rm", "-f", name]).catch(() => {})));
}, 120_000);

describe(IMAGES.postgres, () => {
  async function connect(port: number, user: string, password: string | undefined, database?: string) {
    const client = new pg.Client({
      host: "127.0.0.1",
      port,
      user,
      password,
      database,
      connectionTimeoutMillis: 10_000,
    });
    client.on("error", () => {});
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    return client;
  }

  async function connectWhenReady(
    name: string,
    user: string,
    password: string | undefined,
    database?: string,
  ) {
    return whenReady(name, async () => connect(await publishedPort(name, 5432), user, password, database));
  }

  it("initializes POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB; keeps the data on its volume and refuses a wrong password", async () => {
    const volume = newVolume("postgres");
    const env = {
      POSTGRES_USER: "platform_app",
      POSTGRES_PASSWORD: AWKWARD_PASSWORD,
      POSTGRES_DB: "platform_db",
    };
    const spec = {
      image: IMAGES.postgres,
      env,
      volume: [volume, "/var/lib/postgresql/data"] as [string, string],
    };
    const first = await startContainer("postgres", { ...spec, containerPort: 5432 });

    const client = await connectWhenReady(first, "platform_app", AWKWARD_PASSWORD, "platform_db");
    await client.query("CREATE TABLE note (body text)");
    await client.query("INSERT INTO note VALUES ($1)", ["kept"]);
    const settings = await client.query(
      "SELECT current_user AS user, current_database() AS database, current_setting('data_directory') AS data",
    );
    expect(settings.rows[0]).toEqual({
      user: "platform_app",
      database: "platform_db",
      data: "/var/lib/postgresql/data",
    });
    await client.end();
    expect(await mainProcessUser(first)).toBe("postgres");

    const port = await publishedPort(first, 5432);
    await expect(connect(port, "platform_app", "wrong-password", "platform_db")).rejects.toMatchObject({
      code: "28P01",
    });
    await expect(connect(port, "platform_app", undefined, "platform_db")).rejects.toThrow();

    await docker(["restart", first]);
    const afterRestart = await connectWhenReady(first, "platform_app", AWKWARD_PASSWORD, "platform_db");
    expect((await afterRestart.query("SELECT body FROM note")).rows).toEqual([{ body: "kept" }]);
    await afterRestart.end();

    // A new container on the same volume does not initialize again: the first password holds.
    await removeContainer(first);
    const second = await startContainer("postgres", {
      ...spec,
      env: { ...env, POSTGRES_PASSWORD: "a-different-password" },
      containerPort: 5432,
    });
    const reopened = await connectWhenReady(second, "platform_app", AWKWARD_PASSWORD, "platform_db");
    expect((await reopened.query("SELECT body FROM note")).rows).toEqual([{ body: "kept" }]);
    await reopened.end();
  }, 300_000);

  it("passes a `postgres -c …` command to the server, trusts every host with POSTGRES_HOST_AUTH_METHOD=trust and names the database after the user", async () => {
    const name = await startContainer("postgres-trust", {
      image: IMAGES.postgres,
      env: { POSTGRES_USER: "platform_trust", POSTGRES_HOST_AUTH_METHOD: "trust" },
      containerPort: 5432,
      command: ["postgres", "-c", "max_connections=50"],
    });
    const client = await connectWhenReady(name, "platform_trust", undefined);
    const result = await client.query(
      "SELECT current_database() AS database, current_setting('max_connections') AS max",
    );
    expect(result.rows[0]).toEqual({ database: "platform_trust", max: "50" });
    await client.end();
  }, 180_000);

  it("stops with a message naming POSTGRES_PASSWORD when it is missing", async () => {
    const result = await runToExit(IMAGES.postgres, { POSTGRES_USER: "platform_app" });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("POSTGRES_PASSWORD");
  }, 90_000);
});

describe(IMAGES.mariadb, () => {
  async function connectWhenReady(name: string, user: string, password: string, database?: string) {
    return whenReady(name, async () =>
      mysql.createConnection({
        host: "127.0.0.1",
        port: await publishedPort(name, 3306),
        user,
        password,
        database,
        connectTimeout: 10_000,
      }),
    );
  }

  it("initializes MARIADB_* users and database, lets root in remotely, keeps the data on its volume and refuses a wrong password", async () => {
    const volume = newVolume("mariadb");
    const env = {
      MARIADB_ROOT_PASSWORD: `root ${AWKWARD_PASSWORD}`,
      MARIADB_USER: "platform_app",
      MARIADB_PASSWORD: AWKWARD_PASSWORD,
      MARIADB_DATABASE: "platform_db",
    };
    const spec = { image: IMAGES.mariadb, env, volume: [volume, "/var/lib/mysql"] as [string, string] };
    const first = await startContainer("mariadb", { ...spec, containerPort: 3306 });

    const app = await connectWhenReady(first, "platform_app", AWKWARD_PASSWORD, "platform_db");
    await app.query("CREATE TABLE note (body varchar(20))");
    await app.query("INSERT INTO note VALUES (?)", ["kept"]);
    const [rows] = await app.query("SELECT body FROM note");
    expect(rows).toEqual([{ body: "kept" }]);
    // The user's privileges are on its database only.
    await expect(app.query("CREATE DATABASE platform_other")).rejects.toMatchObject({
      code: "ER_DBACCESS_DENIED_ERROR",
    });
    await app.end();

    const root = await connectWhenReady(first, "root", `root ${AWKWARD_PASSWORD}`);
    const [[identity]] = (await root.query("SELECT CURRENT_USER() AS user")) as unknown as [
      [{ user: string }],
    ];
    expect(identity.user).toBe("root@%");
    await root.end();
    expect(await mainProcessUser(first)).toBe("mysql");

    const port = await publishedPort(first, 3306);
    for (const [user, password] of [
      ["platform_app", "wrong-password"],
      ["root", "wrong-password"],
    ]) {
      await expect(
        mysql.createConnection({ host: "127.0.0.1", port, user, password, database: "platform_db" }),
      ).rejects.toMatchObject({ code: "ER_ACCESS_DENIED_ERROR" });
    }

    await docker(["restart", first]);
    const afterRestart = await connectWhenReady(first, "platform_app", AWKWARD_PASSWORD, "platform_db");
    expect((await afterRestart.query("SELECT body FROM note"))[0]).toEqual([{ body: "kept" }]);
    await afterRestart.end();

    await removeContainer(first);
    const second = await startContainer("mariadb", {
      ...spec,
      env: { ...env, MARIADB_PASSWORD: "a-different-password" },
      containerPort: 3306,
    });
    const reopened = await connectWhenReady(second, "platform_app", AWKWARD_PASSWORD, "platform_db");
    expect((await reopened.query("SELECT body FROM note"))[0]).toEqual([{ body: "kept" }]);
    await reopened.end();
  }, 400_000);

  it("serves the mysql kind: MYSQL_* variables and a `mysqld --…` command", async () => {
    const name = await startContainer("mysql", {
      image: IMAGES.mariadb,
      env: {
        MYSQL_ROOT_PASSWORD: "platform-root",
        MYSQL_USER: "platform_mysql",
        MYSQL_PASSWORD: "platform-mysql-password",
        MYSQL_DATABASE: "platform_mysql_db",
      },
      containerPort: 3306,
      command: ["mysqld", "--max-connections=42"],
    });
    const app = await connectWhenReady(
      name,
      "platform_mysql",
      "platform-mysql-password",
      "platform_mysql_db",
    );
    const [rows] = await app.query("SELECT @@max_connections AS max, DATABASE() AS db");
    expect(rows).toEqual([{ max: 42, db: "platform_mysql_db" }]);
    await app.end();
    const root = await connectWhenReady(name, "root", "platform-root");
    await root.end();
  }, 300_000);

  it("stops with a message naming the missing root password or user password", async () => {
    const noRoot = await runToExit(IMAGES.mariadb, { MARIADB_DATABASE: "platform_db" });
    expect(noRoot.code).not.toBe(0);
    expect(noRoot.stderr).toContain("MARIADB_ROOT_PASSWORD");

    const noUserPassword = await runToExit(IMAGES.mariadb, {
      MYSQL_ROOT_PASSWORD: "x",
      MYSQL_USER: "platform_app",
    });
    expect(noUserPassword.code).not.toBe(0);
    expect(noUserPassword.stderr).toContain("MYSQL_PASSWORD");
  }, 120_000);
});

describe(IMAGES.redis, () => {
  async function connect(port: number, password: string | undefined) {
    const client = createClient({ socket: { host: "127.0.0.1", port, reconnectStrategy: false }, password });
    client.on("error", () => {});
    await client.connect();
    return client;
  }

  /** The client's handshake (HELLO) or the GET is refused without the password. */
  async function readWithoutPassword(port: number, key: string) {
    const client = createClient({ socket: { host: "127.0.0.1", port, reconnectStrategy: false } });
    client.on("error", () => {});
    try {
      await client.connect();
      return await client.get(key);
    } finally {
      if (client.isOpen) client.destroy();
    }
  }

  async function connectWhenReady(name: string, password: string) {
    return whenReady(name, async () => {
      const client = await connect(await publishedPort(name, 6379), password);
      await client.ping();
      return client;
    });
  }

  it("runs `redis-server --requirepass …` with its data in /data, refuses a wrong password and keeps the keys on its volume", async () => {
    const volume = newVolume("redis");
    const first = await startContainer("redis", {
      image: IMAGES.redis,
      volume: [volume, "/data"],
      containerPort: 6379,
      command: ["redis-server", "--requirepass", AWKWARD_PASSWORD],
    });
    const client = await connectWhenReady(first, AWKWARD_PASSWORD);
    await client.set("platform:note", "kept");
    expect(await client.get("platform:note")).toBe("kept");
    expect(await client.configGet("dir")).toEqual({ dir: "/data" });
    expect(await client.configGet("protected-mode")).toEqual({ "protected-mode": "no" });
    await client.close();
    expect(await mainProcessUser(first)).toBe("redis");

    const port = await publishedPort(first, 6379);
    await expect(connect(port, "wrong-password")).rejects.toThrow(/WRONGPASS|invalid password/);
    await expect(readWithoutPassword(port, "platform:note")).rejects.toThrow(/NOAUTH/);

    await docker(["restart", first]);
    const afterRestart = await connectWhenReady(first, AWKWARD_PASSWORD);
    expect(await afterRestart.get("platform:note")).toBe("kept");
    await afterRestart.close();

    // Arguments starting with "-" are redis-server's, as in the official image.
    await removeContainer(first);
    const second = await startContainer("redis", {
      image: IMAGES.redis,
      volume: [volume, "/data"],
      containerPort: 6379,
      command: ["--requirepass", "second-password"],
    });
    const reopened = await connectWhenReady(second, "second-password");
    expect(await reopened.get("platform:note")).toBe("kept");
    await reopened.close();
  }, 240_000);
});

describe(`${IMAGES.mongo} (a stand-in, not MongoDB)`, () => {
  /** The first line the stand-in writes on a new connection. */
  function greeting(port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: "127.0.0.1", port });
      let received = "";
      socket.setTimeout(5_000, () => socket.destroy(new Error("no answer within 5 s")));
      socket.on("data", (chunk) => {
        received += chunk.toString();
      });
      socket.on("error", reject);
      socket.on("close", () =>
        received ? resolve(received) : reject(new Error("closed without an answer")),
      );
    });
  }

  it("runs with the root user variables, keeps /data/db and answers on 27017", async () => {
    const name = await startContainer("mongo", {
      image: IMAGES.mongo,
      env: { MONGO_INITDB_ROOT_USERNAME: "platform_root", MONGO_INITDB_ROOT_PASSWORD: AWKWARD_PASSWORD },
      containerPort: 27017,
    });
    const answer = await whenReady(name, async () => greeting(await publishedPort(name, 27017)));
    expect(answer).toContain("mongo stand-in");
    expect(await docker(["inspect", "--format", "{{.State.Running}}", name])).toBe("true");
    expect(await docker(["exec", name, "cat", "/data/db/platform-standin-initialized"])).toContain(
      "platform_root",
    );
  }, 120_000);

  it("stops with a message when MONGO_INITDB_ROOT_USERNAME comes without MONGO_INITDB_ROOT_PASSWORD", async () => {
    const result = await runToExit(IMAGES.mongo, { MONGO_INITDB_ROOT_USERNAME: "platform_root" });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("MONGO_INITDB_ROOT_PASSWORD");
  }, 60_000);
});

describe(`${IMAGES.libsql} (a stand-in, not sqld)`, () => {
  /** One statement through sqld's POST /v2/pipeline; the HTTP status and the first result. */
  async function execute(port: number, auth: string | null, sql: string) {
    const response = await fetch(`http://127.0.0.1:${port}/v2/pipeline`, {
      method: "POST",
      headers: auth === null ? {} : { authorization: `Basic ${Buffer.from(auth).toString("base64")}` },
      body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql } }, { type: "close" }] }),
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await response.json()) as { results?: { response?: { result: { rows: unknown[][] } } }[] };
    return { status: response.status, rows: body.results?.[0]?.response?.result.rows ?? [] };
  }

  it("answers sqld's HTTP API behind SQLD_HTTP_AUTH, its database in --db-path on the volume across a new container", async () => {
    const volume = newVolume("libsql");
    const spec = {
      image: IMAGES.libsql,
      env: {
        SQLD_NODE: "primary",
        SQLD_HTTP_AUTH: `basic:${Buffer.from(`admin:${AWKWARD_PASSWORD}`).toString("base64")}`,
      },
      volume: [volume, "/var/lib/sqld"] as [string, string],
      containerPort: 8080,
      command: ["sqld", "--db-path", "/var/lib/sqld/iku.db", "--http-listen-addr", "0.0.0.0:8080"],
    };
    const first = await startContainer("libsql", spec);
    const port = await whenReady(first, async () => {
      const published = await publishedPort(first, 8080);
      const health = await fetch(`http://127.0.0.1:${published}/health`, {
        signal: AbortSignal.timeout(5_000),
      });
      if (health.status !== 200) throw new Error(`health answered ${health.status}`);
      return published;
    });
    expect((await execute(port, null, "select 1")).status).toBe(401);
    expect((await execute(port, "admin:wrong", "select 1")).status).toBe(401);
    const auth = `admin:${AWKWARD_PASSWORD}`;
    expect((await execute(port, auth, "create table notes (body text)")).status).toBe(200);
    await execute(port, auth, "insert into notes values ('kept')");
    expect(await docker(["exec", first, "ls", "/var/lib/sqld/iku.db/dbs/default"])).toContain("data");
    await removeContainer(first);
    const second = await startContainer("libsql", spec);
    const rows = await whenReady(second, async () => {
      const answer = await execute(await publishedPort(second, 8080), auth, "select body from notes");
      if (answer.status !== 200) throw new Error(`answered ${answer.status}`);
      return answer.rows;
    });
    expect(rows).toEqual([[{ type: "text", value: "kept" }]]);
  }, 120_000);

  it("stops with a message when SQLD_NODE is replica without SQLD_PRIMARY_URL", async () => {
    const result = await runToExit(IMAGES.libsql, { SQLD_NODE: "replica" });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("SQLD_PRIMARY_URL");
  }, 60_000);
});
