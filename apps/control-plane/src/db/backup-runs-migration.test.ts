/**
 * Migration 20261201-10-backup-runs on a database holding deployments of every kind: the run
 * columns move from deployments into backup_runs with every value, every deployment keeps its
 * other columns, the readers answer what the old columns answered, the foreign keys behave as
 * before, and down() puts every value back.
 */
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastRuns, toRunView } from "../backups/backups.ts";
import { waitForRun } from "../backups/wait.ts";
import type { ServiceContext } from "../context.ts";
import { listTargetDeployments, toDeploymentView } from "../deployments/repository.ts";
import { createTestDatabase } from "../testing/harness.ts";
import { lastVolumeRun } from "../volume-backups/volume-backups.ts";
import { type Db, migrateTo, type OpenDatabase, openDatabase } from "./database.ts";
import { migrations } from "./migrations/index.ts";

const MIGRATION = "20261201-10-backup-runs";
const names = Object.keys(migrations);
const BEFORE = names[names.indexOf(MIGRATION) - 1] as string;

const MOVED = [
  "backupId",
  "backupDestinationId",
  "backupFile",
  "backupDatabaseName",
  "backupSizeBytes",
  "backupCheck",
  "volumeBackupId",
  "backupVolumeName",
] as const;

type Row = Record<string, unknown>;
const without = (row: Row, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(row).filter(([key]) => !keys.includes(key)));

