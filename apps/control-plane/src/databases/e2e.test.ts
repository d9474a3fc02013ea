/**
 * Database services end to end on the real Docker Engine (Swarm), with the control plane's
 * in-process agent and the local test images of scripts/build-database-images.sh (no registry
 * is reachable here; PLATFORM_DEFAULT_IMAGE_<KIND> points each kind at its image). A real client
 * of each database connects through the external port on 127.0.0.1 with the credentials `one`
 * answers: a row written survives a reload (each kind's own volume mount) and a removal deletes
 * the service and its volume; stop/start and deploy keeping it and a rebuild losing it, one code
 * path for every kind, are proven on postgres, redis and mariadb. Another organization's volume
 * of the same name is never mounted or deleted.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { ownershipLabels } from "@platform/ownership";
import { sql } from "kysely";
import mysql from "mysql2/promise";
import pg from "pg";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Reconciler } from "../deployments/reconcile.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const DEPLOY_WAIT_MS = 240_000;
const IMAGES = {
  postgres: process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15",
  mariadb: process.env.PLATFORM_TEST_MARIADB_IMAGE ?? "platform-test/db-mariadb:11",
  redis: process.env.PLATFORM_TEST_REDIS_IMAGE ?? "platform-test/db-redis:7",
  mongo: process.env.PLATFORM_TEST_MONGO_IMAGE ?? "platform-test/db-mongo-standin:8",
  libsql: process.env.PLATFORM_TEST_LIBSQL_IMAGE ?? "platform-test/db-libsql-standin:0.24",
};

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
const appNames: string[] = [];
const directories: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

/** A test-unique service name, its service and volume removed after the suite whatever the test did. */
function newAppName(prefix: string): string {
  const appName = uniqueName(prefix);
  appNames.push(appName);
  return appName;
}

/** A mongo of the stand-in image with user root and password Mongo#pass1, created, not deployed. */
async function createMongo(prefix: string, name: string, fields: Record<string, unknown> = {}) {
  await dockerCli(["image", "inspect", IMAGES.mongo]);
  const appName = newAppName(prefix);
  const { mongoId } = await ok("mongo.create", {
    name,
    appName,
    environmentId,
    databaseUser: "root",
    databasePassword: "Mongo#pass1",
    ...fields,
  });
  return { mongoId: mongoId as string, appName };
}

/** Queues through `operation` and waits for the deployment's end; answers its row. */
async function settle(kind: string, operation: string, input: Record<string, unknown>) {
  const { deploymentId } = await ok(`${kind}.${operation}`, input);
  return platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
}

/** Tries `attempt` until it resolves (the database accepts connections) or `timeoutMs` passes. */
/** Retries `attempt` until it resolves, failing with its last error after `timeoutMs`. */
const eventually = <T>(attempt: () => Promise<T>, timeoutMs = 90_000): Promise<T> =>
  vi.waitFor(attempt, { timeout: timeoutMs, interval: 500 });

async function exists(kind: "service" | "volume", name: string): Promise<boolean> {
  return dockerCli([kind, "inspect", name]).then(
    () => true,
    () => false,
  );
}

