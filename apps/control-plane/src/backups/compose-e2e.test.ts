/**
 * Backups of a database inside a compose stack (backup.manualBackupCompose) end to end on the
 * real Docker Engine (Swarm) with the in-process agent, the postgres test image and s3rver as the
 * S3 stand-in: a `stack` type stack whose service `db` runs postgres is backed up with
 * backupType compose; the run's object lands in the bucket and holds pg_dump's archive of the
 * rows written; the credentials are answered masked. Another organization's stack is a 404 and
 * a service not in the file a 400 naming serviceName.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { dockerCli, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { downloadObject } from "@platform/object-storage";
import { startTestS3, type TestS3 } from "@platform/object-storage/testing/s3.ts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const WAIT_MS = 240_000;
const POSTGRES = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";

let platform: TestPlatform;
let s3: TestS3;
let owner: Session;
let environmentId: string;
let destinationId: string;
const stacks: string[] = [];
const directories: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

/** Retries `attempt` until it resolves, failing with its last error after `timeoutMs`. */
const eventually = <T>(attempt: () => Promise<T>, timeoutMs = 120_000): Promise<T> =>
  vi.waitFor(attempt, { timeout: timeoutMs, interval: 1000 });

async function readAll(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", POSTGRES]);
  s3 = await startTestS3();
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "compose-backup-e2e-"));
  directories.push(mainDirectory);
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory } } },
  );
  owner = await platform.registerOwner();
  environmentId = (await ok("project.create", { name: "Stack backups" })).environment.environmentId;
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
}, 120_000);

afterAll(async () => {
  await platform?.close();
  for (const name of stacks) await dockerCli(["stack", "rm", name]).catch(() => {});
  await s3?.close();
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 120_000);

describe("backup of a database inside a stack", () => {
  it(
    "dumps the stack service's postgres into the bucket; refuses another organization's stack and an unknown service",
    async () => {
      const appName = uniqueName("cbk").replace(/_/g, "-");
      stacks.push(appName);
      const { composeId } = await ok("compose.create", {
        name: "shop",
        appName,
        environmentId,
        composeType: "stack",
        composeFile: `services:
  db:
    image: ${POSTGRES}
    environment:
      POSTGRES_USER: shop
      POSTGRES_PASSWORD: stack-secret
      POSTGRES_DB: shop
`,
      });
      const { deploymentId } = await ok("compose.deploy", { composeId });
      const deployed = await platform.waitForDeployment(deploymentId, WAIT_MS);
      expect(deployed.status, deployed.logs).toBe("done");
      // Rows written in the stack's own container, once postgres accepts connections.
      await eventually(async () => {
        const container = (
          await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${appName}_db`])
        ).trim();
        if (!container) throw new Error("no container yet");
        await dockerCli([
          "exec",
          container,
          "psql",
          "-U",
          "shop",
          "-d",
          "shop",
          "-v",
          "ON_ERROR_STOP=1",
          "-c",
          "create table stack_orders (id int); insert into stack_orders values (1), (2);",
        ]);
      });

      const base = {
        schedule: "0 3 * * *",
        prefix: "stack/db",
        destinationId,
        database: "shop",
        databaseType: "postgres",
        backupType: "compose",
        composeId,
        serviceName: "db",
        metadata: { postgres: { databaseUser: "shop" } },
      };
      // A service the stack's file does not have is a 400 naming serviceName.
      const unknownService = await platform.mutate("backup.create", { ...base, serviceName: "cache" }, as());
      expect(unknownService.status).toBe(400);
      expect(JSON.stringify(unknownService.body)).toContain("serviceName");
      // Another organization's stack is not found.
      const other = await createUserDirectly(platform, { email: "other@example.com" });
      const otherEnvironment = (
        await platform.mutateOk("project.create", { name: "Other" }, { token: other.token })
      ).environment.environmentId;
      const otherStack = await platform.mutateOk(
        "compose.create",
        {
          name: "theirs",
          appName: `${appName}-theirs`,
          environmentId: otherEnvironment,
          composeType: "stack",
          composeFile: "services:\n  db:\n    image: busybox\n",
        },
        { token: other.token },
      );
      const foreign = await platform.mutate(
        "backup.create",
        { ...base, composeId: otherStack.composeId },
        as(),
      );
      expect(foreign.status).toBe(404);
      expect(JSON.stringify(foreign.body)).toContain("composeId");

      const backup = await ok("backup.create", base);
      expect(backup).toMatchObject({ backupType: "compose", composeId, serviceName: "db", postgresId: null });
      expect(backup.metadata).toEqual({ postgres: { databaseUser: "shop" } });
      const run = await ok("backup.manualBackupCompose", { backupId: backup.backupId });
      expect(run.status, run.errorMessage).toBe("done");
      expect(run.backupFile).toMatch(/^stack\/db\/shop-.*\.dump\.gz$/);
      const { body } = await downloadObject(s3.storage, run.backupFile);
      const dump = gunzipSync(await readAll(body));
      expect(dump.subarray(0, 5).toString()).toBe("PGDMP");
      expect(dump.toString("latin1")).toContain("stack_orders");
      // Another organization's member cannot run it.
      const theirs = await platform.mutate(
        "backup.manualBackupCompose",
        { backupId: backup.backupId },
        { token: other.token },
      );
      expect(theirs.status).toBe(404);
    },
    WAIT_MS * 2,
  );
});
