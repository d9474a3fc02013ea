/**
 * Issue 40 item 4, backups: two control planes on one PostgreSQL and one NATS (JetStream, JWT)
 * with an enrolled agent process, a postgres database on the agent's server, and the S3
 * stand-in as the destination. A manual backup is started; while its upload is provably in
 * flight (the stand-in holds its first write), the copy running it (the holder of its lease) is
 * killed -9. The agent goes on with the job; the other copy takes the run over once the lease
 * ran out, asks the agent for the job's outcome (awaitJob) and records it: the run ends done on
 * the surviving copy, the object is in the bucket and the run names it with its size, one run
 * and one object only, and the backup's notification is delivered once. The same for a volume
 * backup of the database's data volume (a third copy started in place of the killed one).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import {
  type AgentProcess,
  killAgentProcess,
  startAgentProcess,
} from "../../apps/control-plane/src/agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../../apps/control-plane/src/agents/testing/nats-jwt.ts";
import { openDatabase } from "../../apps/control-plane/src/db/database.ts";
import { createTestDatabase } from "../../apps/control-plane/src/testing/harness.ts";
import { listObjects } from "../../packages/object-storage/src/s3.ts";
import { startTestS3, type TestS3 } from "../../packages/object-storage/src/testing/s3.ts";
import { type ApiClient, type ControlPlaneProcess, tail } from "../support/control-plane.ts";
import { Stop, startCopy as startSharedCopy, waitFor } from "./support.ts";

const POSTGRES_IMAGE = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";
const PREFIX = "ha/pg";

let nats: JwtNats;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Awaited<ReturnType<typeof openDatabase>>;
let s3: TestS3;
let agent: AgentProcess | undefined;
let appName = "";
const copies: ControlPlaneProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

const copySet = { prefix: "ha-takeover-", copies, cleanups };

function startCopy(name: string): Promise<{ copy: ControlPlaneProcess; api: ApiClient }> {
  return startSharedCopy(
    copySet,
    name,
    {
      ...nats.env,
      PLATFORM_SECRET_KEY: "ha-takeover-secret-key-0123456789abcdef",
      RECONCILE_INTERVAL_MS: "1000",
      // The stand-in S3 and the notification receiver listen on this machine.
      PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
      PLATFORM_NOTIFICATION_RETRY_MS: "250",
      PLATFORM_DEFAULT_IMAGE_POSTGRES: POSTGRES_IMAGE,
    },
    database,
  );
}

function until(what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  return waitFor(copies, what, check, {
    timeoutMs,
    context: () => `\n--- agent\n${agent?.logLines.slice(-40).join("\n")}`,
  });
}

const byName = new Map<string, { copy: ControlPlaneProcess; api: ApiClient }>();
let postgresId: string;
let backupId: string;
let destinationId: string;
/** Bodies the notification receiver got. */
const delivered: string[] = [];

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", POSTGRES_IMAGE]);
  nats = await startJwtNats({ jetstream: true });
  database = await createTestDatabase();
  db = await openDatabase(database.target);
  s3 = await startTestS3();
  for (const name of ["takeover-a", "takeover-b"]) byName.set(name, await startCopy(name));
  const a = byName.get("takeover-a")!.api;
  const b = byName.get("takeover-b")!.api;
  const session = await a.mutateOk("auth.register", {
    email: "owner@example.com",
    password: "correct-horse-battery",
    name: "Owner",
  });
  a.token = session.token;
  b.token = session.token;

  const server = await a.mutateOk("server.create", {
    name: "ha",
    ipAddress: "127.0.0.1",
    port: 22,
    username: "root",
  });
  const enrollment = await a.mutateOk("server.enrollmentCommand", { serverId: server.serverId });
  const stateDir = await mkdtemp(path.join(tmpdir(), "ha-takeover-agent-"));
  cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
  agent = startAgentProcess({
    stateDir,
    controlPlaneUrl: byName.get("takeover-a")!.copy.url,
    enrollmentToken: enrollment.token,
    heartbeatIntervalMs: 1000,
  });
  await until(
    "the agent online",
    async () => (await b.queryOk("server.one", { serverId: server.serverId })).online,
  );

  const receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      delivered.push(body);
      response.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    receiver.closeAllConnections();
    receiver.close();
  });
  await a.mutateOk("notification.createCustom", {
    name: "backups",
    databaseBackup: true,
    endpoint: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`,
  });

  await a.mutateOk("project.create", { name: "HA" });
  const { environmentId } = (
    await a.queryOk<{ environments: { environmentId: string }[] }[]>("project.all")
  )[0]!.environments[0]!;
  appName = uniqueName("ha-pg");
  const created = await a.mutateOk("postgres.create", {
    name: "ha data",
    appName,
    environmentId,
    serverId: server.serverId,
    databaseName: "shop",
    databaseUser: "shop",
    databasePassword: "Pg-ha-takeover-1",
  });
  postgresId = created.postgresId;
  await a.mutateOk("postgres.deploy", { postgresId });
  await until("the database deployed", async () => {
    const runs = await a.queryOk<{ status: string }[]>("deployment.allByType", {
      id: postgresId,
      type: "postgres",
    });
    if (runs.some((run) => run.status === "error")) throw new Stop("the database deployment failed");
    return runs.length > 0 && runs.every((run) => run.status === "done");
  });
  await until("postgres accepting connections", async () => {
    const container = (
      await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${appName}`])
    ).trim();
    if (!container) return false;
    // Over TCP: the image's first-start server listens on its socket only.
    await dockerCli(["exec", container, "pg_isready", "-h", "127.0.0.1", "-U", "shop", "-d", "shop"]);
    // A table with rows, so that the dump holds data.
    await dockerCli([
      "exec",
      container,
      "psql",
      "-U",
      "shop",
      "-d",
      "shop",
      "-c",
      "create table if not exists items as select g as id, 'item ' || g as name from generate_series(1, 1000) g",
    ]);
    return true;
  });
  const destination = await a.mutateOk("destination.create", {
    name: "Stand-in S3",
    provider: "Minio",
    accessKey: s3.storage.accessKey,
    secretAccessKey: s3.storage.secretAccessKey,
    bucket: s3.storage.bucket,
    region: "us-east-1",
    endpoint: s3.endpoint,
  });
  const backup = await a.mutateOk("backup.create", {
    schedule: "0 0 1 1 *",
    enabled: false,
    prefix: PREFIX,
    destinationId: destination.destinationId,
    keepLatestCount: 3,
    database: "shop",
    databaseType: "postgres",
    postgresId,
  });
  backupId = backup.backupId;
  destinationId = destination.destinationId;
}, 240_000);

