/**
 * Backups end to end on the real Docker Engine with the in-process agent, the database test
 * images (scripts/build-database-images.sh) and s3rver as the S3 stand-in (never skipped):
 * rows written through a real client are backed up by hand and on a schedule, retention keeps
 * the newest N files (a file the bucket refuses to delete is a warning in a run that still ends
 * done), the table is dropped and restored from the newest file, a verified restore counts the
 * rows in a throwaway container, and a corrupted file fails verification.
 * For postgres, mariadb and redis (mongo cannot run here: its argv is tested in the agent's
 * tools.test.ts), and libsql's archive of its data directory (from the sqld stand-in image).
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { createGzip, gunzipSync } from "node:zlib";
import { dockerCli, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { downloadObject, uploadObject } from "@platform/object-storage";
import { startTestS3, type TestS3 } from "@platform/object-storage/testing/s3.ts";
import mysql from "mysql2/promise";
import pg from "pg";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const WAIT_MS = 240_000;
const IMAGES = {
  postgres: process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15",
  mariadb: process.env.PLATFORM_TEST_MARIADB_IMAGE ?? "platform-test/db-mariadb:11",
  redis: process.env.PLATFORM_TEST_REDIS_IMAGE ?? "platform-test/db-redis:7",
  libsql: process.env.PLATFORM_TEST_LIBSQL_IMAGE ?? "platform-test/db-libsql-standin:0.24",
};

let platform: TestPlatform;
let s3: TestS3;
let owner: Session;
let environmentId: string;
let destinationId: string;
const appNames: string[] = [];
const directories: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

/** Retries `attempt` until it resolves, failing with its last error after `timeoutMs`. */
const eventually = <T>(attempt: () => Promise<T>, timeoutMs = 90_000): Promise<T> =>
  vi.waitFor(attempt, { timeout: timeoutMs, interval: 500 });

/** Creates and deploys a database of `kind` with an external port; answers its id, port and `one`. */
async function deployDatabase(
  kind: "postgres" | "mariadb" | "redis" | "libsql",
  fields: Record<string, unknown>,
) {
  const appName = uniqueName(`bk-${kind.slice(0, 2)}`);
  appNames.push(appName);
  const created = await ok(`${kind}.create`, { name: `${kind} data`, appName, environmentId, ...fields });
  const id = created[`${kind}Id`] as string;
  const externalPort = await freePort();
  const { deploymentId } = await ok(
    kind === "libsql" ? "libsql.saveExternalPorts" : `${kind}.saveExternalPort`,
    {
      [`${kind}Id`]: id,
      externalPort,
    },
  );
  const deployed = await platform.waitForDeployment(deploymentId, WAIT_MS);
  expect(deployed.status, deployed.logs).toBe("done");
  const one = (await platform.query(`${kind}.one`, { [`${kind}Id`]: id }, as())).body;
  return { id, appName, port: externalPort, one };
}

async function files(prefix: string): Promise<string[]> {
  const listed = await platform.query(
    "backup.listBackupFiles",
    { destinationId, search: `${prefix}/` },
    as(),
  );
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  return listed.body.map((file: { key: string }) => file.key);
}

async function restore(kind: string, databaseId: string, databaseName: string, backupFile: string) {
  const { deploymentId } = await ok("backup.restoreBackupWithLogs", {
    databaseId,
    databaseType: kind,
    databaseName,
    backupFile,
    destinationId,
  });
  return platform.waitForDeployment(deploymentId, WAIT_MS);
}

beforeAll(async () => {
  await requireDocker();
  for (const image of Object.values(IMAGES)) await dockerCli(["image", "inspect", image]);
  s3 = await startTestS3();
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "backup-e2e-"));
  directories.push(mainDirectory);
  platform = await startTestPlatform(
    {
      PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
      PLATFORM_DEFAULT_IMAGE_POSTGRES: IMAGES.postgres,
      PLATFORM_DEFAULT_IMAGE_MARIADB: IMAGES.mariadb,
      PLATFORM_DEFAULT_IMAGE_MYSQL: IMAGES.mariadb,
      PLATFORM_DEFAULT_IMAGE_REDIS: IMAGES.redis,
      PLATFORM_DEFAULT_IMAGE_LIBSQL: IMAGES.libsql,
    },
    { agents: { localAgent: { mainDirectory } } },
  );
  owner = await platform.registerOwner();
  environmentId = (await ok("project.create", { name: "Backups" })).environment.environmentId;
  const destination = await ok("destination.create", {
    name: "Local S3",
    provider: "Minio",
    accessKey: s3.storage.accessKey,
    secretAccessKey: s3.storage.secretAccessKey,
    bucket: s3.storage.bucket,
    region: "us-east-1",
    endpoint: s3.endpoint,
  });
  destinationId = destination.destinationId;
  const { organizationId: _organization, createdAt: _created, ...fields } = destination;
  expect(await ok("destination.testConnection", fields)).toEqual({ success: true });
}, 120_000);

