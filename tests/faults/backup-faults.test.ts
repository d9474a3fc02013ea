/**
 * Backups under faults, with the real processes (deploy-harness.ts: a control plane and an
 * enrolled agent that can be killed -9) and s3rver behind a TCP proxy (tcp-proxy.ts) as the
 * destination. A postgres database on the agent's server is backed up while:
 * - the agent is killed -9 during the dump (pg_dump provably running: it waits on a table lock
 *   the test holds), then started again;
 * - the control plane is killed -9 during the upload (its bytes provably in flight: the proxy
 *   holds them), then started again.
 * The first ends in a settled failed run and no object in the bucket; the second is finished by
 * the agent and recorded by the restarted control plane from the job's outcome (issue 40 item 4:
 * one run, its object in the bucket and named); then the next scheduled run
 * succeeds, and aborts the unfinished multipart upload a killed agent left under the backup's
 * prefix. The control plane's own backup (databaseType web-server, streamed by the control
 * plane itself) is killed -9 during its upload the same way: failed at the restart, never run
 * again, no object.
 */

import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { abortStaleUploads, listObjects } from "../../packages/object-storage/src/s3.ts";
import {
  leaveUnfinishedUpload,
  startTestS3,
  type TestS3,
} from "../../packages/object-storage/src/testing/s3.ts";
import { DeployFaultRig } from "./deploy-harness.ts";
import { TcpProxy } from "./tcp-proxy.ts";

const POSTGRES_IMAGE = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";
const PREFIX = "faults/pg";

const rig = new DeployFaultRig();
let s3: TestS3;
let proxy: TcpProxy;
let postgresId: string;
let backupId: string;
let appName = "";
let databasePort: number;

interface Run {
  deploymentId: string;
  title: string;
  status: string;
  errorMessage: string | null;
  imageName: string | null;
  logs: string;
}

async function runs(): Promise<Run[]> {
  return rig.api.queryOk("deployment.allByType", { id: postgresId, type: "postgres" });
}

/** The settled run that is not one of `before` (the deployment ids known before it started). */
async function settledNewRun(before: Set<string>): Promise<Run> {
  let found: Run | undefined;
  await rig.until(
    "the new backup run to settle",
    async () => {
      // The oldest new one (a schedule firing every second may have queued more).
      found = (await runs()).filter((run) => !before.has(run.deploymentId)).at(-1);
      return found !== undefined && (found.status === "done" || found.status === "error");
    },
    90_000,
  );
  return found!;
}

const knownRuns = async () => new Set((await runs()).map((run) => run.deploymentId));

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: databasePort,
    user: "shop",
    password: "Pg-faults-1",
    database: "shop",
    connectionTimeoutMillis: 3000,
  });
  client.on("error", () => {}); // the database is removed at the end
  await client.connect();
  return client;
}

/** Until pg_dump of a new run waits on the test's table lock (the dump is under way). */
async function dumpWaiting(before: Set<string>, manual: { answer?: unknown }): Promise<void> {
  await rig.until(
    "pg_dump waiting on the lock",
    async () => {
      if (manual.answer) throw new Error(`manualBackupPostgres answered ${JSON.stringify(manual.answer)}`);
      const ended = (await runs()).find(
        (run) => !before.has(run.deploymentId) && (run.status === "done" || run.status === "error"),
      );
      if (ended) throw new Error(`the run ended first: ${ended.status} ${ended.errorMessage}\n${ended.logs}`);
      // A session of its own: inside the locker's transaction pg_stat_activity stays as first read.
      const watcher = await connect();
      try {
        const waiting = await watcher.query(
          "select count(*)::int as n from pg_stat_activity where application_name = 'pg_dump' and wait_event_type = 'Lock'",
        );
        return waiting.rows[0].n > 0;
      } finally {
        await watcher.end();
      }
    },
    30_000,
  );
}

