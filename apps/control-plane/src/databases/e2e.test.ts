/**
 * Database services end to end on the real Docker Engine (Swarm), with the control plane's
 * in-process agent and the local test images of scripts/build-database-images.sh (no registry
 * is reachable here; PLATFORM_DEFAULT_IMAGE_<KIND> points each kind at its image). A real client
 * of each database connects through the external port on 127.0.0.1 with the credentials `one`
 * answers: a row written survives a reload, a rebuild loses it, and a removal deletes the
 * service and its volume. Another organization's volume of the same name is never mounted or
 * deleted.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { ownershipLabels } from "@platform/agent-protocol";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const DEPLOY_WAIT_MS = 240_000;
const IMAGES = {
  postgres: process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15",
  mariadb: process.env.PLATFORM_TEST_MARIADB_IMAGE ?? "platform-test/db-mariadb:11",
  redis: process.env.PLATFORM_TEST_REDIS_IMAGE ?? "platform-test/db-redis:7",
};

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
const appNames: string[] = [];
const directories: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

/** Queues through `operation` and waits for the deployment's end; answers its row. */
async function settle(kind: string, operation: string, input: Record<string, unknown>) {
  const { deploymentId } = await ok(`${kind}.${operation}`, input);
  return platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
}

/** Tries `attempt` until it resolves (the database accepts connections) or `timeoutMs` passes. */
async function eventually<T>(attempt: () => Promise<T>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function exists(kind: "service" | "volume", name: string): Promise<boolean> {
  return dockerCli([kind, "inspect", name]).then(
    () => true,
    () => false,
  );
}

async function gone(kind: "service" | "volume", name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (await exists(kind, name)) {
    if (Date.now() > deadline) throw new Error(`${kind} ${name} is still there`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", IMAGES.postgres]);
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "db-e2e-"));
  directories.push(mainDirectory);
  platform = await startTestPlatform(
    {
      PLATFORM_DEFAULT_IMAGE_POSTGRES: IMAGES.postgres,
      PLATFORM_DEFAULT_IMAGE_MARIADB: IMAGES.mariadb,
      PLATFORM_DEFAULT_IMAGE_MYSQL: IMAGES.mariadb,
      PLATFORM_DEFAULT_IMAGE_REDIS: IMAGES.redis,
    },
    { agents: { localAgent: { mainDirectory } } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Databases" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  for (const name of appNames) await dockerCli(["service", "rm", name]).catch(() => {});
  for (const name of appNames) {
    await gone("service", name).catch(() => {});
    await eventually(() => dockerCli(["volume", "rm", "-f", `${name}-data`]), 30_000).catch(() => {});
  }
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 180_000);

describe("postgres", () => {
  it(
    "deploys, a pg client writes a row through the external port; reload keeps it, rebuild loses it, remove deletes service and volume",
    async () => {
      const appName = uniqueName("db-pg");
      appNames.push(appName);
      const created = await ok("postgres.create", {
        name: "Orders",
        appName,
        environmentId,
        databaseName: "orders",
        databaseUser: "shop",
        databasePassword: "S3cret@pass#1",
      });
      const postgresId = created.postgresId as string;
      expect(created.applicationStatus).toBe("idle");

      const externalPort = await freePort();
      const deployed = await settle("postgres", "saveExternalPort", { postgresId, externalPort });
      expect(deployed.status, deployed.logs).toBe("done");
      const one = (await platform.query("postgres.one", { postgresId }, as())).body;
      expect(one.applicationStatus).toBe("done");
      expect(one.externalPort).toBe(externalPort);
      expect(one.externalConnectionUrl).toMatch(new RegExp(`@[^/]+:${externalPort}/orders$`));
      // The password never reaches the deployment's log.
      expect(deployed.logs).not.toContain("S3cret@pass#1");

      const connect = async () => {
        const client = new pg.Client({
          host: "127.0.0.1",
          port: externalPort,
          user: one.databaseUser,
          password: one.databasePassword,
          database: one.databaseName,
          connectionTimeoutMillis: 3000,
        });
        await client.connect();
        return client;
      };
      const query = async (text: string) => {
        const client = await eventually(connect);
        try {
          return await client.query(text);
        } finally {
          await client.end();
        }
      };
      await query("create table orders (id int primary key, item text)");
      await query("insert into orders values (1, 'tea')");

      const reloaded = await settle("postgres", "reload", { postgresId, appName });
      expect(reloaded.status, reloaded.logs).toBe("done");
      expect((await query("select item from orders")).rows).toEqual([{ item: "tea" }]);

      const rebuilt = await settle("postgres", "rebuild", { postgresId });
      expect(rebuilt.status, rebuilt.logs).toBe("done");
      expect(rebuilt.logs).toContain(`Volume ${appName}-data deleted`);
      const tables = await query("select count(*)::int as n from pg_tables where tablename = 'orders'");
      expect(tables.rows).toEqual([{ n: 0 }]);

      // Every deployment is listed with its kind's id, newest first, with its log.
      const listed = await platform.query("deployment.allByType", { id: postgresId, type: "postgres" }, as());
      expect(listed.body.map((row: { status: string }) => row.status)).toEqual(["done", "done", "done"]);

      // Labels: the service, its containers and its volume name the owner.
      const labels = JSON.parse(
        await dockerCli(["volume", "inspect", "--format", "{{json .Labels}}", `${appName}-data`]),
      );
      expect(labels).toMatchObject({ "platform.resource": `database:${postgresId}` });

      await ok("postgres.remove", { postgresId });
      await gone("service", appName);
      await gone("volume", `${appName}-data`);
      expect((await platform.query("postgres.one", { postgresId }, as())).status).toBe(404);
    },
    DEPLOY_WAIT_MS * 4,
  );

  it(
    "never mounts or deletes another organization's volume of the same name",
    async () => {
      const appName = uniqueName("db-pgv");
      appNames.push(appName);
      const volume = `${appName}-data`;
      const foreign = ownershipLabels({
        organizationId: "another-organization",
        resource: "database:theirs",
      });
      await dockerCli([
        "volume",
        "create",
        ...Object.entries(foreign).flatMap(([key, value]) => ["--label", `${key}=${value}`]),
        volume,
      ]);
      const created = await ok("postgres.create", {
        name: "Clash",
        appName,
        environmentId,
        databaseName: "clash",
        databaseUser: "shop",
        databasePassword: "S3cret-pass",
      });
      const deployed = await settle("postgres", "deploy", { postgresId: created.postgresId });
      expect(deployed.status).toBe("error");
      expect(deployed.errorMessage).toMatch(/volume .* does not belong/);
      expect(await exists("service", appName)).toBe(false);

      const rebuilt = await settle("postgres", "rebuild", { postgresId: created.postgresId });
      expect(rebuilt.status).toBe("error");
      await ok("postgres.remove", { postgresId: created.postgresId });
      // Still there, with its labels.
      const labels = JSON.parse(
        await dockerCli(["volume", "inspect", "--format", "{{json .Labels}}", volume]),
      );
      expect(labels).toMatchObject(foreign);
    },
    DEPLOY_WAIT_MS * 3,
  );
});
