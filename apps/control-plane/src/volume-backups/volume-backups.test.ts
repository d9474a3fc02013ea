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

  it("takes the data volume of the mysql, mariadb, mongo or redis its id field names; update keeps the service", async () => {
    const credentials = { databaseName: "shop", databaseUser: "shop", databasePassword: "Db-volumes-1" };
    const { mysqlId } = await platform.mutateOk(
      "mysql.create",
      {
        name: "my",
        appName: "vbt-my",
        environmentId,
        ...credentials,
        databaseRootPassword: "Root-volumes-1",
      },
      as(),
    );
    const { mariadbId } = await platform.mutateOk(
      "mariadb.create",
      {
        name: "maria",
        appName: "vbt-maria",
        environmentId,
        ...credentials,
        databaseRootPassword: "Root-volumes-1",
      },
      as(),
    );
    const { mongoId } = await platform.mutateOk(
      "mongo.create",
      {
        name: "mongo",
        appName: "vbt-mongo",
        environmentId,
        databaseUser: "root",
        databasePassword: "Db-volumes-1",
      },
      as(),
    );
    const { redisId } = await platform.mutateOk(
      "redis.create",
      { name: "redis", appName: "vbt-redis", environmentId, databasePassword: "Db-volumes-1" },
      as(),
    );
    const services = [
      ["vbt-my-data", { mysqlId }, "mysql"],
      ["vbt-maria-data", { mariadbId }, "mariadb"],
      ["vbt-mongo-data", { mongoId }, "mongo"],
      ["vbt-redis-data", { redisId }, "redis"],
    ] as const;
    const created: string[] = [];
    for (const [volumeName, ids, serviceType] of services) {
      const backup = await platform.mutateOk(
        "volumeBackups.create",
        { ...base, volumeName, ...ids, destinationId },
        as(),
      );
      expect(backup, serviceType).toMatchObject({ serviceType, volumeName, ...ids });
      created.push(backup.volumeBackupId);
      // Another service's data volume is not this one's.
      const foreign = await platform.mutate(
        "volumeBackups.create",
        { ...base, volumeName: "vbt-db-data", ...ids, destinationId },
        as(),
      );
      expect(foreign.status, serviceType).toBe(400);
      expect(foreign.body.error.data.fields).toEqual(["volumeName"]);
    }
    // update: the same id is taken, another service's is a 400 naming the field.
    for (const [index, [, ids]] of services.entries()) {
      const volumeBackupId = created[index];
      expect((await platform.mutate("volumeBackups.update", { volumeBackupId, ...ids }, as())).status).toBe(
        200,
      );
      const [, otherIds] = services[(index + 1) % services.length]!;
      const moved = await platform.mutate("volumeBackups.update", { volumeBackupId, ...otherIds }, as());
      expect(moved.status, JSON.stringify(moved.body)).toBe(400);
      expect(moved.body.error.data.fields).toEqual(Object.keys(otherIds));
      // serviceType (Dokploy's CLI sends it) must be the service's kind.
      const [, , serviceType] = services[index]!;
      const [, , otherType] = services[(index + 1) % services.length]!;
      expect(
        (await platform.mutate("volumeBackups.update", { volumeBackupId, serviceType }, as())).status,
      ).toBe(200);
      const retyped = await platform.mutate(
        "volumeBackups.update",
        { volumeBackupId, serviceType: otherType },
        as(),
      );
      expect(retyped.status).toBe(400);
      expect(retyped.body.error.data.fields).toEqual(["serviceType"]);
    }
    const mistyped = await platform.mutate(
      "volumeBackups.create",
      { ...base, volumeName: "vbt-my-data", ...services[0][1], serviceType: "redis", destinationId },
      as(),
    );
    expect(mistyped.status).toBe(400);
    expect(mistyped.body.error.data.fields).toEqual(["serviceType"]);
    const stack = await platform.mutateOk(
      "compose.create",
      {
        name: "stack",
        appName: "vbt-stack-two",
        environmentId,
        composeFile: "services:\n  web:\n    image: busybox\n",
      },
      as(),
    );
    const stackBackup = await platform.mutateOk(
      "volumeBackups.create",
      { ...base, volumeName: "vbt-stack-two_data", composeId: stack.composeId, destinationId },
      as(),
    );
    const same = await platform.mutate(
      "volumeBackups.update",
      {
        volumeBackupId: stackBackup.volumeBackupId,
        composeId: stack.composeId,
        volumeName: "vbt-stack-two_cache",
      },
      as(),
    );
    expect(same.status).toBe(200);
    const movedStack = await platform.mutate(
      "volumeBackups.update",
      { volumeBackupId: stackBackup.volumeBackupId, redisId },
      as(),
    );
    expect(movedStack.status).toBe(400);
    expect(movedStack.body.error.data.fields).toEqual(["redisId"]);
  });
});