async function gone(kind: "service" | "volume", name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (await exists(kind, name)) {
    if (Date.now() > deadline) throw new Error(`${kind} ${name} is still there`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", IMAGES.postgres]);
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "db-e2e-"));
  directories.push(mainDirectory);
  platform = await startTestPlatform(
    {
      PLATFORM_DEFAULT_IMAGE_POSTGRES: IMAGES.postgres,
      PLATFORM_DEFAULT_IMAGE_MARIADB: IMAGES.mariadb,
      PLATFORM_DEFAULT_IMAGE_MYSQL: IMAGES.mariadb,
      PLATFORM_DEFAULT_IMAGE_REDIS: IMAGES.redis,
      PLATFORM_DEFAULT_IMAGE_MONGO: IMAGES.mongo,
      PLATFORM_DEFAULT_IMAGE_LIBSQL: IMAGES.libsql,
    },
    { agents: { localAgent: { mainDirectory } } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Databases" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  for (const name of appNames) await dockerCli(["service", "rm", name]).catch(() => {});
  for (const name of appNames) {
    await gone("service", name).catch(() => {});
    await eventually(() => dockerCli(["volume", "rm", "-f", `${name}-data`]), 30_000).catch(() => {});
  }
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 180_000);

describe("postgres", () => {
  it(
    "deploys, a pg client writes a row through the external port; reload keeps it, rebuild loses it, remove deletes service and volume",
    async () => {
      const appName = newAppName("db-pg");
      const created = await ok("postgres.create", {
        name: "Orders",
        appName,
        environmentId,
        databaseName: "orders",
        databaseUser: "shop",
        databasePassword: "S3cret@pass#1",
      });
      const postgresId = created.postgresId as string;
      expect(created.applicationStatus).toBe("idle");

      const externalPort = await freePort();
      const deployed = await settle("postgres", "saveExternalPort", { postgresId, externalPort });
      expect(deployed.status, deployed.logs).toBe("done");
      const one = (await platform.query("postgres.one", { postgresId }, as())).body;
      expect(one.applicationStatus).toBe("done");
      expect(one.externalPort).toBe(externalPort);
      expect(one.externalConnectionUrl).toMatch(new RegExp(`@[^/]+:${externalPort}/orders$`));
      // The password never reaches the deployment's log.
      expect(deployed.logs).not.toContain("S3cret@pass#1");

      const connect = async () => {
        const client = new pg.Client({
          host: "127.0.0.1",
          port: externalPort,
          user: one.databaseUser,
          password: one.databasePassword,
          database: one.databaseName,
          connectionTimeoutMillis: 3000,
        });
        await client.connect();
        return client;
      };
      const query = async (text: string) => {
        const client = await eventually(connect);
        try {
          return await client.query(text);
        } finally {
          await client.end();
        }
      };
      await query("create table orders (id int primary key, item text)");
      await query("insert into orders values (1, 'tea')");

      const reloaded = await settle("postgres", "reload", { postgresId, appName });
      expect(reloaded.status, reloaded.logs).toBe("done");
      expect((await query("select item from orders")).rows).toEqual([{ item: "tea" }]);

      const rebuilt = await settle("postgres", "rebuild", { postgresId });
      expect(rebuilt.status, rebuilt.logs).toBe("done");
      expect(rebuilt.logs).toContain(`Volume ${appName}-data deleted`);
      const tables = await query("select count(*)::int as n from pg_tables where tablename = 'orders'");
      expect(tables.rows).toEqual([{ n: 0 }]);

      // Every deployment is listed with its kind's id, newest first, with its log.
      const listed = await platform.query("deployment.allByType", { id: postgresId, type: "postgres" }, as());
      expect(listed.body.map((row: { status: string }) => row.status)).toEqual(["done", "done", "done"]);

      // Labels: the service, its containers and its volume name the owner.
      const labels = JSON.parse(
        await dockerCli(["volume", "inspect", "--format", "{{json .Labels}}", `${appName}-data`]),
      );
      expect(labels).toMatchObject({ "platform.resource": `database:${postgresId}` });

      await ok("postgres.remove", { postgresId });
      await gone("service", appName);
      await gone("volume", `${appName}-data`);
      expect((await platform.query("postgres.one", { postgresId }, as())).status).toBe(404);
    },
    DEPLOY_WAIT_MS * 4,
  );

  it(
    "never mounts or deletes another organization's volume of the same name",
    async () => {
      const appName = newAppName("db-pgv");
      const volume = `${appName}-data`;
      const foreign = ownershipLabels({
        organizationId: "another-organization",
        resource: "database:theirs",
      });
      await dockerCli([
        "volume",
        "create",
        ...Object.entries(foreign).flatMap(([key, value]) => ["--label", `${key}=${value}`]),
        volume,
      ]);
      const created = await ok("postgres.create", {
        name: "Clash",
        appName,
        environmentId,
        databaseName: "clash",
        databaseUser: "shop",
        databasePassword: "S3cret-pass",
      });
      const deployed = await settle("postgres", "deploy", { postgresId: created.postgresId });
      expect(deployed.status).toBe("error");
      expect(deployed.errorMessage).toMatch(/volume .* does not belong/);
      expect(await exists("service", appName)).toBe(false);

      const rebuilt = await settle("postgres", "rebuild", { postgresId: created.postgresId });
      expect(rebuilt.status).toBe("error");
      await ok("postgres.remove", { postgresId: created.postgresId });
      // Still there, with its labels.
      const labels = JSON.parse(
        await dockerCli(["volume", "inspect", "--format", "{{json .Labels}}", volume]),
      );
      expect(labels).toMatchObject(foreign);
    },
    DEPLOY_WAIT_MS * 3,
  );
});

/**
 * The life of a database service through its real client: deployed with an external port,
 * `write` stores a value, reload keeps it (`read` answers it), rebuild loses it (`read` answers
 * null), remove deletes the service and its volume.
 */
async function lifecycle(
  kind: "redis" | "mariadb" | "mysql" | "libsql",
  idKey: "redisId" | "mariadbId" | "mysqlId" | "libsqlId",
  fields: Record<string, unknown>,
  client: {
    write(one: Record<string, any>, port: number): Promise<void>;
    read(one: Record<string, any>, port: number): Promise<string | null>;
  },
  /**
   * Whether stop/start, deploy and rebuild run too: one code path for every kind (databases/router.ts),
   * proven on redis and mariadb; reload keeping the row proves each kind's own volume mount.
   */
  steps: "every" | "kind's own" = "every",
): Promise<void> {
  const appName = newAppName(`db-${kind}`);
  const created = await ok(`${kind}.create`, { name: kind, appName, environmentId, ...fields });
  const id = created[idKey] as string;
  const externalPort = await freePort();
  // libsql publishes its ports with saveExternalPorts (Dokploy's libsql router has no saveExternalPort).
  const deployed = await settle(kind, kind === "libsql" ? "saveExternalPorts" : "saveExternalPort", {
    [idKey]: id,
    externalPort,
  });
  expect(deployed.status, deployed.logs).toBe("done");
  const one = (await platform.query(`${kind}.one`, { [idKey]: id }, as())).body;
  expect(one.applicationStatus).toBe("done");

  await eventually(() => client.write(one, externalPort));
  const reloaded = await settle(kind, "reload", { [idKey]: id, appName });
  expect(reloaded.status, reloaded.logs).toBe("done");
  expect(await eventually(() => client.read(one, externalPort))).toBe("tea");
  if (steps === "every") await stopStartDeployRebuild(kind, idKey, id, appName, one, externalPort, client);

  await ok(`${kind}.remove`, { [idKey]: id });
  await gone("service", appName);
  await gone("volume", `${appName}-data`);
}

async function stopStartDeployRebuild(
  kind: string,
  idKey: string,
  id: string,
  appName: string,
  one: Record<string, any>,
  externalPort: number,
  client: { read(one: Record<string, any>, port: number): Promise<string | null> },
): Promise<void> {
  // stop takes the task down, start brings it back, deploy deploys it again: the data stays.
  await ok(`${kind}.stop`, { [idKey]: id });
  await eventually(async () => {
    const running = await dockerCli([
      "ps",
      "-q",
      "--filter",
      `label=com.docker.swarm.service.name=${appName}`,
    ]);
    if (running.trim()) throw new Error("the task is still running");
  }, 60_000);
  await ok(`${kind}.start`, { [idKey]: id });
  expect(await eventually(() => client.read(one, externalPort))).toBe("tea");
  const redeployed = await settle(kind, "deploy", { [idKey]: id });
  expect(redeployed.status, redeployed.logs).toBe("done");
  expect(await eventually(() => client.read(one, externalPort))).toBe("tea");

  const rebuilt = await settle(kind, "rebuild", { [idKey]: id });
  expect(rebuilt.status, rebuilt.logs).toBe("done");
  expect(await eventually(() => client.read(one, externalPort))).toBeNull();
}

describe("redis", () => {
  it(
    "a redis client AUTHs with the stored password and writes a key; reload, stop/start and deploy keep it, rebuild loses it, remove deletes service and volume",
    async () => {
      await dockerCli(["image", "inspect", IMAGES.redis]);
      const connect = async (port: number, password?: string) => {
        const client = createClient({
          socket: { host: "127.0.0.1", port, connectTimeout: 3000, reconnectStrategy: false },
          ...(password === undefined ? {} : { password }),
        });
        client.on("error", () => {});
        await client.connect();
        return client;
      };
      await lifecycle(
        "redis",
        "redisId",
        { databasePassword: "Redis#pass1" },
        {
          write: async (one, port) => {
            // Without the password the connection is refused at its handshake.
            await expect(connect(port)).rejects.toThrow(/NOAUTH/);
            const client = await connect(port, one.databasePassword);
            await client.set("item", "tea");
            client.destroy();
          },
          read: async (one, port) => {
            const client = await connect(port, one.databasePassword);
            try {
              return await client.get("item");
            } finally {
              client.destroy();
            }
          },
        },
      );
    },
    DEPLOY_WAIT_MS * 4,
  );
});

// The mysql kind runs on the mariadb image too (PLATFORM_DEFAULT_IMAGE_MYSQL, tests/images).
describe.each([
  ["mariadb", "mariadbId", "every", "reload, stop/start and deploy keep it, rebuild loses it"],
  ["mysql", "mysqlId", "kind's own", "reload keeps it"],
] as const)("%s", (kind, idKey, steps, kept) => {
  it(
    `a mysql-protocol client writes a row with the stored credentials; ${kept}, remove deletes service and volume`,
    async () => {
      await dockerCli(["image", "inspect", IMAGES.mariadb]);
      const connect = (one: Record<string, any>, port: number) =>
        mysql.createConnection({
          host: "127.0.0.1",
          port,
          user: one.databaseUser,
          password: one.databasePassword,
          database: one.databaseName,
          connectTimeout: 3000,
        });
      await lifecycle(
        kind,
        idKey,
        {
          databaseName: "shop",
          databaseUser: "shopper",
          databasePassword: "Maria#pass1",
          databaseRootPassword: "Root#pass1",
        },
        {
          write: async (one, port) => {
            const connection = await connect(one, port);
            try {
              await connection.query("create table if not exists items (id int primary key, name text)");
              await connection.query("replace into items values (1, 'tea')");
            } finally {
              await connection.end();
            }
          },
          read: async (one, port) => {
            const connection = await connect(one, port);
            try {
              const [tables] = await connection.query("show tables like 'items'");
              if ((tables as unknown[]).length === 0) return null;
              const [rows] = await connection.query("select name from items where id = 1");
              return ((rows as { name: string }[])[0]?.name as string | undefined) ?? null;
            } finally {
              await connection.end();
            }
          },
        },
        steps,
      );
    },
    DEPLOY_WAIT_MS * 4,
  );
});

/** One statement through sqld's Hrana-over-HTTP pipeline (POST /v2/pipeline) with basic auth. */
async function sqld(port: number, auth: string | null, sql: string, args: unknown[] = []) {
  const response = await fetch(`http://127.0.0.1:${port}/v2/pipeline`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(auth === null ? {} : { authorization: `Basic ${Buffer.from(auth).toString("base64")}` }),
    },
    body: JSON.stringify({
      requests: [{ type: "execute", stmt: { sql, args } }, { type: "close" }],
    }),
    signal: AbortSignal.timeout(3000),
  });
  if (response.status === 401) return { status: 401, rows: [] as unknown[][] };
  const body = (await response.json()) as {
    results: {
      type: string;
      error?: { message: string };
      response?: { result: { rows: { value?: string }[][] } };
    }[];
  };
  const first = body.results[0]!;
  if (first.type !== "ok") throw new Error(`sqld: ${first.error?.message}`);
  return {
    status: response.status,
    rows: first.response!.result.rows.map((row) => row.map((cell) => cell.value)),
  };
}