afterAll(async () => {
  s3?.beforeWrite(undefined);
  await killAgentProcess(agent);
  for (const copy of copies) await copy.stop();
  if (appName) {
    await dockerCli(["service", "rm", appName]).catch(() => {});
    for (let attempt = 0; attempt < 30; attempt++) {
      const removed = await dockerCli(["volume", "rm", "-f", `${appName}-data`]).then(
        () => true,
        () => false,
      );
      if (removed) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await db?.close();
  await s3?.close();
  await database?.drop();
  await nats?.stop();
}, 120_000);

/** Holds the stand-in's writes of keys under `prefix` until released; `inFlight` once one came. */
function holdWrites(prefix: string): { inFlight: () => boolean; release: () => void } {
  let inFlight = false;
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  s3.beforeWrite(async (key) => {
    if (!key.startsWith(prefix)) return;
    inFlight = true;
    await released;
  });
  return { inFlight: () => inFlight, release };
}

/**
 * Kills -9 the copy holding the lease of run `deploymentId`, waits for the other copy to hold it
 * (the run taken over, its agent job still held by the stand-in), then answers that copy.
 */
async function killLeaseHolder(deploymentId: string): Promise<{ api: ApiClient; copy: ControlPlaneProcess }> {
  const lease = await db.db
    .selectFrom("deploymentLeases")
    .select("owner")
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirstOrThrow();
  const killed = byName.get(lease.owner)!;
  const [survivorName, survivor] = [...byName.entries()].find(([name]) => name !== lease.owner)!;
  killed.copy.child.kill("SIGKILL");
  byName.delete(lease.owner);
  await until("the surviving copy holding the run's lease", async () => {
    const now = await db.db
      .selectFrom("deploymentLeases")
      .select("owner")
      .where("deploymentId", "=", deploymentId)
      .executeTakeFirst();
    return now?.owner === survivorName;
  });
  return survivor;
}

describe("kill -9 of the copy running a backup", () => {
  it("another copy finishes it from the agent's job: done, its object in the bucket and named, run once", async () => {
    // The first write of the upload is held until the copy running it is dead.
    let inFlight = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    s3.beforeWrite(async (key) => {
      if (!key.startsWith(`${PREFIX}/`)) return;
      inFlight = true;
      await released;
    });
    const a = byName.get("takeover-a")!.api;
    const manual = a.mutate("backup.manualBackupPostgres", { backupId }).catch((error: Error) => error);
    await until("the upload in flight", async () => {
      const ended = await db.db
        .selectFrom("deployments")
        .select(["status", "errorMessage", "logs"])
        .where("targetId", "=", postgresId)
        .where("kind", "=", "backup")
        .where("status", "in", ["done", "error"])
        .executeTakeFirst();
      if (ended) throw new Stop(`the run ended first: ${JSON.stringify(ended)}`);
      return inFlight;
    });

    const run = await db.db
      .selectFrom("deployments")
      .select("deploymentId")
      .where("targetId", "=", postgresId)
      .where("kind", "=", "backup")
      .executeTakeFirstOrThrow();
    const lease = await db.db
      .selectFrom("deploymentLeases")
      .select("owner")
      .where("deploymentId", "=", run.deploymentId)
      .executeTakeFirstOrThrow();
    const killed = byName.get(lease.owner)!;
    const [survivorName, survivor] = [...byName.entries()].find(([name]) => name !== lease.owner)!;
    killed.copy.child.kill("SIGKILL");
    byName.delete(lease.owner);
    await manual;
    // The copy that ran the backup is gone; its agent job goes on (its upload still held) while
    // the other copy takes the run over once the lease ran out, and waits for the job.
    await until("the surviving copy holding the run's lease", async () => {
      const now = await db.db
        .selectFrom("deploymentLeases")
        .select("owner")
        .where("deploymentId", "=", run.deploymentId)
        .executeTakeFirst();
      return now?.owner === survivorName;
    });
    release();

    await until("the backup run settled on the surviving copy", async () => {
      const one = await survivor.api.queryOk<{ lastRun?: { status: string } }>("backup.one", { backupId });
      return one.lastRun?.status === "done" || one.lastRun?.status === "error";
    });
    const one = await survivor.api.queryOk<{
      lastRun: {
        deploymentId: string;
        status: string;
        errorMessage: string | null;
        backupFile: string | null;
      };
    }>("backup.one", { backupId });
    expect(one.lastRun, tail(survivor.copy.output, 40)).toMatchObject({
      deploymentId: run.deploymentId,
      status: "done",
    });
    const objects = await listObjects(s3.storage, `${PREFIX}/`);
    expect(objects.map((object) => object.key)).toEqual([one.lastRun.backupFile]);
    const recorded = await db.db
      .selectFrom("backupRuns")
      .select(["backupFile", "backupSizeBytes"])
      .where("deploymentId", "=", run.deploymentId)
      .executeTakeFirstOrThrow();
    expect(recorded.backupFile).toBe(objects[0]!.key);
    expect(Number(recorded.backupSizeBytes)).toBe(objects[0]!.size);
    const logs = await db.db
      .selectFrom("deployments")
      .select(["logs", "status"])
      .where("deploymentId", "=", run.deploymentId)
      .executeTakeFirstOrThrow();
    expect(logs.logs).toContain("another one took it over");
    expect(logs.logs).toContain(`Backup stored: ${objects[0]!.key}`);
    // Run once: no second run of the backup, no second object.
    const backupRuns = await db.db
      .selectFrom("deployments")
      .select("deploymentId")
      .where("targetId", "=", postgresId)
      .where("kind", "=", "backup")
      .execute();
    expect(backupRuns).toEqual([{ deploymentId: run.deploymentId }]);
    // The notification as usual, once.
    await until("the backup's notification delivered", async () =>
      delivered.some((body) => body.includes(run.deploymentId) || body.includes(objects[0]!.key)),
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const deliveries = delivered.filter(
      (body) => body.includes(objects[0]!.key) || body.includes(run.deploymentId),
    );
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toContain("success");
  }, 240_000);

  it("a volume backup: another copy records its object and size from the agent's job, run once", async () => {
    // Started again: the previous case killed one of the two.
    const restarted = await startCopy(`takeover-c`);
    byName.set("takeover-c", restarted);
    const survivorApi = [...byName.values()][0]!.api;
    restarted.api.token = survivorApi.token;
    const volumePrefix = "ha/volumes";
    const volumeBackup = await survivorApi.mutateOk("volumeBackups.create", {
      name: "data volume",
      volumeName: `${appName}-data`,
      prefix: volumePrefix,
      cronExpression: "0 0 1 1 *",
      enabled: false,
      postgresId,
      destinationId,
    });
    const held = holdWrites(`${volumePrefix}/`);
    // Started through the copy that does not run it as often as through the one that does.
    const manual = restarted.api
      .mutate("volumeBackups.runManually", { volumeBackupId: volumeBackup.volumeBackupId })
      .catch((error: Error) => error);
    await until("the volume upload in flight", async () => held.inFlight());
    const run = await db.db
      .selectFrom("deployments")
      .select("deploymentId")
      .where("kind", "=", "volumeBackup")
      .executeTakeFirstOrThrow();
    const survivor = await killLeaseHolder(run.deploymentId);
    held.release();
    await manual;
    const settled = async () =>
      db.db
        .selectFrom("deployments")
        .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
        .select(["status", "errorMessage", "logs", "backupFile", "backupSizeBytes"])
        .where("deployments.deploymentId", "=", run.deploymentId)
        .executeTakeFirstOrThrow();
    await until("the volume backup run settled", async () => (await settled()).status !== "running");
    const row = await settled();
    expect(row.status, `${row.errorMessage}\n${row.logs}\n${tail(survivor.copy.output, 40)}`).toBe("done");
    const objects = await listObjects(s3.storage, `${volumePrefix}/`);
    expect(objects.map((object) => object.key)).toEqual([row.backupFile]);
    expect(Number(row.backupSizeBytes)).toBe(objects[0]!.size);
    expect(row.logs).toContain("another one took it over");
    const volumeRuns = await db.db
      .selectFrom("deployments")
      .select("deploymentId")
      .where("kind", "=", "volumeBackup")
      .execute();
    expect(volumeRuns).toEqual([{ deploymentId: run.deploymentId }]);
  }, 240_000);
});
