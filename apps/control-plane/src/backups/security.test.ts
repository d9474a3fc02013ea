/**
 * Backups against a real destination (s3rver), attacked (security issue 37, finding 12):
 * - path tricks in a prefix or an object key ('..', '.', absolute, backslashes, control
 *   characters) are a 400 naming the field, and nothing is stored or queued: the S3 client
 *   resolves '..' in its request path, so `a/../../other-bucket/key` would leave the bucket
 *   (agent/src/backup/s3.test.ts shows it, and that '%2e%2e' stays a literal key);
 * - another organization's destination lists nothing (404), no restore reads from it or writes
 *   into another organization's database (404, no run queued), and no volume backup names
 *   another service's volume (400; the agent's own label check: agent/src/backup/volume.test.ts);
 * - a destination's access key id and secret reach no API error, run log or console line when
 *   the bucket refuses them.
 * No Docker: every refusal comes before an agent job, and the failed run fails in the control
 * plane (it lists the destination for the newest file before any job).
 */
import { Readable } from "node:stream";
import { uploadObject } from "@platform/object-storage";
import { startTestS3, type TestS3 } from "@platform/object-storage/testing/s3.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createOtherOrganization } from "../users/test-support.ts";

let platform: TestPlatform;
let s3: TestS3;

interface Tenant {
  session: Session;
  postgresId: string;
  destinationId: string;
  backupId: string;
  prefix: string;
}
let ours: Tenant;
let theirs: Tenant;

const as = (tenant: Tenant) => ({ token: tenant.session.token });

async function setUpTenant(session: Session, prefix: string): Promise<Tenant> {
  const auth = { token: session.token };
  const environmentId = (await platform.mutateOk("project.create", { name: `Shop ${prefix}` }, auth))
    .environment.environmentId;
  const { postgresId } = await platform.mutateOk(
    "postgres.create",
    {
      name: "orders",
      appName: `sec-backup-${prefix}`,
      environmentId,
      databaseName: "shop",
      databaseUser: "shop",
      databasePassword: "Pg-security-1",
    },
    auth,
  );
  const { destinationId } = await platform.mutateOk(
    "destination.create",
    {
      name: `bucket ${prefix}`,
      provider: "Minio",
      accessKey: s3.storage.accessKey,
      secretAccessKey: s3.storage.secretAccessKey,
      bucket: s3.storage.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
    },
    auth,
  );
  const { backupId } = await platform.mutateOk(
    "backup.create",
    {
      schedule: "0 0 1 1 *",
      enabled: false,
      prefix,
      destinationId,
      database: "shop",
      databaseType: "postgres",
      postgresId,
    },
    auth,
  );
  await uploadObject(
    s3.storage,
    `${prefix}/shop-2026-01-01T00-00-00.000Z.dump.gz`,
    Readable.from([Buffer.from("dump")]),
  );
  return { session, postgresId, destinationId, backupId, prefix };
}

const countRows = async () => ({
  deployments: Number(
    (
      await platform.ctx.db
        .selectFrom("deployments")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  ),
  backups: Number(
    (
      await platform.ctx.db
        .selectFrom("backups")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  ),
  volumeBackups: Number(
    (
      await platform.ctx.db
        .selectFrom("volumeBackups")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  ),
});

beforeAll(async () => {
  s3 = await startTestS3();
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory: "/nonexistent" } } },
  );
  ours = await setUpTenant(await platform.registerOwner(), "ours");
  theirs = await setUpTenant(await createOtherOrganization(platform), "theirs");
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await s3?.close();
});

/** Prefixes that are not plain path segments. */
const BAD_PREFIXES = [
  "../ours",
  "ours/../../theirs",
  "..",
  "/ours",
  "%2e%2e/ours",
  "ours\\..\\theirs",
  "ours\u0000x",
  "ours\r\nx",
  "ours//x",
];
/** Object keys that leave the prefix through the S3 client's path, or carry what a key must not. */
const badKeys = (prefix: string) => [
  `${prefix}/../../other-bucket/secret.dump.gz`,
  `${prefix}/../theirs/shop.dump.gz`,
  "../other-bucket/secret.dump.gz",
  `/${prefix}/shop.dump.gz`,
  `${prefix}/./shop.dump.gz`,
  `${prefix}\\..\\..\\other-bucket\\secret.dump.gz`,
  `${prefix}/shop\u0007.dump.gz`,
  `${prefix}/shop\r\nError: forged line.dump.gz`,
];