describe("libsql", () => {
  it(
    "sqld (the stand-in) answers on its HTTP port with the stored basic auth; reload keeps a row, remove deletes service and volume",
    async () => {
      await dockerCli(["image", "inspect", IMAGES.libsql]);
      await lifecycle(
        "libsql",
        "libsqlId",
        { databaseUser: "admin", databasePassword: "Sqld#pass1", sqldNode: "primary" },
        {
          write: async (one, port) => {
            const health = await fetch(`http://127.0.0.1:${port}/health`, {
              signal: AbortSignal.timeout(3000),
            });
            expect(health.status).toBe(200);
            // Without, or with wrong, credentials sqld answers 401.
            expect((await sqld(port, null, "select 1")).status).toBe(401);
            expect((await sqld(port, "admin:wrong", "select 1")).status).toBe(401);
            const auth = `${one.databaseUser}:${one.databasePassword}`;
            await sqld(port, auth, "create table if not exists items (name text)");
            await sqld(port, auth, "insert into items values (?)", [{ type: "text", value: "tea" }]);
          },
          read: async (one, port) => {
            const auth = `${one.databaseUser}:${one.databasePassword}`;
            const tables = await sqld(port, auth, "select count(*) from sqlite_master where name = 'items'");
            if (tables.rows[0]?.[0] === "0") return null;
            return ((await sqld(port, auth, "select name from items")).rows[0]?.[0] as string) ?? null;
          },
        },
        "kind's own",
      );
    },
    DEPLOY_WAIT_MS * 4,
  );

  it(
    "publishes the admin port beside HTTP, runs sqld with its variables and command line, and takes a new password at the next deploy",
    async () => {
      await dockerCli(["image", "inspect", IMAGES.libsql]);
      const appName = newAppName("db-libsql");
      const { libsqlId } = await ok("libsql.create", {
        name: "edge",
        appName,
        environmentId,
        databaseUser: "admin",
        databasePassword: "Sqld#pass1",
        sqldNode: "primary",
        enableNamespaces: true,
      });
      const [externalPort, externalAdminPort] = [await freePort(), await freePort()];
      const deployed = await settle("libsql", "saveExternalPorts", {
        libsqlId,
        externalPort,
        externalAdminPort,
      });
      expect(deployed.status, deployed.logs).toBe("done");
      expect(deployed.logs).not.toContain("Sqld#pass1");
      const spec = JSON.parse(
        await dockerCli([
          "service",
          "inspect",
          appName,
          "--format",
          "{{json .Spec.TaskTemplate.ContainerSpec}}",
        ]),
      );
      expect(spec.Env).toEqual(
        expect.arrayContaining([
          "SQLD_NODE=primary",
          `SQLD_HTTP_AUTH=basic:${Buffer.from("admin:Sqld#pass1").toString("base64")}`,
        ]),
      );
      expect(spec.Command.join(" ")).toContain("--enable-namespaces");
      const one = (await platform.query("libsql.one", { libsqlId }, as())).body;
      expect(one).toMatchObject({ externalPort, externalAdminPort, externalGRPCPort: null });
      expect(one.externalConnectionUrl).toMatch(
        new RegExp(`^http://admin:Sqld%23pass1@[^/]+:${externalPort}$`),
      );
      await eventually(async () => {
        const admin = await fetch(`http://127.0.0.1:${externalAdminPort}/health`, {
          signal: AbortSignal.timeout(3000),
        });
        expect(admin.status).toBe(200);
      });
      expect((await eventually(() => sqld(externalPort, "admin:Sqld#pass1", "select 41 + 1"))).rows).toEqual([
        ["42"],
      ]);

      // A new password is stored at once and reaches sqld with the next deploy.
      await ok("libsql.update", { libsqlId, databasePassword: "N3w#pass" });
      const redeployed = await settle("libsql", "deploy", { libsqlId });
      expect(redeployed.status, redeployed.logs).toBe("done");
      await eventually(async () => {
        expect((await sqld(externalPort, "admin:Sqld#pass1", "select 1")).status).toBe(401);
      });
      expect((await eventually(() => sqld(externalPort, "admin:N3w#pass", "select 1"))).rows).toEqual([
        ["1"],
      ]);

      // The admin port removed (null), HTTP kept (absent).
      const unpublished = await settle("libsql", "saveExternalPorts", { libsqlId, externalAdminPort: null });
      expect(unpublished.status, unpublished.logs).toBe("done");
      const ports = JSON.parse(
        await dockerCli(["service", "inspect", appName, "--format", "{{json .Spec.EndpointSpec.Ports}}"]),
      ) as { TargetPort: number; PublishedPort: number }[];
      expect(ports.map((port) => [port.TargetPort, port.PublishedPort])).toEqual([[8080, externalPort]]);

      await ok("libsql.remove", { libsqlId });
      await gone("service", appName);
      await gone("volume", `${appName}-data`);
    },
    DEPLOY_WAIT_MS * 4,
  );
});