afterAll(async () => {
  await platform?.close();
  for (const name of appNames) await dockerCli(["service", "rm", name]).catch(() => {});
  for (const name of appNames) {
    await eventually(() => dockerCli(["volume", "rm", "-f", `${name}-data`]), 60_000).catch(() => {});
  }
  await s3?.close();
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 180_000);

describe("postgres", () => {
  it(
    "backs up by hand and on a schedule, keeps the newest 2, restores a dropped table, verifies, and fails a corrupted file",
    async () => {
      const {
        id: postgresId,
        port,
        one,
      } = await deployDatabase("postgres", {
        databaseName: "shop",
        databaseUser: "shop",
        databasePassword: "Pg#backup1",
      });
      const query = async (text: string) => {
        const client = await eventually(async () => {
          const attempt = new pg.Client({
            host: "127.0.0.1",
            port,
            user: one.databaseUser,
            password: one.databasePassword,
            database: one.databaseName,
            connectionTimeoutMillis: 3000,
          });
          await attempt.connect();
          return attempt;
        });
        try {
          return await client.query(text);
        } finally {
          await client.end();
        }
      };
      await query("create table items (id int primary key, name text)");
      await query("insert into items values (1, 'tea'), (2, 'milk'), (3, 'bread')");

      const backup = await ok("backup.create", {
        schedule: "0 0 1 1 *",
        prefix: "pg/daily",
        destinationId,
        keepLatestCount: 2,
        database: "shop",
        databaseType: "postgres",
        postgresId,
      });
      expect(backup).toMatchObject({ postgresId, mysqlId: null, enabled: true, lastRun: null });
      const runs = [];
      for (let i = 0; i < 3; i++) {
        const run = await ok("backup.manualBackupPostgres", { backupId: backup.backupId });
        expect(run.status, run.errorMessage).toBe("done");
        expect(run.backupFile).toMatch(/^pg\/daily\/shop-.*\.dump\.gz$/);
        runs.push(run);
      }
      // Retention: the newest two files are kept, the oldest is deleted.
      expect(await files("pg/daily")).toEqual([runs[1].backupFile, runs[2].backupFile]);
      // The password is in no run's log.
      const row = await platform.waitForDeployment(runs[2].deploymentId);
      expect(row.logs).not.toContain("Pg#backup1");
      expect(row.logs).toContain("Retention: deleted");
      // A file the bucket refuses to delete is a warning naming it; the stored backup stays done.
      s3.refuseDeletes("pg/daily/");
      try {
        const kept = await ok("backup.manualBackupPostgres", { backupId: backup.backupId });
        expect(kept.status, kept.errorMessage).toBe("done");
        const keptRow = await platform.waitForDeployment(kept.deploymentId);
        expect(keptRow.logs).toContain(
          `Warning: retention could not delete ${runs[1].backupFile}: AccessDenied`,
        );
        expect(await files("pg/daily")).toEqual([runs[1].backupFile, runs[2].backupFile, kept.backupFile]);
      } finally {
        s3.refuseDeletes(undefined);
      }
      // A keepLatestCount changed by backup.update holds from the next run.
      await ok("backup.update", { backupId: backup.backupId, keepLatestCount: 1 });
      const single = await ok("backup.manualBackupPostgres", { backupId: backup.backupId });
      expect(single.status, single.errorMessage).toBe("done");
      expect(await files("pg/daily")).toEqual([single.backupFile]);
      // Two again: the scheduled runs below must not delete the file being restored.
      await ok("backup.update", { backupId: backup.backupId, keepLatestCount: 2 });

      // On a schedule (every second, croner's 6-field form), then off again.
      await ok("backup.update", { backupId: backup.backupId, schedule: "* * * * * *" });
      const scheduled = await eventually(async () => {
        const found = await platform.ctx.db
          .selectFrom("deployments")
          .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
          .selectAll()
          .where("backupRuns.backupId", "=", backup.backupId)
          .where("title", "=", "Scheduled backup")
          .where("status", "=", "done")
          .executeTakeFirstOrThrow();
        return found;
      }, 60_000);
      await ok("backup.update", { backupId: backup.backupId, enabled: false });
      expect(scheduled.backupFile).toMatch(/^pg\/daily\/shop-/);
      // A scheduled run that started before the schedule was turned off still finishes: let it,
      // or its file (written after the drop below) would be the newest one restored and verified.
      await eventually(async () => {
        const unfinished = await platform.ctx.db
          .selectFrom("deployments")
          .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
          .select("deployments.deploymentId")
          .where("backupRuns.backupId", "=", backup.backupId)
          .where("status", "in", ["idle", "running"])
          .execute();
        expect(unfinished).toEqual([]);
      }, 60_000);

      await query("drop table items");
      const newest = (await files("pg/daily")).at(-1)!;
      const restored = await restore("postgres", postgresId, "shop", newest);
      expect(restored.status, restored.logs).toBe("done");
      expect(restored.kind).toBe("restore");
      expect((await query("select name from items order by id")).rows.map((r) => r.name)).toEqual([
        "tea",
        "milk",
        "bread",
      ]);

      // A verified restore into a throwaway container counts the rows the user named.
      await ok("backup.update", { backupId: backup.backupId, verifyRestore: true, verifyTable: "items" });
      const verified = await ok("backup.verifyRestore", { backupId: backup.backupId });
      expect(verified.status, verified.errorMessage).toBe("done");
      expect(verified.verification).toBe("3 rows in items");
      const shown = (await platform.query("backup.one", { backupId: backup.backupId }, as())).body;
      expect(shown.lastVerifiedRestore).toMatchObject({ status: "done", check: "3 rows in items" });
      const leftovers = await dockerCli([
        "ps",
        "-a",
        "--filter",
        "label=platform.backupVerify",
        "--format",
        "{{.Names}}",
      ]);
      expect(leftovers.trim()).toBe("");

      // A corrupted file (valid gzip, not a dump) fails verification, and says so.
      const corrupted = "pg/daily/shop-9999-12-31T00-00-00.000Z.dump.gz";
      await uploadObject(
        s3.storage,
        corrupted,
        Readable.from([Buffer.from("not a dump at all")]).pipe(createGzip()),
      );
      const failed = await ok("backup.verifyRestore", { backupId: backup.backupId, backupFile: corrupted });
      expect(failed.status).toBe("error");
      expect(failed.errorMessage).toMatch(/verification .* failed/);
      const after = (await platform.query("backup.one", { backupId: backup.backupId }, as())).body;
      expect(after.lastVerifiedRestore).toMatchObject({ status: "error", backupFile: corrupted });
      // The backup's runs are its deployments, newest first; another organization gets a 404.
      const listed = await platform.query(
        "deployment.allByType",
        { id: backup.backupId, type: "backup" },
        as(),
      );
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
      const listedIds = (listed.body as { deploymentId: string }[]).map((run) => run.deploymentId);
      expect(listedIds[0]).toBe(failed.deploymentId);
      expect(listedIds).toEqual(
        expect.arrayContaining([
          ...runs.map((run) => run.deploymentId),
          scheduled.deploymentId,
          verified.deploymentId,
        ]),
      );
      const stranger = await createUserDirectly(platform, { email: "stranger-backup@example.com" });
      const hidden = await platform.query(
        "deployment.allByType",
        { id: backup.backupId, type: "backup" },
        { token: stranger.token },
      );
      expect(hidden.status).toBe(404);
      const events = await platform.ctx.db
        .selectFrom("events")
        .select(["kind", "payload"])
        .where("kind", "=", "databaseBackup")
        .execute();
      const statuses = events.map((event) => (event.payload as unknown as { status: string }).status);
      expect(statuses).toContain("success");
      expect(statuses).toContain("error");
    },
    WAIT_MS * 3,
  );
});

describe("mariadb", () => {
  it(
    "backs up with --single-transaction, restores a dropped table",
    async () => {
      const {
        id: mariadbId,
        port,
        one,
      } = await deployDatabase("mariadb", {
        databaseName: "shop",
        databaseUser: "shopper",
        databasePassword: "Maria#backup1",
        databaseRootPassword: "Root#backup1",
      });
      const run = async (text: string) => {
        const connection = await eventually(() =>
          mysql.createConnection({
            host: "127.0.0.1",
            port,
            user: one.databaseUser,
            password: one.databasePassword,
            database: one.databaseName,
            connectTimeout: 3000,
          }),
        );
        try {
          return (await connection.query(text))[0] as Record<string, unknown>[];
        } finally {
          await connection.end();
        }
      };
      await run("create table items (id int primary key, name text)");
      await run("insert into items values (1, 'tea'), (2, 'milk')");
      const backup = await ok("backup.create", {
        schedule: "0 0 1 1 *",
        prefix: "maria",
        destinationId,
        database: "shop",
        databaseType: "mariadb",
        mariadbId,
        verifyRestore: true,
      });
      const done = await ok("backup.manualBackupMariadb", { backupId: backup.backupId });
      expect(done.status, done.errorMessage).toBe("done");
      expect(done.verification).toMatch(/^integrity check ok/);
      await run("drop table items");
      const restored = await restore("mariadb", mariadbId, "shop", done.backupFile);
      expect(restored.status, restored.logs).toBe("done");
      expect((await run("select name from items order by id")).map((r) => r.name)).toEqual(["tea", "milk"]);
    },
    WAIT_MS * 2,
  );
});

describe("redis", () => {
  it(
    "backs up the RDB snapshot and restores flushed keys",
    async () => {
      const { id: redisId, port } = await deployDatabase("redis", { databasePassword: "Redis#backup1" });
      const client = async () => {
        const redis = createClient({
          socket: { host: "127.0.0.1", port, connectTimeout: 3000, reconnectStrategy: false },
          password: "Redis#backup1",
        });
        redis.on("error", () => {});
        await redis.connect();
        return redis;
      };
      const write = await eventually(client);
      await write.set("greeting", "hello");
      await write.set("count", "42");
      await write.quit();
      const backup = await ok("backup.create", {
        schedule: "0 0 1 1 *",
        prefix: "redis",
        destinationId,
        database: "",
        databaseType: "redis",
        redisId,
      });
      const done = await ok("backup.manualBackupRedis", { backupId: backup.backupId });
      expect(done.status, done.errorMessage).toBe("done");
      expect(done.backupFile).toMatch(/\.rdb\.gz$/);
      const flush = await eventually(client);
      await flush.flushAll();
      await flush.quit();
      const restored = await restore("redis", redisId, "", done.backupFile);
      expect(restored.status, restored.logs).toBe("done");
      const read = await eventually(client);
      expect(await read.get("greeting")).toBe("hello");
      expect(await read.get("count")).toBe("42");
      await read.quit();
    },
    WAIT_MS * 2,
  );
});

describe("libsql", () => {
  it(
    "archives sqld's data directory into the bucket (the row written is in it); verification is refused",
    async () => {
      const { id: libsqlId, port } = await deployDatabase("libsql", {
        databaseUser: "admin",
        databasePassword: "Sqld#backup1",
        sqldNode: "primary",
      });
      const execute = async (sql: string) => {
        const response = await fetch(`http://127.0.0.1:${port}/v2/pipeline`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Basic ${Buffer.from("admin:Sqld#backup1").toString("base64")}`,
          },
          body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql } }, { type: "close" }] }),
          signal: AbortSignal.timeout(3000),
        });
        const body = (await response.json()) as { results: { type: string }[] };
        if (body.results[0]?.type !== "ok") throw new Error(JSON.stringify(body));
      };
      await eventually(() => execute("create table notes (body text)"));
      await execute("insert into notes values ('libsql-backup-marker')");
      const fields = {
        schedule: "0 0 1 1 *",
        prefix: "libsql",
        destinationId,
        database: "edge",
        databaseType: "libsql",
        libsqlId,
      };
      const refused = await platform.mutate("backup.create", { ...fields, verifyRestore: true }, as());
      expect(refused.status).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["verifyRestore"]);
      const backup = await ok("backup.create", fields);
      expect(backup).toMatchObject({ libsqlId, postgresId: null, databaseType: "libsql" });
      const done = await ok("backup.manualBackupLibsql", { backupId: backup.backupId });
      expect(done.status, done.errorMessage).toBe("done");
      expect(done.backupFile).toMatch(/^libsql\/edge-.*\.tar\.gz$/);
      expect(await files("libsql")).toEqual([done.backupFile]);
      // The object is a gzipped tar of /var/lib/sqld: sqld's database file, with the row in it.
      const { body } = await downloadObject(s3.storage, done.backupFile);
      const tar = gunzipSync(await buffer(body));
      expect(tar.subarray(257, 262).toString()).toBe("ustar");
      expect(tar.includes(Buffer.from("iku.db/dbs/default/data"))).toBe(true);
      expect(tar.includes(Buffer.from("libsql-backup-marker"))).toBe(true);
      const row = await platform.waitForDeployment(done.deploymentId);
      expect(row.logs).not.toContain("Sqld#backup1");
      // Another kind's manual backup procedure refuses it.
      const wrongKind = await platform.mutate(
        "backup.manualBackupRedis",
        { backupId: backup.backupId },
        as(),
      );
      expect(wrongKind.status).toBe(400);
    },
    WAIT_MS * 2,
  );
});
