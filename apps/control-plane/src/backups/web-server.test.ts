/**
 * The control plane's own backup (issue 32 item 2, Dokploy's web-server backup): an instance
 * administrator makes a backup row of databaseType web-server to a destination (s3rver); its
 * manual run (backup.manualBackupWebServer) is a deployment of the durable queue whose log is
 * read at /api/deployment.logs, which streams gzipped JSON lines into a multipart upload and
 * keeps the newest keepLatestCount files (a file the bucket refuses to delete is a warning in a
 * run that still ends done), and records a platformBackup event (Dokploy's dokployBackup); its schedule fires a run like a
 * database backup's. A control plane is rebuilt on an empty database from the file
 * the manual run wrote, by `npm run web-server-backup -- restore` (the same PLATFORM_SECRET_KEY):
 * the owner signs in there and finds the project and the destination, whose sealed secret still
 * opens. Everyone else is refused: another organization's owner (404 for the backup, 403 to
 * create one), a member of the instance organization (403). A run the control plane left running
 * fails at the next start, its object deleted if the upload still completed, and names no file; a database that is not empty, or an object of
 * another format, is refused by the restore.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import { listObjects, uploadObject } from "@platform/object-storage";
import { startTestS3, type TestS3 } from "@platform/object-storage/testing/s3.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase, type PostgresTarget } from "../db/database.ts";
import { insertDeployment } from "../deployments/repository.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import {
  createTestDatabase,
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../testing/harness.ts";
import { restoreWebServer } from "./web-server.ts";
import { failInterruptedWebServerRun } from "./web-server-runs.ts";

const run = promisify(execFile);
const ROOT = new URL("../../../../", import.meta.url).pathname;

const env = {
  PLATFORM_SECRET_KEY: randomBytes(32).toString("base64"),
  PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
};
let s3: TestS3;
let original: TestPlatform;
let rebuilt: TestPlatform | undefined;
let owner: Session;
let destination: Record<string, unknown>;
const drops: Array<() => Promise<void>> = [];
const as = (session: Session) => ({ token: session.token });

const destinationInput = () => ({
  name: "Kept bucket",
  provider: "Minio",
  accessKey: s3.storage.accessKey,
  secretAccessKey: s3.storage.secretAccessKey,
  bucket: s3.storage.bucket,
  region: "us-east-1",
  endpoint: s3.endpoint,
});

const webServerInput = (destinationId: string) => ({
  schedule: "0 3 * * *",
  prefix: "control-plane",
  destinationId,
  keepLatestCount: 2,
  database: "",
  databaseType: "web-server",
});

/** The web-server CLI, as an operator runs it, against `target`. */
function cli(target: PostgresTarget, ...args: string[]) {
  return run("npx", ["tsx", "apps/control-plane/src/backups/web-server-cli.ts", ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      DATABASE_URL: target.url,
      PLATFORM_BACKUP_ENDPOINT: s3.endpoint,
      PLATFORM_BACKUP_REGION: "us-east-1",
      PLATFORM_BACKUP_BUCKET: s3.storage.bucket,
      PLATFORM_BACKUP_ACCESS_KEY: s3.storage.accessKey,
      PLATFORM_BACKUP_SECRET_KEY: s3.storage.secretAccessKey,
    },
  });
}

beforeAll(async () => {
  s3 = await startTestS3();
  original = await startTestPlatform(env, { agents: { localAgent: { mainDirectory: "/nonexistent" } } });
  owner = await original.registerOwner("owner@example.com", "correct-horse-battery");
  destination = await original.mutateOk("destination.create", destinationInput(), as(owner));
}, 60_000);

afterAll(async () => {
  await rebuilt?.close();
  await original?.close();
  for (const drop of drops) await drop();
  await s3?.close();
});