describe("mongo", () => {
  it(
    "runs from the stand-in image: deployed with its environment and volume, answering on its external port",
    async () => {
      await dockerCli(["image", "inspect", IMAGES.mongo]);
      const appName = newAppName("db-mongo");
      const created = await ok("mongo.create", {
        name: "mongo",
        appName,
        environmentId,
        databaseUser: "root",
        databasePassword: "Mongo#pass1",
      });
      const externalPort = await freePort();
      const deployed = await settle("mongo", "saveExternalPort", { mongoId: created.mongoId, externalPort });
      expect(deployed.status, deployed.logs).toBe("done");
      const env = await dockerCli([
        "service",
        "inspect",
        appName,
        "--format",
        "{{json .Spec.TaskTemplate.ContainerSpec.Env}}",
      ]);
      expect(JSON.parse(env)).toEqual(
        expect.arrayContaining(["MONGO_INITDB_ROOT_USERNAME=root", "MONGO_INITDB_ROOT_PASSWORD=Mongo#pass1"]),
      );
      await eventually(
        () =>
          new Promise<void>((resolve, reject) => {
            const socket = connect({ host: "127.0.0.1", port: externalPort }, () => {
              socket.destroy();
              resolve();
            });
            socket.on("error", reject);
          }),
      );
      await ok("mongo.remove", { mongoId: created.mongoId });
      await gone("service", appName);
      await gone("volume", `${appName}-data`);
    },
    DEPLOY_WAIT_MS * 2,
  );
});