/** Starts a manual run; its answer (once it ends, or the connection failed) lands in `answer`. */
function startManualBackup(): { answer?: unknown; done: Promise<void> } {
  const manual: { answer?: unknown; done: Promise<void> } = { done: Promise.resolve() };
  manual.done = rig.api.mutate("backup.manualBackupPostgres", { backupId }).then(
    (response) => {
      manual.answer = response;
    },
    (error: Error) => {
      manual.answer = error.message;
    },
  );
  return manual;
}

async function bucketKeys(): Promise<string[]> {
  return (await listObjects(s3.storage, `${PREFIX}/`)).map((object) => object.key);
}

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", POSTGRES_IMAGE]);
  s3 = await startTestS3();
  proxy = await TcpProxy.start();
  proxy.forwardTo("127.0.0.1", Number(new URL(s3.endpoint).port));
  await rig.start({
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
    PLATFORM_DEFAULT_IMAGE_POSTGRES: POSTGRES_IMAGE,
  });
  const destination = await rig.api.mutateOk("destination.create", {
    name: "Proxied S3",
    provider: "Minio",
    accessKey: s3.storage.accessKey,
    secretAccessKey: s3.storage.secretAccessKey,
    bucket: s3.storage.bucket,
    region: "us-east-1",
    endpoint: `http://127.0.0.1:${proxy.port}`,
  });
  appName = uniqueName("bkf-pg");
  const created = await rig.api.mutateOk("postgres.create", {
    name: "faults data",
    appName,
    environmentId: rig.environmentId,
    serverId: rig.serverId,
    databaseName: "shop",
    databaseUser: "shop",
    databasePassword: "Pg-faults-1",
  });
  postgresId = created.postgresId;
  databasePort = await freePort();
  const before = await knownRuns();
  await rig.api.mutateOk("postgres.saveExternalPort", { postgresId, externalPort: databasePort });
  const deployed = await settledNewRun(before);
  expect(deployed.status, deployed.errorMessage ?? "").toBe("done");
  let client: pg.Client | undefined;
  await rig.until("postgres to accept connections", async () => {
    client = await connect();
    return true;
  });
  await client!.query("create table items (id int primary key, name text)");
  await client!.query("insert into items select g, 'item ' || g from generate_series(1, 1000) g");
  await client!.end();
  const backup = await rig.api.mutateOk("backup.create", {
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
}, 150_000);

