/**
 * Which volumes a volume backup may name, without Docker: a database service's data volume
 * (`<appName>-data`), a compose stack's `<appName>_<name>` volumes, never another service's
 * volume; list answers a service's volume backups; delete removes one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
let destinationId: string;
const as = () => ({ token: owner.token });

beforeAll(async () => {
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory: "/nonexistent" } } },
  );
  owner = await platform.registerOwner();
  environmentId = (await platform.mutateOk("project.create", { name: "Volumes" }, as())).environment
    .environmentId;
  destinationId = (
    await platform.mutateOk(
      "destination.create",
      {
        name: "Bucket",
        provider: "AWS",
        accessKey: "AK",
        secretAccessKey: "SK",
        bucket: "volumes",
        region: "us-east-1",
        endpoint: "",
      },
      as(),
    )
  ).destinationId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

const base = { name: "nightly", prefix: "v", cronExpression: "0 3 * * *", enabled: false };

describe("volume backups' volumes", () => {
  it("takes a database's data volume and a compose stack's own volumes, refuses others", async () => {
    const postgres = await platform.mutateOk(
      "postgres.create",
      {
        name: "db",
        appName: "vbt-db",
        environmentId,
        databaseName: "shop",
        databaseUser: "shop",
        databasePassword: "Pg-volumes-1",
      },
      as(),
    );
    const created = await platform.mutateOk(
      "volumeBackups.create",
      { ...base, volumeName: "vbt-db-data", postgresId: postgres.postgresId, destinationId },
      as(),
    );
    expect(created).toMatchObject({
      serviceType: "postgres",
      postgresId: postgres.postgresId,
      applicationId: null,
    });
    const compose = await platform.mutateOk(
      "compose.create",
      {
        name: "stack",
        appName: "vbt-stack",
        environmentId,
        composeFile: "services:\n  web:\n    image: busybox\n",
      },
      as(),
    );
    const stack = await platform.mutateOk(
      "volumeBackups.create",
      { ...base, volumeName: "vbt-stack_uploads", composeId: compose.composeId, destinationId },
      as(),
    );
    expect(stack).toMatchObject({ serviceType: "compose", composeId: compose.composeId });
    for (const [volumeName, ids] of [
      ["vbt-stack_uploads", { postgresId: postgres.postgresId }],
      ["vbt-db-data", { composeId: compose.composeId }],
      ["other-stack_uploads", { composeId: compose.composeId }],
    ] as const) {
      const refused = await platform.mutate(
        "volumeBackups.create",
        { ...base, volumeName, ...ids, destinationId },
        as(),
      );
      expect(refused.status, volumeName).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["volumeName"]);
    }
    const two = await platform.mutate(
      "volumeBackups.create",
      {
        ...base,
        volumeName: "vbt-db-data",
        postgresId: postgres.postgresId,
        composeId: compose.composeId,
        destinationId,
      },
      as(),
    );
    expect(two.status).toBe(400);
    const listed = await platform.query(
      "volumeBackups.list",
      { id: postgres.postgresId, volumeBackupType: "postgres" },
      as(),
    );
    expect(listed.body.map((row: { volumeBackupId: string }) => row.volumeBackupId)).toEqual([
      created.volumeBackupId,
    ]);
    await platform.mutateOk("volumeBackups.delete", { volumeBackupId: created.volumeBackupId }, as());
    const gone = await platform.query("volumeBackups.one", { volumeBackupId: created.volumeBackupId }, as());
    expect(gone.status).toBe(404);
  });
});