describe("the control plane's own backup", () => {
  it("is the instance administrators' alone", async () => {
    const created = await original.mutateOk(
      "backup.create",
      webServerInput(destination.destinationId as string),
      as(owner),
    );
    expect(created).toMatchObject({ databaseType: "web-server", backupType: "database", postgresId: null });
    const member = await original.addMember(owner, "member");
    const stranger = await createUserDirectly(original, { email: "stranger@example.com" });
    const strangerDestination = await original.mutateOk(
      "destination.create",
      destinationInput(),
      as(stranger),
    );
    const byId = { backupId: created.backupId };
    expect((await original.query("backup.one", byId, as(member))).status).toBe(403);
    expect((await original.mutate("backup.manualBackupWebServer", byId, as(member))).status).toBe(403);
    expect(
      (await original.query("deployment.allByType", { id: created.backupId, type: "backup" }, as(member)))
        .status,
    ).toBe(403);
    expect((await original.query("backup.one", byId, as(stranger))).status).toBe(404);
    expect((await original.mutate("backup.manualBackupWebServer", byId, as(stranger))).status).toBe(404);
    const refused = await original.mutate(
      "backup.create",
      webServerInput(strangerDestination.destinationId),
      as(stranger),
    );
    expect(refused.status).toBe(403);
    // Fields a web-server backup has no use for are refused, naming them; nothing is made.
    for (const [field, value] of [
      ["verifyRestore", true],
      ["verifyTable", "orders"],
    ] as const) {
      const answer = await original.mutate(
        "backup.create",
        { ...webServerInput(destination.destinationId as string), [field]: value },
        as(owner),
      );
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body)).toContain(field);
    }
    expect(
      (await original.mutate("backup.verifyRestore", byId, as(owner))).status,
      "restore verification is the CLI's",
    ).toBe(400);
    expect((await original.mutate("backup.manualBackupPostgres", byId, as(owner))).status).toBe(400);
    const update = await original.mutate("backup.update", { ...byId, verifyRestore: true }, as(owner));
    expect(update.status).toBe(400);
    expect(JSON.stringify(update.body)).toContain("verifyRestore");
    // Restoring the web server is the command line's: the API's restore does not take it.
    const restore = await original.mutate(
      "backup.restoreBackupWithLogs",
      {
        databaseId: created.backupId,
        databaseType: "web-server",
        databaseName: "platform",
        backupFile: "control-plane/x.json.gz",
        destinationId: destination.destinationId,
      },
      as(owner),
    );
    expect(restore.status).toBe(400);
    expect(JSON.stringify(restore.body)).toContain("databaseType");
    await original.mutateOk("backup.remove", byId, as(owner));
    const rows = await original.ctx.db.selectFrom("backups").select("backupId").execute();
    expect(rows).toEqual([]);
  }, 60_000);

  it("rebuilds a control plane on an empty database from the file its manual run wrote", async () => {
    await original.mutateOk("project.create", { name: "Rebuilt shop" }, as(owner));
    const backup = await original.mutateOk(
      "backup.create",
      webServerInput(destination.destinationId as string),
      as(owner),
    );
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const answer = await original.mutateOk(
        "backup.manualBackupWebServer",
        { backupId: backup.backupId },
        as(owner),
      );
      expect(answer, JSON.stringify(answer)).toMatchObject({ success: true, status: "done" });
      answers.push(answer);
    }
    const last = answers.at(-1);
    expect(last.backupFile).toMatch(/^control-plane\/backup-[a-z0-9]+-.*\.json\.gz$/);
    expect(last.sizeBytes).toBeGreaterThan(0);
    // keepLatestCount 2: the oldest of the three files is gone.
    const files = (await listObjects(s3.storage, "control-plane/")).map((object) => object.key).sort();
    expect(files).toEqual(
      answers
        .slice(1)
        .map((answer) => answer.backupFile)
        .sort(),
    );

    // The run is a deployment of the queue, its log read by the instance administrator.
    const log = await original.request(`/api/deployment.logs?deploymentId=${last.deploymentId}`, as(owner));
    expect(log.status).toBe(200);
    expect(String(log.body)).toContain(`Backup stored: ${last.backupFile}`);
    expect(String(log.body)).toContain("Retention: deleted");
    const runs = await original.query(
      "deployment.allByType",
      { id: backup.backupId, type: "backup" },
      as(owner),
    );
    expect(runs.status, JSON.stringify(runs.body)).toBe(200);
    expect((runs.body as { deploymentId: string }[]).map((run) => run.deploymentId)).toEqual(
      answers.map((answer) => answer.deploymentId).reverse(),
    );
    const event = await original.ctx.db
      .selectFrom("events")
      .selectAll()
      .where("kind", "=", "platformBackup")
      .orderBy("createdAt", "desc")
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(event)).toContain(last.deploymentId);
    const one = (await original.query("backup.one", { backupId: backup.backupId }, as(owner))).body;
    expect(one.lastRun).toMatchObject({ deploymentId: last.deploymentId, status: "done" });

    // The schedule fires a run the same way.
    await original.ctx.backups.fire(backup.backupId);
    const scheduled = await original.ctx.db
      .selectFrom("deployments")
      .select(["deploymentId", "title"])
      .where("webServerBackupId", "=", backup.backupId)
      .where("title", "=", "Scheduled backup")
      .executeTakeFirstOrThrow();
    expect((await original.waitForDeployment(scheduled.deploymentId)).status).toBe("done");

    // A fresh installation's database, restored by the command line before the control plane starts.
    const fresh = await createTestDatabase();
    drops.push(fresh.drop);
    const restored = await cli(fresh.target, "restore", last.backupFile);
    expect(restored.stdout).toMatch(/Restored \d+ rows/);
    // Once restored it is no longer empty: a second restore is refused.
    await expect(cli(fresh.target, "restore", last.backupFile)).rejects.toThrow(/not empty/);
    rebuilt = await startTestPlatform(env, {
      database: fresh.target,
      agents: { localAgent: { mainDirectory: "/nonexistent" } },
    });
    const login = await rebuilt.mutate("auth.login", {
      email: "owner@example.com",
      password: "correct-horse-battery",
    });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const again = { token: login.body.token as string };
    const projects = (await rebuilt.query("project.all", {}, again)).body;
    expect(projects.map((project: { name: string }) => project.name)).toContain("Rebuilt shop");
    const { organizationId: _o, createdAt: _c, ...fields } = destination;
    // The sealed secret opens with the same PLATFORM_SECRET_KEY: the connection test passes.
    expect(await rebuilt.mutateOk("destination.testConnection", { ...fields }, again)).toEqual({
      success: true,
    });
    // The backup row came along, and runs on the rebuilt installation too.
    const rerun = await rebuilt.mutateOk(
      "backup.manualBackupWebServer",
      { backupId: backup.backupId },
      again,
    );
    expect(rerun).toMatchObject({ success: true });
  }, 180_000);

  it("fails a run the control plane left running, naming no file, and never runs it again", async () => {
    const backup = await original.mutateOk(
      "backup.create",
      { ...webServerInput(destination.destinationId as string), prefix: "interrupted" },
      as(owner),
    );
    const deployment = await insertDeployment(original.ctx.db, {
      target: { kind: "webServer", id: backup.backupId },
      kind: "backup",
      title: "Scheduled backup",
      description: null,
      serverId: null,
      backupRun: {
        backupId: backup.backupId,
        backupDestinationId: backup.destinationId,
        backupFile: "interrupted/half.json.gz",
      },
    });
    // The upload completed just before the control plane stopped: nothing confirmed it.
    await uploadObject(s3.storage, "interrupted/half.json.gz", Readable.from([Buffer.from("half")]));
    await original.ctx.db
      .updateTable("deployments")
      .set({ status: "running" })
      .where("deploymentId", "=", deployment.deploymentId)
      .execute();
    await failInterruptedWebServerRun(original.ctx, deployment);
    const row = await original.ctx.db
      .selectFrom("deployments")
      .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
      .selectAll()
      .where("deployments.deploymentId", "=", deployment.deploymentId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "error", backupFile: null });
    expect(row.errorMessage).toMatch(/Interrupted/);
    expect(await listObjects(s3.storage, "interrupted/")).toEqual([]);
    const events = await original.ctx.db
      .selectFrom("events")
      .selectAll()
      .where("kind", "=", "platformBackup")
      .execute();
    expect(JSON.stringify(events)).toContain(deployment.deploymentId);
  }, 60_000);

  it("ends a run done when retention cannot delete an old file, with a warning naming it", async () => {
    const backup = await original.mutateOk(
      "backup.create",
      { ...webServerInput(destination.destinationId as string), prefix: "refused", keepLatestCount: 1 },
      as(owner),
    );
    const byId = { backupId: backup.backupId };
    const first = await original.mutateOk("backup.manualBackupWebServer", byId, as(owner));
    expect(first.status, first.errorMessage ?? "").toBe("done");
    s3.refuseDeletes("refused/");
    try {
      const second = await original.mutateOk("backup.manualBackupWebServer", byId, as(owner));
      expect(second, JSON.stringify(second)).toMatchObject({ success: true, status: "done" });
      const run = await original.waitForDeployment(second.deploymentId);
      expect(run.status).toBe("done");
      expect(run.logs).toContain(`Warning: retention could not delete ${first.backupFile}: AccessDenied`);
      const files = (await listObjects(s3.storage, "refused/")).map((object) => object.key).sort();
      expect(files).toEqual([first.backupFile, second.backupFile].sort());
      const one = (await original.query("backup.one", byId, as(owner))).body;
      expect(one.lastRun).toMatchObject({ deploymentId: second.deploymentId, status: "done" });
    } finally {
      s3.refuseDeletes(undefined);
    }
    // The next run deletes what the last could not.
    const third = await original.mutateOk("backup.manualBackupWebServer", byId, as(owner));
    expect(third.status, third.errorMessage ?? "").toBe("done");
    expect((await listObjects(s3.storage, "refused/")).map((object) => object.key)).toEqual([
      third.backupFile,
    ]);
  }, 60_000);

  it("refuses an object that is not a control plane backup", async () => {
    await uploadObject(s3.storage, "web-server/other.json.gz", Readable.from([Buffer.from("not gzip")]));
    const fresh = await createTestDatabase();
    drops.push(fresh.drop);
    const opened = await openDatabase(fresh.target);
    try {
      await migrateToLatest(opened.db);
      await expect(restoreWebServer(opened.db, s3.storage, "web-server/other.json.gz")).rejects.toThrow();
    } finally {
      await opened.close();
    }
  }, 60_000);
});
