/**
 * The control plane's own backup (issue 32 item 2): an installation with an owner, a project
 * and a destination (its secret sealed) is dumped to s3rver as gzipped JSON lines, a control
 * plane is rebuilt on an empty database from that object (the same PLATFORM_SECRET_KEY), and
 * the owner signs in there and finds the project and the destination, whose sealed secret
 * still opens; a database that is not empty, or an object of another format, is refused.
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { uploadObject } from "@platform/agent";
import { startTestS3, type TestS3 } from "@platform/agent/testing/s3.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase } from "../db/database.ts";
import { createTestDatabase, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { backupWebServer, restoreWebServer } from "./web-server.ts";

const env = {
  PLATFORM_SECRET_KEY: randomBytes(32).toString("base64"),
  PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
};
let s3: TestS3;
let original: TestPlatform;
let rebuilt: TestPlatform | undefined;
const drops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  s3 = await startTestS3();
  original = await startTestPlatform(env, { agents: { localAgent: { mainDirectory: "/nonexistent" } } });
}, 60_000);

afterAll(async () => {
  await rebuilt?.close();
  await original?.close();
  for (const drop of drops) await drop();
  await s3?.close();
});

describe("the control plane's own backup", () => {
  it("rebuilds a control plane on an empty database from its backup", async () => {
    const owner = await original.registerOwner("owner@example.com", "correct-horse-battery");
    const as = { token: owner.token };
    await original.mutateOk("project.create", { name: "Rebuilt shop" }, as);
    const destination = await original.mutateOk(
      "destination.create",
      {
        name: "Kept bucket",
        provider: "Minio",
        accessKey: s3.storage.accessKey,
        secretAccessKey: s3.storage.secretAccessKey,
        bucket: s3.storage.bucket,
        region: "us-east-1",
        endpoint: s3.endpoint,
      },
      as,
    );
    const key = "web-server/platform-1.json.gz";
    const dumped = await backupWebServer(original.services.db, s3.storage, key);
    expect(dumped.rows).toBeGreaterThan(3);
    expect(dumped.sizeBytes).toBeGreaterThan(0);

    // A fresh installation's database, migrated, then restored before the control plane starts.
    const fresh = await createTestDatabase();
    drops.push(fresh.drop);
    const opened = await openDatabase(fresh.target);
    try {
      await migrateToLatest(opened.db);
      const restored = await restoreWebServer(opened.db, s3.storage, key);
      expect(restored.rows).toBe(dumped.rows);
      // Once restored it is no longer empty: a second restore is refused.
      await expect(restoreWebServer(opened.db, s3.storage, key)).rejects.toThrow(/not empty/);
    } finally {
      await opened.close();
    }
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
  }, 120_000);

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