describe("path tricks in a backup's prefix or object key", () => {
  it("refuses each with a 400 naming the field, and stores or queues nothing", async () => {
    const before = await countRows();
    const refusedWith = async (name: string, input: Record<string, unknown>, field: string) => {
      const answer = await platform.mutate(name, input, as(ours));
      expect(answer.status, `${name} ${JSON.stringify(input)}`).toBe(400);
      expect(answer.body.error.data.fields, `${name} ${JSON.stringify(input)}`).toEqual([field]);
    };
    for (const prefix of BAD_PREFIXES) {
      await refusedWith(
        "backup.create",
        {
          schedule: "0 0 1 1 *",
          prefix,
          destinationId: ours.destinationId,
          database: "shop",
          databaseType: "postgres",
          postgresId: ours.postgresId,
        },
        "prefix",
      );
      await refusedWith("backup.update", { backupId: ours.backupId, prefix }, "prefix");
      await refusedWith(
        "volumeBackups.create",
        {
          name: "nightly",
          volumeName: "sec-backup-ours-data",
          prefix,
          cronExpression: "0 3 * * *",
          postgresId: ours.postgresId,
          destinationId: ours.destinationId,
        },
        "prefix",
      );
    }
    for (const key of badKeys(ours.prefix)) {
      await refusedWith(
        "backup.restoreBackupWithLogs",
        {
          databaseId: ours.postgresId,
          databaseType: "postgres",
          databaseName: "shop",
          backupFile: key,
          destinationId: ours.destinationId,
        },
        "backupFile",
      );
      await refusedWith("backup.verifyRestore", { backupId: ours.backupId, backupFile: key }, "backupFile");
      await refusedWith(
        "volumeBackups.restoreVolumeBackupWithLogs",
        {
          backupFileName: key,
          destinationId: ours.destinationId,
          volumeName: "sec-backup-ours-data",
          id: ours.postgresId,
          serviceType: "postgres",
        },
        "backupFileName",
      );
    }
    // A key outside the backup's prefix is refused by a verification of that backup.
    await refusedWith(
      "backup.verifyRestore",
      { backupId: ours.backupId, backupFile: "theirs/shop-2026-01-01T00-00-00.000Z.dump.gz" },
      "backupFile",
    );
    expect(await countRows()).toEqual(before);
    const stored = await platform.query("backup.one", { backupId: ours.backupId }, as(ours));
    expect(stored.body.prefix).toBe("ours");
  });
});