afterAll(async () => {
  await rig.close();
  if (appName) {
    await dockerCli(["service", "rm", appName]).catch(() => {});
    for (let attempt = 0; attempt < 30; attempt++) {
      if (
        await dockerCli(["volume", "rm", "-f", `${appName}-data`]).then(
          () => true,
          () => false,
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  await proxy?.close();
  await s3?.close();
}, 90_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.error(rig.processOutput()));
});

describe("backups under faults", () => {
  it("agent kill -9 during the dump: the run fails, no object is left", async () => {
    const locker = await connect();
    await locker.query("begin");
    await locker.query("lock table items in access exclusive mode");
    const before = await knownRuns();
    const manual = startManualBackup();
    // pg_dump runs and waits for the lock: the dump is under way.
    await dumpWaiting(before, manual);
    await rig.killAgent();
    await locker.query("rollback");
    await locker.end();
    rig.startAgent();
    const run = await settledNewRun(before);
    await manual.done;
    expect(run.status).toBe("error");
    expect(run.errorMessage).toMatch(/lost the backup job|restarted/);
    expect(await bucketKeys()).toEqual([]);
    const one = await rig.api.queryOk("backup.one", { backupId });
    expect(one.lastRun).toMatchObject({ deploymentId: run.deploymentId, status: "error", backupFile: null });
  }, 90_000);

  it("control plane kill -9 during the upload: the agent finishes it, the restarted control plane records it", async () => {
    const locker = await connect();
    await locker.query("begin");
    await locker.query("lock table items in access exclusive mode");
    const before = await knownRuns();
    const manual = startManualBackup();
    await dumpWaiting(before, manual);
    // The upload's first write is held by the stand-in until the control plane is dead.
    let inFlight = false;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    s3.beforeWrite(async (key) => {
      if (!key.startsWith(`${PREFIX}/`)) return;
      inFlight = true;
      await released;
    });
    await locker.query("rollback");
    await locker.end();
    await rig.until("the upload in flight", async () => inFlight);
    await rig.controlPlane.stop("SIGKILL");
    await manual.done;
    // The agent goes on with its job while the control plane is down: its upload completes, and
    // the restarted control plane takes the run over from the job's outcome (issue 40 item 4).
    release();
    s3.beforeWrite(undefined);
    await rig.controlPlane.start();
    const run = await settledNewRun(before);
    expect(run.status, run.errorMessage ?? "").toBe("done");
    expect(run.logs).toMatch(/another one took it over/);
    const keys = await bucketKeys();
    expect(keys).toEqual([run.imageName]);
    const one = await rig.api.queryOk("backup.one", { backupId });
    expect(one.lastRun).toMatchObject({
      deploymentId: run.deploymentId,
      status: "done",
      backupFile: run.imageName,
    });
  }, 90_000);

  it("the next scheduled run succeeds and aborts the unfinished upload a killed agent left", async () => {
    // What an agent killed after its first part leaves: a multipart upload never completed.
    const staleKey = `${PREFIX}/shop-2020-01-01T00-00-00.000Z.dump.gz`;
    await leaveUnfinishedUpload(s3.storage, staleKey);
    const before = await knownRuns();
    await rig.api.mutateOk("backup.update", { backupId, enabled: true, schedule: "* * * * * *" });
    const run = await settledNewRun(before);
    await rig.api.mutateOk("backup.update", { backupId, enabled: false });
    expect(run.title).toBe("Scheduled backup");
    expect(run.status, run.errorMessage ?? "").toBe("done");
    expect(run.logs).toContain(`Aborted the unfinished upload of ${staleKey}`);
    expect(await abortStaleUploads(s3.storage, `${PREFIX}/`)).toEqual([]);
    const keys = await bucketKeys();
    expect(keys).toContain(run.imageName);
  }, 90_000);

  it("control plane kill -9 during a web-server backup's upload: failed at its restart, not run again, no object", async () => {
    const destination = (await rig.api.queryOk("backup.one", { backupId })).destination;
    const webServer = await rig.api.mutateOk("backup.create", {
      schedule: "0 0 1 1 *",
      enabled: false,
      prefix: "faults/web-server",
      destinationId: destination.destinationId,
      database: "",
      databaseType: "web-server",
    });
    // Its dump goes through the proxy: hold its bytes, so the upload is provably in flight.
    proxy.hold();
    const manual = rig.api
      .mutate("backup.manualBackupWebServer", { backupId: webServer.backupId })
      .catch((error: Error) => error.message);
    await rig.until("the upload in flight", async () => proxy.heldChunks > 0);
    await rig.controlPlane.stop("SIGKILL");
    await manual;
    await proxy.cut();
    await proxy.restore();
    await rig.controlPlane.start();
    let lastRun: {
      deploymentId: string;
      status: string;
      errorMessage: string | null;
      backupFile: string | null;
    };
    await rig.until("the interrupted run to settle", async () => {
      lastRun = (await rig.api.queryOk("backup.one", { backupId: webServer.backupId })).lastRun;
      return lastRun?.status === "error";
    });
    expect(lastRun!.errorMessage).toMatch(/Interrupted/);
    expect(lastRun!.backupFile).toBeNull();
    expect(await listObjects(s3.storage, "faults/web-server/")).toEqual([]);
    // Not run again: it stays the only run, failed.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = (await rig.api.queryOk("backup.one", { backupId: webServer.backupId })).lastRun;
    expect(after).toMatchObject({ deploymentId: lastRun!.deploymentId, status: "error" });
  }, 90_000);
});
