/**
 * destination.* and backup.* on a real database with s3rver as the S3 stand-in: secrets are
 * sealed and never answered, endpoints go through the outbound guard, members read while
 * administrators write destinations, another organization's destination, backup or database
 * is a 404, and names that could reach a shell are refused. Runs on Docker are in
 * backups/e2e.test.ts.
 */
import { startTestS3, type TestS3 } from "@platform/object-storage/testing/s3.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertTestServer } from "../agents/testing/agents.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const SECRET = "s3cret-destination-key";

let platform: TestPlatform;
let s3: TestS3;
let owner: Session;
let member: Session;
let stranger: Session;
const as = (session: Session) => ({ token: session.token });

const destinationInput = () => ({
  name: "Bucket",
  provider: "Minio",
  accessKey: s3.storage.accessKey,
  secretAccessKey: SECRET,
  bucket: s3.storage.bucket,
  region: "us-east-1",
  endpoint: s3.endpoint,
});

beforeAll(async () => {
  s3 = await startTestS3();
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory: "/nonexistent" } } },
  );
  owner = await platform.registerOwner();
  member = await platform.addMember(owner, "member");
  stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
}, 120_000);

afterAll(async () => {
  await platform?.close();
  await s3?.close();
});

describe("destination", () => {
  it("never answers the secret, seals it, and keeps it on an update without one", async () => {
    const created = await platform.mutateOk("destination.create", destinationInput(), as(owner));
    expect(JSON.stringify(created)).not.toContain(SECRET);
    const row = await platform.ctx.db
      .selectFrom("destinations")
      .selectAll()
      .where("destinationId", "=", created.destinationId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(SECRET);
    for (const answer of [
      await platform.query("destination.one", { destinationId: created.destinationId }, as(member)),
      await platform.query("destination.all", {}, as(member)),
    ]) {
      expect(answer.status).toBe(200);
      expect(JSON.stringify(answer.body)).not.toContain(SECRET);
    }
    expect(
      (
        await platform.mutate(
          "destination.update",
          { destinationId: created.destinationId, name: "Renamed" },
          as(owner),
        )
      ).status,
    ).toBe(200);
    // The stored secret stands for a missing one: s3rver checks only the access key, so a wrong
    // access key proves the test reaches the bucket with what is stored.
    const { organizationId: _o, createdAt: _c, destinationId, ...fields } = created;
    const { secretAccessKey: _s, ...withoutSecret } = { ...fields, name: "Renamed", secretAccessKey: "" };
    expect(
      (await platform.mutate("destination.testConnection", { ...withoutSecret, destinationId }, as(owner)))
        .status,
    ).toBe(200);
    const refused = await platform.mutate(
      "destination.testConnection",
      { ...destinationInput(), accessKey: "NOT-A-KEY" },
      as(owner),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/InvalidAccessKeyId/);
    expect(platform.logLines.join("\n")).not.toContain(SECRET);
  });

  it("members read, administrators write; another organization's destination is a 404", async () => {
    expect((await platform.mutate("destination.create", destinationInput(), as(member))).status).toBe(403);
    const created = await platform.mutateOk("destination.create", destinationInput(), as(owner));
    for (const [name, input] of [
      ["destination.one", { destinationId: created.destinationId }],
      ["destination.remove", { destinationId: created.destinationId }],
    ] as const) {
      const answer =
        name === "destination.one"
          ? await platform.query(name, input, as(stranger))
          : await platform.mutate(name, input, as(stranger));
      expect(answer.status).toBe(404);
    }
  });

  it("destination endpoints go through the outbound guard", async () => {
    for (const endpoint of ["http://169.254.169.254", "http://[fe80::1]:9000"]) {
      const answer = await platform.mutate(
        "destination.testConnection",
        { ...destinationInput(), endpoint },
        as(owner),
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error.data.fields).toEqual(["endpoint"]);
    }
    for (const endpoint of [
      "ftp://s3.example.com",
      "http://user:pw@s3.example.com",
      "http://s3.example.com/path",
    ]) {
      const answer = await platform.mutate(
        "destination.create",
        { ...destinationInput(), endpoint },
        as(owner),
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error.data.fields).toContain("endpoint");
    }
  });
});

describe("backup", () => {
  it("refuses another organization's destination, database and stack, misplaced compose fields, and bad names; lists files", async () => {
    const destination = await platform.mutateOk("destination.create", destinationInput(), as(owner));
    const project = await platform.mutateOk("project.create", { name: "Shop" }, as(owner));
    const { postgresId } = await platform.mutateOk(
      "postgres.create",
      {
        name: "Orders",
        appName: "bk-unit-pg",
        environmentId: project.environment.environmentId,
        databaseName: "shop",
        databaseUser: "shop",
        databasePassword: "Pg#unit1",
      },
      as(owner),
    );
    const input = {
      schedule: "0 3 * * *",
      prefix: "daily",
      destinationId: destination.destinationId,
      database: "shop",
      databaseType: "postgres",
      postgresId,
    };
    const created = await platform.mutateOk("backup.create", input, as(owner));
    expect(created).toMatchObject({ postgresId, destination: { destinationId: destination.destinationId } });
    expect(platform.ctx.backups.nextRun(created.backupId)).toBeInstanceOf(Date);
    // The database's `one` carries its backups, as backup.one shows them (Dokploy's one does too).
    const database = (await platform.query("postgres.one", { postgresId }, as(owner))).body;
    expect(database.backups).toEqual([
      (await platform.query("backup.one", { backupId: created.backupId }, as(owner))).body,
    ]);
    expect(JSON.stringify(database.backups)).not.toContain("secretAccessKey");
    expect((await platform.query("backup.one", { backupId: created.backupId }, as(stranger))).status).toBe(
      404,
    );
    expect(
      (await platform.mutate("backup.manualBackupPostgres", { backupId: created.backupId }, as(stranger)))
        .status,
    ).toBe(404);
    expect(
      (await platform.mutate("backup.manualBackupMariadb", { backupId: created.backupId }, as(owner))).status,
    ).toBe(400);
    const strangerDestination = await platform.mutateOk(
      "destination.create",
      destinationInput(),
      as(stranger),
    );
    const stackOf = async (session: Session, label: string) => {
      const { environment } = await platform.mutateOk(
        "project.create",
        { name: `${label} stacks` },
        as(session),
      );
      return platform.mutateOk(
        "compose.create",
        {
          name: `${label} stack`,
          appName: `bk-${label}-stack`,
          environmentId: environment.environmentId,
          composeFile: "services:\n  web:\n    image: busybox\n",
        },
        as(session),
      );
    };
    const ownStack = await stackOf(owner, "own");
    const strangerStack = await stackOf(stranger, "stranger");
    const cases: [Record<string, unknown>, number, string][] = [
      [{ destinationId: strangerDestination.destinationId }, 404, "destinationId"],
      [{ postgresId: "nope" }, 404, "postgresId"],
      [{ mysqlId: "x" }, 404, "mysqlId"],
      // A backup of a stack's database names its stack, and a stack needs backupType compose;
      // another organization's stack is not found.
      [{ backupType: "compose" }, 400, "composeId"],
      [{ composeId: ownStack.composeId }, 400, "backupType"],
      [{ backupType: "compose", composeId: ownStack.composeId, serviceName: "web" }, 400, "postgresId"],
      [{ composeId: strangerStack.composeId }, 404, "composeId"],
      [{ composeId: "c1" }, 404, "composeId"],
      [{ schedule: "every day" }, 400, "schedule"],
      [{ prefix: "../up" }, 400, "prefix"],
      [{ database: "shop; drop" }, 400, "database"],
      [{ verifyTable: 'items"; drop' }, 400, "verifyTable"],
    ];
    for (const [change, status, field] of cases) {
      const answer = await platform.mutate("backup.create", { ...input, ...change }, as(owner));
      expect(answer.status, `${JSON.stringify(change)}: ${JSON.stringify(answer.body)}`).toBe(status);
      expect(JSON.stringify(answer.body.error)).toContain(field);
    }
    const restore = await platform.mutate(
      "backup.restoreBackupWithLogs",
      {
        databaseId: postgresId,
        databaseType: "postgres",
        databaseName: "shop",
        backupFile: "../etc/passwd",
        destinationId: destination.destinationId,
      },
      as(owner),
    );
    expect(restore.status).toBe(400);

    await platform.mutateOk("backup.update", { backupId: created.backupId, enabled: false }, as(owner));
    expect(platform.ctx.backups.nextRun(created.backupId)).toBeNull();
    const listed = await platform.query(
      "backup.listBackupFiles",
      { destinationId: destination.destinationId, search: "daily/" },
      as(owner),
    );
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([]);
    // serverId (Dokploy lists through that server's rclone) is checked, and the listing runs
    // from the control plane: the same files with the caller's server, a 404 with another's.
    const ownServer = await insertTestServer(platform, owner.user.organizationId, "backup-lister");
    const strangerServer = await insertTestServer(platform, stranger.user.organizationId, "not-yours");
    const viaServer = await platform.query(
      "backup.listBackupFiles",
      { destinationId: destination.destinationId, search: "daily/", serverId: ownServer },
      as(owner),
    );
    expect(viaServer.status, JSON.stringify(viaServer.body)).toBe(200);
    expect(viaServer.body).toEqual(listed.body);
    const notTheirs = await platform.query(
      "backup.listBackupFiles",
      { destinationId: destination.destinationId, search: "daily/", serverId: strangerServer },
      as(owner),
    );
    expect(notTheirs.status).toBe(404);
    expect(JSON.stringify(notTheirs.body)).toContain("Server");
    await platform.mutateOk("backup.remove", { backupId: created.backupId }, as(owner));
    expect((await platform.query("backup.one", { backupId: created.backupId }, as(owner))).status).toBe(404);
  });

  it("backs up the mongo that mongoId names; an unknown mongo is a 404 naming mongoId", async () => {
    const destination = await platform.mutateOk("destination.create", destinationInput(), as(owner));
    const project = await platform.mutateOk("project.create", { name: "Catalog" }, as(owner));
    const { mongoId } = await platform.mutateOk(
      "mongo.create",
      {
        name: "Catalog",
        appName: "bk-unit-mongo",
        environmentId: project.environment.environmentId,
        databaseUser: "root",
        databasePassword: "Mongo#unit1",
      },
      as(owner),
    );
    const input = {
      schedule: "0 3 * * *",
      prefix: "mongo",
      destinationId: destination.destinationId,
      database: "catalog",
      databaseType: "mongo",
      mongoId,
    };
    const created = await platform.mutateOk("backup.create", input, as(owner));
    expect(created).toMatchObject({ databaseType: "mongo", mongoId, postgresId: null });
    // The run's target is the mongo's service (its appName), which the agent dumps with mongodump.
    const target = await platform.ctx.db
      .selectFrom("backups")
      .innerJoin("databaseServices", "databaseServices.databaseId", "backups.databaseId")
      .select("databaseServices.appName")
      .where("backups.backupId", "=", created.backupId)
      .executeTakeFirstOrThrow();
    expect(target.appName).toBe("bk-unit-mongo");
    const unknown = await platform.mutate("backup.create", { ...input, mongoId: "nope" }, as(owner));
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(unknown.body.error)).toContain("mongoId");
    await platform.mutateOk("backup.remove", { backupId: created.backupId }, as(owner));
  });
});