describe("another organization's destination and database", () => {
  it("lists nothing of their destination and restores nothing from it or into their database (404)", async () => {
    const before = await countRows();
    const listed = await platform.query(
      "backup.listBackupFiles",
      { destinationId: theirs.destinationId, search: "" },
      as(ours),
    );
    expect(listed.status).toBe(404);
    expect(listed.body.error.data.fields).toEqual(["destinationId"]);
    expect(JSON.stringify(listed.body)).not.toContain("theirs/");
    // The same listing by its owner does list the file: the 404 is not an empty bucket.
    const own = await platform.query(
      "backup.listBackupFiles",
      { destinationId: theirs.destinationId, search: "theirs/" },
      as(theirs),
    );
    expect(own.body.map((file: { key: string }) => file.key)).toEqual([
      "theirs/shop-2026-01-01T00-00-00.000Z.dump.gz",
    ]);

    const restore = (fields: Record<string, unknown>) =>
      platform.mutate(
        "backup.restoreBackupWithLogs",
        {
          databaseType: "postgres",
          databaseName: "shop",
          backupFile: "theirs/shop-2026-01-01T00-00-00.000Z.dump.gz",
          ...fields,
        },
        as(ours),
      );
    // Into their database, from our destination.
    const intoTheirs = await restore({ databaseId: theirs.postgresId, destinationId: ours.destinationId });
    expect(intoTheirs.status).toBe(404);
    expect(intoTheirs.body.error.data.fields).toEqual(["databaseId"]);
    // From their destination, into our database.
    const fromTheirs = await restore({ databaseId: ours.postgresId, destinationId: theirs.destinationId });
    expect(fromTheirs.status).toBe(404);
    expect(fromTheirs.body.error.data.fields).toEqual(["destinationId"]);
    // Their backup verified, their database's volume restored from our destination.
    expect(
      (await platform.mutate("backup.verifyRestore", { backupId: theirs.backupId }, as(ours))).status,
    ).toBe(404);
    const volume = await platform.mutate(
      "volumeBackups.restoreVolumeBackupWithLogs",
      {
        backupFileName: "ours/volume.tar.gz",
        destinationId: ours.destinationId,
        volumeName: "sec-backup-theirs-data",
        id: theirs.postgresId,
        serviceType: "postgres",
      },
      as(ours),
    );
    expect(volume.status).toBe(404);
    // A volume backup of our database naming their database's volume, the platform's or any other.
    for (const volumeName of ["sec-backup-theirs-data", "platform-postgres-data", "unlabelled-volume"]) {
      const named = await platform.mutate(
        "volumeBackups.create",
        {
          name: "nightly",
          volumeName,
          prefix: "ours",
          cronExpression: "0 3 * * *",
          postgresId: ours.postgresId,
          destinationId: ours.destinationId,
        },
        as(ours),
      );
      expect(named.status, volumeName).toBe(400);
      expect(named.body.error.data.fields, volumeName).toEqual(["volumeName"]);
    }
    expect(await countRows()).toEqual(before);
  });
});

describe("a destination's credentials", () => {
  it("reach no API error, run log or console line when the bucket refuses them", async () => {
    const accessKey = "AKIALEAKPROBE0000001";
    const secretAccessKey = "leak-probe-secret-0000001";
    const fields = {
      name: "refusing bucket",
      provider: "Minio",
      accessKey,
      secretAccessKey,
      bucket: s3.storage.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
    };
    const leaked = (text: string) => text.includes(accessKey) || text.includes(secretAccessKey);

    const tested = await platform.mutate("destination.testConnection", fields, as(ours));
    expect(tested.status).toBe(400);
    expect(leaked(JSON.stringify(tested.body)), JSON.stringify(tested.body)).toBe(false);

    const { destinationId } = await platform.mutateOk("destination.create", fields, as(ours));
    const listed = await platform.query("backup.listBackupFiles", { destinationId, search: "" }, as(ours));
    expect(listed.status).toBe(400);
    expect(leaked(JSON.stringify(listed.body)), JSON.stringify(listed.body)).toBe(false);

    // A verification lists the bucket for the newest file first: the run fails there.
    await platform.mutateOk("backup.update", { backupId: ours.backupId, destinationId }, as(ours));
    const run = await platform.mutateOk("backup.verifyRestore", { backupId: ours.backupId }, as(ours));
    await platform.mutateOk(
      "backup.update",
      { backupId: ours.backupId, destinationId: ours.destinationId },
      as(ours),
    );
    expect(run.status).toBe("error");
    expect(run.errorMessage).toContain("InvalidAccessKeyId");
    const row = await platform.waitForDeployment(run.deploymentId);
    expect(row.logs).toContain("InvalidAccessKeyId");
    expect(leaked(`${row.logs}\n${row.errorMessage}`), `${row.logs}\n${row.errorMessage}`).toBe(false);
    const shown = await platform.query(
      "deployment.allByType",
      { id: ours.backupId, type: "backup" },
      as(ours),
    );
    expect(leaked(JSON.stringify(shown.body))).toBe(false);

    const console = platform.logLines.join("\n");
    expect(console).toContain("listing a destination failed");
    expect(leaked(console), console.split("\n").filter(leaked).join("\n")).toBe(false);
  });
});