describe("mongo replicaSets", () => {
  it(
    "runs the image's entrypoint under the replica set wrapper: key file written, port answering, initiation pending without a mongo shell, a stop forwarded at once",
    async () => {
      // The stand-in is not MongoDB: what runs for real here is the wrapper (key file, the
      // entrypoint with --replSet/--keyFile, the retry loop, the stop); rs.initiate itself
      // needs a real mongod and mongosh (not reachable here).
      const password = "Mongo#pass1";
      const { mongoId, appName } = await createMongo("db-rs", "Replica", {
        replicaSets: true,
        databasePassword: password,
      });
      // A long grace period, so that a stop the shell did not forward (mongod killed only when
      // the grace period ends) cannot pass for one it did, however slow the machine.
      await ok("mongo.update", { mongoId, stopGracePeriodSwarm: 120_000_000_000 });
      const externalPort = await freePort();
      const deployed = await settle("mongo", "saveExternalPort", { mongoId, externalPort });
      expect(deployed.status, deployed.logs).toBe("done");
      const one = (await platform.query("mongo.one", { mongoId }, as())).body;
      expect(one.internalConnectionUrl).toBe(`mongodb://root:Mongo%23pass1@${appName}:27017/?replicaSet=rs0`);
      const command = JSON.parse(
        await dockerCli([
          "service",
          "inspect",
          appName,
          "--format",
          "{{json .Spec.TaskTemplate.ContainerSpec.Command}}",
        ]),
      );
      expect(command[0]).toBe("/bin/sh");
      expect(command[2]).toContain(`members: [{ _id: 0, host: "${appName}:27017" }]`);
      await eventually(
        () =>
          new Promise<void>((resolve, reject) => {
            const socket = connect({ host: "127.0.0.1", port: externalPort }, () => {
              socket.destroy();
              resolve();
            });
            socket.on("error", reject);
          }),
      );
      const container = (
        await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${appName}`])
      ).trim();
      const key = (await dockerCli(["exec", container, "cat", "/tmp/platform-mongo-keyfile"])).trim();
      expect(key).toBe(createHash("sha256").update(password).digest("hex"));
      const processes = await dockerCli(["exec", container, "ps"]);
      expect(processes).toContain("--replSet rs0 --bind_ip_all --keyFile /tmp/platform-mongo-keyfile");

      const stopping = Date.now();
      await ok("mongo.stop", { mongoId });
      await eventually(async () => {
        const left = await dockerCli([
          "ps",
          "-q",
          "--filter",
          `label=com.docker.swarm.service.name=${appName}`,
        ]);
        if (left.trim() !== "") throw new Error("still running");
      }, 100_000);
      // Well inside the 120 s grace period: the shell forwarded the stop rather than being killed.
      expect(Date.now() - stopping).toBeLessThan(60_000);
      await ok("mongo.remove", { mongoId });
      await gone("service", appName);
    },
    DEPLOY_WAIT_MS * 2,
  );
});

describe("Swarm fields", () => {
  it(
    "update's Swarm fields reach the deployed service spec; databases stay stop-first",
    async () => {
      const { mongoId, appName } = await createMongo("db-swarm", "Swarm");
      await ok("mongo.update", {
        mongoId,
        labelsSwarm: { "com.example.team": "data" },
        restartPolicySwarm: { Condition: "on-failure", MaxAttempts: 4 },
        placementSwarm: { Constraints: ["node.role==manager"] },
        stopGracePeriodSwarm: 7_000_000_000,
      });
      const deployed = await settle("mongo", "deploy", { mongoId });
      expect(deployed.status, deployed.logs).toBe("done");
      const spec = JSON.parse(await dockerCli(["service", "inspect", appName, "--format", "{{json .Spec}}"]));
      expect(spec.Labels).toMatchObject({ "com.example.team": "data", "platform.appName": appName });
      expect(spec.TaskTemplate.RestartPolicy).toMatchObject({ Condition: "on-failure", MaxAttempts: 4 });
      expect(spec.TaskTemplate.Placement.Constraints).toEqual(["node.role==manager"]);
      expect(spec.TaskTemplate.ContainerSpec.StopGracePeriod).toBe(7_000_000_000);
      expect(spec.UpdateConfig.Order).toBe("stop-first");
      // start scales back to the replicas update set.
      await ok("mongo.update", { mongoId, replicas: 2 });
      await ok("mongo.stop", { mongoId });
      await ok("mongo.start", { mongoId });
      const replicas = await dockerCli([
        "service",
        "inspect",
        appName,
        "--format",
        "{{.Spec.Mode.Replicated.Replicas}}",
      ]);
      expect(replicas.trim()).toBe("2");
      await ok("mongo.remove", { mongoId });
      await gone("service", appName);
    },
    DEPLOY_WAIT_MS * 2,
  );
});

describe("reconciliation and events", () => {
  it(
    "a database whose service vanished turns to error from observation and back to done on redeploy; deployments record appDeploy / appBuildError events naming it",
    async () => {
      const { mongoId, appName } = await createMongo("db-observed", "Observed");
      const one = async () => (await platform.query("mongo.one", { mongoId }, as())).body;
      const eventsOf = () =>
        platform.ctx.db
          .selectFrom("events")
          .select(["kind", "applicationId", "payload"])
          .where(sql<boolean>`payload->>'databaseId' = ${mongoId}`)
          .orderBy("createdAt")
          .execute();
      const deployed = await settle("mongo", "deploy", { mongoId });
      expect(deployed.status, deployed.logs).toBe("done");
      expect(await eventsOf()).toEqual([
        {
          kind: "appDeploy",
          applicationId: null,
          payload: expect.objectContaining({
            applicationName: "Observed",
            databaseId: mongoId,
            type: "mongo",
            status: "success",
          }),
        },
      ]);

      // The service is removed behind the platform's back: seen twice, the status follows.
      await dockerCli(["service", "rm", appName]);
      await gone("service", appName);
      const reconciler = new Reconciler(platform.ctx);
      try {
        await reconciler.reconcile();
        expect((await one()).applicationStatus).toBe("done");
        await reconciler.reconcile();
        expect(await one()).toMatchObject({
          applicationStatus: "error",
          applicationStatusMessage: expect.stringContaining("missing"),
        });
        const again = await settle("mongo", "deploy", { mongoId });
        expect(again.status, again.logs).toBe("done");
        await reconciler.reconcile();
        await reconciler.reconcile();
        expect(await one()).toMatchObject({ applicationStatus: "done", applicationStatusMessage: null });
      } finally {
        await reconciler.close();
      }

      // A deployment that fails records appBuildError.
      await ok("mongo.update", { mongoId, dockerImage: "platform-test/no-such-image:1" });
      const failed = await settle("mongo", "deploy", { mongoId });
      expect(failed.status).toBe("error");
      expect((await eventsOf()).map((event) => event.kind)).toEqual([
        "appDeploy",
        "appDeploy",
        "appBuildError",
      ]);
      await ok("mongo.remove", { mongoId });
      await gone("service", appName);
    },
    DEPLOY_WAIT_MS * 3,
  );
});

describe("deployment.killProcess", () => {
  it(
    "stops a running database deployment on Docker: it ends in error, the service's status is put back, the next deployment runs",
    async () => {
      await dockerCli(["image", "inspect", IMAGES.redis]);
      const appName = newAppName("db-kill");
      const { redisId } = await ok("redis.create", {
        name: "Stuck",
        appName,
        environmentId,
        databasePassword: "Redis#pass1",
      });
      // No node has that much memory: Swarm keeps the task pending and the deployment waits for it.
      await ok("redis.update", { redisId, memoryReservation: "4096g" });
      const { deploymentId } = await ok("redis.deploy", { redisId });
      const row = async () =>
        (await platform.query("deployment.allByType", { id: redisId, type: "redis" }, as())).body.find(
          (deployment: { deploymentId: string }) => deployment.deploymentId === deploymentId,
        );
      await eventually(async () => {
        const current = await row();
        if (!current.logs.includes(`creating service ${appName}`)) throw new Error("not yet deploying");
      });
      expect((await row()).status).toBe("running");

      expect(await ok("deployment.killProcess", { deploymentId })).toEqual({
        success: true,
        message: "Deployment killed",
      });
      expect(await row()).toMatchObject({
        status: "error",
        errorMessage: "Killed by deployment.killProcess",
      });
      const one = (await platform.query("redis.one", { redisId }, as())).body;
      expect(one.applicationStatus).toBe("idle");

      await ok("redis.update", { redisId, memoryReservation: null });
      const next = await settle("redis", "deploy", { redisId });
      expect(next.status, next.logs).toBe("done");
      await ok("redis.remove", { redisId });
      await gone("service", appName);
    },
    DEPLOY_WAIT_MS * 2,
  );
});

describe("credentials: update and changePassword change them inside the running database", () => {
  /** Creates and deploys a service of `kind` with an external port; answers its id and port. */
  async function deployed(kind: string, prefix: string, fields: Record<string, unknown>) {
    await dockerCli(["image", "inspect", IMAGES[kind as keyof typeof IMAGES]]);
    const appName = newAppName(prefix);
    const created = await ok(`${kind}.create`, {
      name: `${kind} credentials`,
      appName,
      environmentId,
      ...fields,
    });
    const id = created[`${kind}Id`] as string;
    const externalPort = await freePort();
    const deployment = await settle(kind, "saveExternalPort", { [`${kind}Id`]: id, externalPort });
    expect(deployment.status, deployment.logs).toBe("done");
    return { id, idKey: `${kind}Id`, externalPort, appName };
  }
  const one = async (kind: string, input: Record<string, unknown>) =>
    (await platform.query(`${kind}.one`, input, as())).body;

  it(
    "postgres: a new password connects and the old one does not, a renamed user too; one shows them; a stopped database is a 409",
    async () => {
      const { id, idKey, externalPort, appName } = await deployed("postgres", "db-pgcred", {
        databaseName: "ledger",
        databaseUser: "keeper",
        databasePassword: "Old#pass1",
      });
      const connect = async (user: string, password: string) => {
        const client = new pg.Client({
          host: "127.0.0.1",
          port: externalPort,
          user,
          password,
          database: "ledger",
          connectionTimeoutMillis: 3000,
        });
        await client.connect();
        await client.end();
      };
      await eventually(() => connect("keeper", "Old#pass1"));

      await ok("postgres.update", { [idKey]: id, databasePassword: "New#pass2" });
      await connect("keeper", "New#pass2");
      await expect(connect("keeper", "Old#pass1")).rejects.toThrow(/password authentication failed/);
      let shown = await one("postgres", { [idKey]: id });
      expect(shown.databasePassword).toBe("New#pass2");
      expect(shown.internalConnectionUrl).toContain("keeper:New%23pass2@");

      await ok("postgres.update", { [idKey]: id, databaseUser: "steward", databasePassword: "Third#pass3" });
      await connect("steward", "Third#pass3");
      await expect(connect("keeper", "Third#pass3")).rejects.toThrow(/password authentication failed/);
      shown = await one("postgres", { [idKey]: id });
      expect(shown.databaseUser).toBe("steward");
      expect(shown.databasePassword).toBe("Third#pass3");
      // The temporary superuser of the rename is gone.
      const client = new pg.Client({
        host: "127.0.0.1",
        port: externalPort,
        user: "steward",
        password: "Third#pass3",
        database: "ledger",
      });
      await client.connect();
      const roles = await client.query("select rolname from pg_roles where rolname like 'platform_rename_%'");
      await client.end();
      expect(roles.rows).toEqual([]);

      // changePassword does the same for the user's password.
      await ok("postgres.changePassword", { [idKey]: id, password: "Fifth#pass5" });
      await connect("steward", "Fifth#pass5");
      await expect(connect("steward", "Third#pass3")).rejects.toThrow(/password authentication failed/);
      expect((await one("postgres", { [idKey]: id })).databasePassword).toBe("Fifth#pass5");

      // Stopped: the database cannot take the change; nothing is stored.
      await ok("postgres.stop", { [idKey]: id });
      await eventually(async () => {
        const running = await dockerCli([
          "ps",
          "-q",
          "--filter",
          `label=com.docker.swarm.service.name=${appName}`,
        ]);
        if (running.trim()) throw new Error("the task is still running");
      }, 60_000);
      const refused = await platform.mutate(
        "postgres.update",
        { [idKey]: id, databasePassword: "Fourth#4" },
        as(),
      );
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(JSON.stringify(refused.body)).toContain("not running");
      const refusedChange = await platform.mutate(
        "postgres.changePassword",
        { [idKey]: id, password: "Sixth#6" },
        as(),
      );
      expect(refusedChange.status, JSON.stringify(refusedChange.body)).toBe(409);
      expect((await one("postgres", { [idKey]: id })).databasePassword).toBe("Fifth#pass5");
    },
    DEPLOY_WAIT_MS * 2,
  );

  it(
    "mariadb: the user's new password logs in, the old one does not; root keeps the one it was initialised with",
    async () => {
      const { id, idKey, externalPort } = await deployed("mariadb", "db-mcred", {
        databaseName: "shop",
        databaseUser: "clerk",
        databasePassword: "Maria#old1",
      });
      const connect = async (user: string, password: string) => {
        const connection = await mysql.createConnection({
          host: "127.0.0.1",
          port: externalPort,
          user,
          password,
          connectTimeout: 3000,
        });
        await connection.end();
      };
      await eventually(() => connect("clerk", "Maria#old1"));
      await ok("mariadb.update", { [idKey]: id, databasePassword: "Maria#new2" });
      await connect("clerk", "Maria#new2");
      await expect(connect("clerk", "Maria#old1")).rejects.toThrow(/Access denied/);
      const shown = await one("mariadb", { [idKey]: id });
      expect(shown.databasePassword).toBe("Maria#new2");
      // root was initialised with the user's first password and keeps it: one says so.
      expect(shown.databaseRootPassword).toBe("Maria#old1");
      await connect("root", "Maria#old1");
      await ok("mariadb.update", { [idKey]: id, databaseRootPassword: "Root#new3" });
      await connect("root", "Root#new3");
      await expect(connect("root", "Maria#old1")).rejects.toThrow(/Access denied/);
      // changePassword: the user's by default, root's with type root.
      await ok("mariadb.changePassword", { [idKey]: id, password: "Maria#new4" });
      await connect("clerk", "Maria#new4");
      await expect(connect("clerk", "Maria#new2")).rejects.toThrow(/Access denied/);
      await ok("mariadb.changePassword", { [idKey]: id, password: "Root#new5", type: "root" });
      await connect("root", "Root#new5");
      await expect(connect("root", "Root#new3")).rejects.toThrow(/Access denied/);
      expect(await one("mariadb", { [idKey]: id })).toMatchObject({
        databasePassword: "Maria#new4",
        databaseRootPassword: "Root#new5",
      });
    },
    DEPLOY_WAIT_MS * 2,
  );

  it(
    "redis: the new password AUTHs, the old one does not, and a restart keeps it",
    async () => {
      const { id, idKey, externalPort, appName } = await deployed("redis", "db-rcred", {
        databasePassword: "Redis#old1",
      });
      const auth = async (password: string) => {
        const client = createClient({
          socket: { host: "127.0.0.1", port: externalPort, connectTimeout: 3000, reconnectStrategy: false },
          password,
        });
        client.on("error", () => {});
        await client.connect();
        client.destroy();
      };
      await eventually(() => auth("Redis#old1"));
      await ok("redis.update", { [idKey]: id, databasePassword: "Redis#new2" });
      expect((await one("redis", { [idKey]: id })).databasePassword).toBe("Redis#new2");
      // The service's --requirepass now names the new password: its restarted task uses it.
      const args = JSON.parse(
        await dockerCli([
          "service",
          "inspect",
          "--format",
          "{{json .Spec.TaskTemplate.ContainerSpec.Args}}",
          appName,
        ]),
      );
      expect(args[args.indexOf("--requirepass") + 1]).toBe("Redis#new2");
      await eventually(() => auth("Redis#new2"));
      await expect(auth("Redis#old1")).rejects.toThrow(/WRONGPASS|invalid|NOAUTH/i);
      await ok("redis.changePassword", { [idKey]: id, password: "Redis#new3" });
      expect((await one("redis", { [idKey]: id })).databasePassword).toBe("Redis#new3");
      // The service's task restarts with the new --requirepass: wait until it answers again.
      await eventually(async () => {
        await auth("Redis#new3");
        await expect(auth("Redis#new2")).rejects.toThrow(/WRONGPASS|invalid|NOAUTH/i);
      });
    },
    DEPLOY_WAIT_MS * 2,
  );
});
