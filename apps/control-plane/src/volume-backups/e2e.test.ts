/**
 * Volume backups end to end on the real Docker Engine with the in-process agent and s3rver as
 * the S3 stand-in: an application's volume is backed up by hand with turnOff (the service is
 * scaled to 0 while the volume is read and runs again after), retention keeps the newest file,
 * the archive is restored into a fresh volume (created with the application's labels) whose
 * files are the original's, a file retention cannot delete (the bucket refuses it) is a warning
 * in a run that still ends done, each run is a deployment of the application with a volumeBackup
 * event; a volume that is not the service's is a 400, another organization's volume backup a
 * 404, and a volume on Docker whose labels name no owner is refused by the agent.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeDeployedApps,
  requireDocker,
  TEST_IMAGE,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { listObjects } from "@platform/object-storage";
import { startTestS3, type TestS3 } from "@platform/object-storage/testing/s3.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const appName = uniqueName("vb-web");
const volumeName = uniqueName("vb-data");
const restoredVolume = uniqueName("vb-restored");
const strayVolume = uniqueName("vb-stray");
const PREFIX = "volumes/web";

let platform: TestPlatform;
let s3: TestS3;
let owner: Session;
let mainDirectory: string;
let applicationId: string;
let destinationId: string;
const as = (session: Session) => ({ token: session.token });
const ok = (name: string, input: Record<string, unknown>, session = owner) =>
  platform.mutateOk(name, input, as(session));

/** The files of a volume as `path:content` lines, read by a throwaway container. */
async function volumeFiles(name: string): Promise<string> {
  return dockerCli([
    "run",
    "--rm",
    "-v",
    `${name}:/v:ro`,
    TEST_IMAGE,
    "sh",
    "-c",
    'cd /v && find . -type f | sort | while read f; do echo "$f:$(cat "$f")"; done',
  ]);
}

async function replicas(): Promise<{ replicas: number; labels: Record<string, string> }> {
  const spec = JSON.parse(await dockerCli(["service", "inspect", "--format", "{{json .Spec}}", appName]));
  return { replicas: spec.Mode.Replicated.Replicas, labels: spec.Labels ?? {} };
}

beforeAll(async () => {
  await requireDocker();
  s3 = await startTestS3();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "volume-backups-e2e-"));
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory } } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Volumes" });
  ({ applicationId } = await ok("application.create", {
    name: "web",
    appName,
    environmentId: project.environment.environmentId,
  }));
  await ok("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
  // The first task writes the files into the volume; later ones find them there.
  await ok("application.update", {
    applicationId,
    command:
      "sh -c 'test -f /data/stamp.txt || { head -c 12 /dev/urandom | od -An -tx1 | tr -d \" \\n\" > /data/stamp.txt; mkdir -p /data/nested; echo deep > /data/nested/file.txt; }; exec sleep 100000'",
  });
  await ok("mounts.create", {
    type: "volume",
    volumeName,
    mountPath: "/data",
    serviceType: "application",
    serviceId: applicationId,
  });
  const { deploymentId } = await ok("application.deploy", { applicationId });
  const deployed = await platform.waitForDeployment(deploymentId);
  expect(deployed.status, deployed.logs ?? "").toBe("done");
  destinationId = (
    await ok("destination.create", {
      name: "Local S3",
      provider: "Minio",
      accessKey: s3.storage.accessKey,
      secretAccessKey: s3.storage.secretAccessKey,
      bucket: s3.storage.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
    })
  ).destinationId;
}, 180_000);