describe(`migration ${MIGRATION}`, () => {
  let opened: OpenDatabase;
  let db: Db;
  let raw: Kysely<any>;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const made = await createTestDatabase();
    drop = made.drop;
    opened = await openDatabase(made.target);
    db = opened.db;
    raw = db as unknown as Kysely<any>;
    await migrateTo(db, BEFORE);
  });

  afterAll(async () => {
    await opened?.close();
    await drop?.();
  });

  it("moves every run's values into backup_runs, keeps every deployment, and answers the same", async () => {
    const insert = (table: string, values: Row) => raw.insertInto(table).values(values).execute();
    await insert("users", { userId: "u1", email: "o@example.test", name: "Owner", passwordHash: "x" });
    await insert("organizations", { organizationId: "org1", name: "Shop", ownerId: "u1" });
    await insert("projects", { projectId: "p1", organizationId: "org1", name: "Shop" });
    await insert("environments", { environmentId: "e1", projectId: "p1", name: "production" });
    await insert("applications", {
      applicationId: "app1",
      name: "Web",
      appName: "web",
      environmentId: "e1",
      refreshToken: "t",
    });
    await insert("databaseServices", {
      databaseId: "db1",
      kind: "postgres",
      name: "Orders",
      appName: "orders",
      environmentId: "e1",
      databasePasswordSealed: "sealed",
    });
    for (const destinationId of ["dest1", "dest2"]) {
      await insert("destinations", {
        destinationId,
        organizationId: "org1",
        name: destinationId,
        provider: "s3",
        accessKey: "k",
        secretAccessKeySealed: "s",
        bucket: "b",
        region: "r",
        endpoint: "http://127.0.0.1:9",
      });
    }
    const backup = (backupId: string, databaseId: string | null, databaseType: string) =>
      insert("backups", {
        backupId,
        appName: backupId,
        schedule: "0 3 * * *",
        database: "orders",
        prefix: backupId,
        destinationId: "dest1",
        databaseType,
        databaseId,
      });
    await backup("bk1", "db1", "postgres");
    await backup("bkGone", "db1", "postgres");
    await backup("bkWeb", null, "web-server");
    await insert("volumeBackups", {
      volumeBackupId: "vb1",
      organizationId: "org1",
      name: "Uploads",
      volumeName: "uploads",
      prefix: "vol",
      appName: "vb",
      cronExpression: "0 4 * * *",
      serviceType: "application",
      destinationId: "dest2",
      applicationId: "app1",
    });
    await insert("rollbacks", {
      rollbackId: "rb1",
      specSealed: "sealed",
      applicationId: "app1",
      image: "web:1",
      imageId: "sha256:1",
    });
    await insert("schedules", {
      scheduleId: "sch1",
      name: "Nightly",
      cronExpression: "0 1 * * *",
      appName: "nightly",
      shellType: "sh",
      scheduleType: "application",
      command: "true",
      organizationId: "org1",
      applicationId: "app1",
    });

    const application = { targetKind: "application", targetId: "app1", applicationId: "app1" };
    const database = { targetKind: "database", targetId: "db1", databaseId: "db1" };
    const deployments: Row[] = [
      { kind: "deploy", ...application, rollbackId: "rb1", commitHash: "abc", imageName: "web:1" },
      { kind: "redeploy", ...application, archivePath: "/a.zip", archiveFormat: "zip" },
      { kind: "rebuild", ...database },
      {
        kind: "backup",
        ...database,
        backupId: "bk1",
        backupDestinationId: "dest1",
        backupFile: "bk1/orders-1.dump.gz",
        backupSizeBytes: 1234,
        backupCheck: "3 rows in orders",
      },
      {
        kind: "restore",
        ...database,
        backupDestinationId: "dest1",
        backupFile: "bk1/orders-1.dump.gz",
        backupDatabaseName: "orders",
        backupSizeBytes: 1234,
      },
      {
        kind: "verify",
        ...database,
        backupId: "bk1",
        backupDestinationId: "dest1",
        backupFile: "bk1/orders-1.dump.gz",
        backupCheck: "failed: no table",
        status: "error",
        errorMessage: "The restore verification failed",
      },
      // A run of a backup removed later (its backup_id set null, as the foreign key does).
      { kind: "backup", ...database, backupId: "bkGone", backupDestinationId: "dest1", backupFile: null },
      { kind: "rollback", ...application, restoresRollbackId: "rb1", rollbackId: "rb1" },
      { kind: "schedule", targetKind: "schedule", targetId: "sch1", scheduleId: "sch1" },
      {
        kind: "volumeBackup",
        ...application,
        volumeBackupId: "vb1",
        backupDestinationId: "dest2",
        backupFile: "vol/uploads-1.tar.gz",
        backupSizeBytes: 99,
        backupVolumeName: "uploads",
      },
      {
        kind: "volumeRestore",
        ...application,
        backupDestinationId: "dest2",
        backupFile: "vol/uploads-1.tar.gz",
        backupVolumeName: "uploads-restored",
        status: "running",
      },
      {
        kind: "backup",
        targetKind: "webServer",
        targetId: "bkWeb",
        webServerBackupId: "bkWeb",
        backupId: "bkWeb",
        backupDestinationId: "dest1",
        backupFile: "bkWeb/web-1.json.gz",
        backupSizeBytes: 5,
      },
    ];
    for (const [index, values] of deployments.entries()) {
      await insert("deployments", {
        deploymentId: `d${String(index).padStart(2, "0")}`,
        title: `Run ${index}`,
        description: `about ${index}`,
        status: "done",
        logs: `2026-11-29T00:00:0${index % 10}.000Z line ${index}\n`,
        createdAt: new Date(Date.UTC(2026, 10, 29, 0, 0, index)),
        completedAt: new Date(Date.UTC(2026, 10, 29, 0, 1, index)),
        serverId: null,
        ...values,
      });
    }
    await raw.deleteFrom("backups").where("backupId", "=", "bkGone").execute();

    const all = () =>
      raw.selectFrom("deployments").selectAll().orderBy("deploymentId").execute() as Promise<Row[]>;
    const before = await all();
    expect(before).toHaveLength(deployments.length);
    // What the readers answered from the deployments' own columns (the queries before this migration).
    const oldRuns = (column: string, id: string) =>
      raw
        .selectFrom("deployments")
        .selectAll()
        .where(column, "=", id)
        .orderBy("createdAt", "desc")
        .orderBy("deploymentId", "desc")
        .execute() as Promise<any[]>;
    const oldBackupRuns = await oldRuns("backupId", "bk1");
    const oldVolumeRuns = await oldRuns("volumeBackupId", "vb1");
    const oldWebRuns = await oldRuns("backupId", "bkWeb");

    await migrateTo(db, MIGRATION);

    // Every deployment, with its other columns unchanged.
    const after = await all();
    expect(after).toEqual(before.map((row) => without(row, MOVED)));
    // Every run's values in its backup_runs row; none for the deployments of services.
    const runs = await raw.selectFrom("backupRuns").selectAll().orderBy("deploymentId").execute();
    const runKinds = ["backup", "restore", "verify", "volumeBackup", "volumeRestore"];
    expect(runs).toEqual(
      before
        .filter((row) => runKinds.includes(row.kind as string))
        .map((row) => ({
          deploymentId: row.deploymentId,
          ...Object.fromEntries(MOVED.map((column) => [column, row[column]])),
        })),
    );
    expect(runs.map((row) => row.backupSizeBytes)).toEqual([1234, 1234, null, null, 99, null, 5]);

    // The readers answer what they answered from the old columns.
    expect(await lastRuns(db, "bk1")).toEqual({
      lastRun: toRunView(oldBackupRuns[0]),
      lastVerifiedRestore: toRunView(oldBackupRuns[0]),
    });
    expect(await lastRuns(db, "bkWeb")).toEqual({
      lastRun: toRunView(oldWebRuns[0]),
      lastVerifiedRestore: null,
    });
    expect(await lastVolumeRun(db, "vb1")).toEqual({
      deploymentId: oldVolumeRuns[0].deploymentId,
      kind: "volumeBackup",
      status: "done",
      backupFile: "vol/uploads-1.tar.gz",
      sizeBytes: 99,
      errorMessage: null,
      createdAt: oldVolumeRuns[0].createdAt,
      finishedAt: oldVolumeRuns[0].completedAt,
    });
    const byCreation = (rows: any[]) =>
      rows
        .sort(
          (a, b) => b.createdAt.localeCompare(a.createdAt) || a.deploymentId.localeCompare(b.deploymentId),
        )
        .map(toDeploymentView);
    expect((await listTargetDeployments(db, "bk1", "backupId")).map(toDeploymentView)).toEqual(
      byCreation(oldBackupRuns),
    );
    expect((await listTargetDeployments(db, "vb1", "volumeBackupId")).map(toDeploymentView)).toEqual(
      byCreation(oldVolumeRuns),
    );
    expect((await listTargetDeployments(db, "app1")).map((row) => row.deploymentId)).toEqual(
      before
        .filter((row) => row.targetId === "app1")
        .map((row) => row.deploymentId)
        .reverse(),
    );
    const ctx = { db } as ServiceContext;
    const verify = before.find((row) => row.kind === "verify") as Row;
    expect(await waitForRun(ctx, verify.deploymentId as string)).toEqual({
      success: false,
      deploymentId: verify.deploymentId,
      status: "error",
      backupFile: verify.backupFile,
      sizeBytes: null,
      verification: verify.backupCheck,
      errorMessage: verify.errorMessage,
    });
    const rebuild = before.find((row) => row.kind === "rebuild") as Row;
    expect(await waitForRun(ctx, rebuild.deploymentId as string)).toMatchObject({
      backupFile: null,
      sizeBytes: null,
      verification: null,
    });

    // The foreign keys as before: a removed volume backup or destination leaves its runs naming
    // none; a removed deployment takes its run's row.
    await raw.deleteFrom("volumeBackups").where("volumeBackupId", "=", "vb1").execute();
    const volumeRun = before.find((row) => row.kind === "volumeBackup") as Row;
    expect(
      await raw
        .selectFrom("backupRuns")
        .select(["volumeBackupId", "backupFile"])
        .where("deploymentId", "=", volumeRun.deploymentId)
        .executeTakeFirst(),
    ).toEqual({ volumeBackupId: null, backupFile: "vol/uploads-1.tar.gz" });
    await raw.deleteFrom("deployments").where("deploymentId", "=", volumeRun.deploymentId).execute();
    expect(
      await raw
        .selectFrom("backupRuns")
        .selectAll()
        .where("deploymentId", "=", volumeRun.deploymentId)
        .execute(),
    ).toEqual([]);

    // down() puts the values back into deployments.
    await migrateTo(db, BEFORE);
    expect(await all()).toEqual(
      before
        .filter((row) => row.deploymentId !== volumeRun.deploymentId)
        .map((row) => ({ ...row, ...(row.volumeBackupId ? { volumeBackupId: null } : {}) })),
    );
    expect(
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from pg_tables where tablename = 'backup_runs'`.execute(db)
      ).rows[0]?.n,
    ).toBe(0);
  });
});