afterAll(async () => {
  await removeDeployedApps([appName]);
  for (const name of [volumeName, restoredVolume, strayVolume]) {
    for (let attempt = 0; attempt < 30; attempt++) {
      if (
        await dockerCli(["volume", "rm", name]).then(
          () => true,
          (error) => /no such volume/i.test(String(error)),
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  await platform?.close();
  await s3?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 120_000);

describe("volume backups on real Docker", () => {
  let volumeBackupId: string;

  it("backs an application's volume up with the service stopped only for the archive, keeps the newest file, and restores it into a fresh volume", async () => {
    await expect.poll(() => volumeFiles(volumeName), { timeout: 30_000 }).toMatch(/stamp\.txt:[0-9a-f]{24}/);
    const original = await volumeFiles(volumeName);
    const created = await ok("volumeBackups.create", {
      name: "Data nightly",
      volumeName,
      prefix: PREFIX,
      cronExpression: "0 0 1 1 *",
      keepLatestCount: 1,
      turnOff: true,
      enabled: false,
      applicationId,
      destinationId,
    });
    volumeBackupId = created.volumeBackupId;
    expect(created).toMatchObject({
      serviceType: "application",
      applicationId,
      postgresId: null,
      turnOff: true,
    });

    const first = await ok("volumeBackups.runManually", { volumeBackupId });
    expect(first, JSON.stringify(first)).toMatchObject({ success: true, status: "done" });
    expect(first.backupFile).toMatch(new RegExp(`^${PREFIX}/${volumeName}-.*\\.tar\\.gz$`));
    const run = await platform.waitForDeployment(first.deploymentId);
    expect(run.logs).toContain(`Stopping ${appName}`);
    expect(run.logs).toContain(`Started ${appName} again`);
    // Running again, the replicas label gone.
    expect(await replicas()).toMatchObject({ replicas: 1 });
    expect((await replicas()).labels["platform.volume-backup.replicas"]).toBeUndefined();

    const second = await ok("volumeBackups.runManually", { volumeBackupId });
    expect(second.status, second.errorMessage ?? "").toBe("done");
    const keys = (await listObjects(s3.storage, `${PREFIX}/`)).map((object) => object.key);
    expect(keys).toEqual([second.backupFile]);
    const listed = await platform.query(
      "deployment.allByType",
      { id: volumeBackupId, type: "volumeBackup" },
      as(owner),
    );
    expect((listed.body as { deploymentId: string }[]).map((one) => one.deploymentId)).toEqual([
      second.deploymentId,
      first.deploymentId,
    ]);

    const { deploymentId } = await ok("volumeBackups.restoreVolumeBackupWithLogs", {
      backupFileName: second.backupFile,
      destinationId,
      volumeName: restoredVolume,
      id: applicationId,
      serviceType: "application",
    });
    const restored = await platform.waitForDeployment(deploymentId);
    expect(restored.status, restored.logs ?? "").toBe("done");
    expect(await volumeFiles(restoredVolume)).toBe(original);
    const labels = JSON.parse(
      await dockerCli(["volume", "inspect", "--format", "{{json .Labels}}", restoredVolume]),
    );
    expect(labels).toMatchObject({ "platform.resource": `application:${applicationId}` });

    // Runs are deployments of the application, with volumeBackup events.
    const rows = await platform.ctx.db
      .selectFrom("deployments")
      .select(["kind", "status", "applicationId"])
      .where("applicationId", "=", applicationId)
      .where("kind", "in", ["volumeBackup", "volumeRestore"])
      .execute();
    expect(rows.map((row) => `${row.kind}:${row.status}`).sort()).toEqual([
      "volumeBackup:done",
      "volumeBackup:done",
      "volumeRestore:done",
    ]);
    const events = await platform.ctx.db
      .selectFrom("events")
      .select(["kind", "payload"])
      .where("kind", "=", "volumeBackup")
      .execute();
    expect(events.map((event) => (event.payload as { status: string }).status)).toEqual([
      "success",
      "success",
      "success",
    ]);
    // On its schedule: every second once enabled, a run titled as scheduled; then disabled again.
    await ok("volumeBackups.update", { volumeBackupId, enabled: true, cronExpression: "* * * * * *" });
    await expect
      .poll(
        async () =>
          platform.ctx.db
            .selectFrom("deployments")
            .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
            .select(["deployments.deploymentId", "status", "title"])
            .where("backupRuns.volumeBackupId", "=", volumeBackupId)
            .where("title", "=", "Scheduled volume backup")
            .where("status", "in", ["done", "error"])
            .executeTakeFirst(),
        { timeout: 60_000, interval: 500 },
      )
      .toMatchObject({ status: "done" });
    await ok("volumeBackups.update", { volumeBackupId, enabled: false });
    // A scheduled run that started before the update ends on its own.
    await expect
      .poll(async () => (await platform.query("volumeBackups.one", { volumeBackupId }, as(owner))).body, {
        timeout: 60_000,
        interval: 500,
      })
      .toMatchObject({ enabled: false, lastRun: { kind: "volumeBackup", status: "done" } });
  }, 300_000);

  it("ends a backup done when retention cannot delete an old file, with a warning naming it in the run's log", async () => {
    const prefix = "volumes/refused";
    const { volumeBackupId: refusedId } = await ok("volumeBackups.create", {
      name: "Data, deletes refused",
      volumeName,
      prefix,
      cronExpression: "0 0 1 1 *",
      keepLatestCount: 1,
      enabled: false,
      applicationId,
      destinationId,
    });
    const first = await ok("volumeBackups.runManually", { volumeBackupId: refusedId });
    expect(first.status, first.errorMessage ?? "").toBe("done");
    s3.refuseDeletes(`${prefix}/`);
    try {
      const second = await ok("volumeBackups.runManually", { volumeBackupId: refusedId });
      expect(second, JSON.stringify(second)).toMatchObject({ success: true, status: "done" });
      const run = await platform.waitForDeployment(second.deploymentId);
      expect(run.status).toBe("done");
      expect(run.logs).toContain(`Volume backup stored: ${second.backupFile}`);
      expect(run.logs).toContain(`Warning: retention could not delete ${first.backupFile}: AccessDenied`);
      const keys = (await listObjects(s3.storage, `${prefix}/`)).map((object) => object.key).sort();
      expect(keys).toEqual([first.backupFile, second.backupFile].sort());
      const shown = (await platform.query("volumeBackups.one", { volumeBackupId: refusedId }, as(owner)))
        .body;
      expect(shown.lastRun).toMatchObject({
        deploymentId: second.deploymentId,
        status: "done",
        backupFile: second.backupFile,
      });
      const event = await platform.ctx.db
        .selectFrom("events")
        .select("payload")
        .where("kind", "=", "volumeBackup")
        .orderBy("createdAt", "desc")
        .executeTakeFirstOrThrow();
      expect(event.payload).toMatchObject({ status: "success" });
    } finally {
      s3.refuseDeletes(undefined);
    }
    // The next run deletes what the last one could not.
    const third = await ok("volumeBackups.runManually", { volumeBackupId: refusedId });
    expect(third.status, third.errorMessage ?? "").toBe("done");
    expect((await listObjects(s3.storage, `${prefix}/`)).map((object) => object.key)).toEqual([
      third.backupFile,
    ]);
  }, 120_000);

  it("refuses a volume that is not the service's (400), another organization's volume backup (404), and the agent refuses a volume with no owner labels", async () => {
    const notOwn = await platform.mutate(
      "volumeBackups.create",
      {
        name: "x",
        volumeName: "someone-elses",
        prefix: PREFIX,
        cronExpression: "0 3 * * *",
        applicationId,
        destinationId,
      },
      as(owner),
    );
    expect(notOwn.status).toBe(400);
    expect(notOwn.body.error.data.fields).toEqual(["volumeName"]);

    const badUpdate = await platform.mutate(
      "volumeBackups.update",
      { volumeBackupId, volumeName: "someone-elses" },
      as(owner),
    );
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.body.error.data.fields).toEqual(["volumeName"]);
    const otherServer = await platform.mutate(
      "volumeBackups.restoreVolumeBackupWithLogs",
      {
        backupFileName: `${PREFIX}/x.tar.gz`,
        destinationId,
        volumeName,
        id: applicationId,
        serviceType: "application",
        serverId: "not-the-services-server",
      },
      as(owner),
    );
    expect(otherServer.status).toBe(400);
    expect(otherServer.body.error.data.fields).toEqual(["serverId"]);

    const stranger = await createUserDirectly(platform, { email: "stranger-vb@example.com" });
    for (const [name, input] of [
      ["volumeBackups.one", { volumeBackupId }],
      ["volumeBackups.runManually", { volumeBackupId }],
      ["volumeBackups.delete", { volumeBackupId }],
      ["volumeBackups.list", { id: applicationId, volumeBackupType: "application" }],
      ["deployment.allByType", { id: volumeBackupId, type: "volumeBackup" }],
    ] as const) {
      const answer =
        name.endsWith("one") || name.endsWith("list") || name.endsWith("ByType")
          ? await platform.query(name, input, as(stranger))
          : await platform.mutate(name, input, as(stranger));
      expect(answer.status, name).toBe(404);
    }
    // The owner's volume is used by the owner's application: not the stranger's to restore into.
    const project = await platform.mutateOk("project.create", { name: "Theirs" }, as(stranger));
    const theirs = await platform.mutateOk(
      "application.create",
      { name: "theirs", appName: uniqueName("vb-theirs"), environmentId: project.environment.environmentId },
      as(stranger),
    );
    const restoreInput = {
      backupFileName: `${PREFIX}/x.tar.gz`,
      destinationId,
      volumeName,
      id: theirs.applicationId,
      serviceType: "application",
    };
    // The owner's destination is not the stranger's either.
    expect(
      (await platform.mutate("volumeBackups.restoreVolumeBackupWithLogs", restoreInput, as(stranger))).status,
    ).toBe(404);
    const own = await platform.mutateOk(
      "destination.create",
      {
        name: "Theirs",
        provider: "Minio",
        accessKey: s3.storage.accessKey,
        secretAccessKey: s3.storage.secretAccessKey,
        bucket: s3.storage.bucket,
        region: "us-east-1",
        endpoint: s3.endpoint,
      },
      as(stranger),
    );
    const intoForeign = await platform.mutate(
      "volumeBackups.restoreVolumeBackupWithLogs",
      { ...restoreInput, destinationId: own.destinationId },
      as(stranger),
    );
    expect(intoForeign.status).toBe(400);
    expect(intoForeign.body.error.data.fields).toEqual(["volumeName"]);

    // A volume on Docker that no row names but whose labels name nobody: the agent refuses it.
    await dockerCli(["volume", "create", strayVolume]);
    const file = (await listObjects(s3.storage, `${PREFIX}/`))[0]!.key;
    const { deploymentId } = await ok("volumeBackups.restoreVolumeBackupWithLogs", {
      backupFileName: file,
      destinationId,
      volumeName: strayVolume,
      id: applicationId,
      serviceType: "application",
    });
    const refused = await platform.waitForDeployment(deploymentId);
    expect(refused.status).toBe("error");
    expect(refused.errorMessage).toContain("does not belong to this service");
  }, 120_000);
});
