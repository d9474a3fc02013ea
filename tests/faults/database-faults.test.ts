/**
 * Database deployments under faults, with the real processes of deploy-harness.ts (a control
 * plane, an enrolled agent, a private NATS with JetStream): a kill -9 of the agent in the
 * middle of a postgres deploy, and of the control plane in the middle of a rebuild. Each ends
 * settled (no deployment idle or running) and true: done, the database accepts connections with
 * its stored credentials, and after the rebuild the data written before is gone.
 */
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { DeployFaultRig } from "./deploy-harness.ts";

const IMAGE = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";
const rig = new DeployFaultRig();
let postgresId: string;
let appName: string;
let port: number;
const credentials = { user: "shop", password: "Fault-pass1", database: "orders" };

async function deploymentsOf(): Promise<
  Array<{ deploymentId: string; status: string; errorMessage: string | null }>
> {
  return rig.api.queryOk("deployment.allByType", { id: postgresId, type: "postgres" });
}

async function settledAndDone(deploymentId: string): Promise<void> {
  await rig.until(
    "every deployment of the database final",
    async () => (await deploymentsOf()).every((row) => row.status !== "idle" && row.status !== "running"),
    180_000,
  );
  const deployment = (await deploymentsOf()).find((row) => row.deploymentId === deploymentId);
  expect(deployment, `deployment ${deploymentId} lost`).toBeDefined();
  expect(deployment!.status, `${deploymentId}: ${deployment!.errorMessage}`).toBe("done");
  const one = await rig.api.queryOk("postgres.one", { postgresId });
  expect(one.applicationStatus).toBe("done");
}

async function query(text: string) {
  let last: unknown;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const client = new pg.Client({ host: "127.0.0.1", port, ...credentials, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      return await client.query(text);
    } catch (error) {
      last = error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await client.end().catch(() => {});
    }
  }
  throw last;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", IMAGE]);
  await rig.start({ PLATFORM_DEFAULT_IMAGE_POSTGRES: IMAGE });
  appName = uniqueName("faults-pg");
  port = await freePort();
  const created = await rig.api.mutateOk("postgres.create", {
    name: appName,
    appName,
    environmentId: rig.environmentId,
    serverId: rig.serverId,
    databaseName: credentials.database,
    databaseUser: credentials.user,
    databasePassword: credentials.password,
  });
  postgresId = created.postgresId;
}, 120_000);

afterAll(async () => {
  await rig.close();
  await dockerCli(["service", "rm", appName]).catch(() => {});
  for (let attempt = 0; attempt < 60; attempt++) {
    const removed = await dockerCli(["volume", "rm", `${appName}-data`]).then(
      () => true,
      (error) => /no such volume/i.test(String(error)),
    );
    if (removed) break;
    await sleep(500);
  }
}, 120_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.error(rig.processOutput()));
});

describe("database deployments under faults", () => {
  it("agent kill -9 in the middle of a postgres deploy: done, and it accepts connections", async () => {
    const { deploymentId } = await rig.api.mutateOk("postgres.saveExternalPort", {
      postgresId,
      externalPort: port,
    });
    await sleep(1500);
    await rig.killAgent();
    await sleep(2000);
    rig.startAgent();
    await settledAndDone(deploymentId);
    await query("create table orders (id int primary key)");
    await query("insert into orders values (1)");
    expect((await query("select count(*)::int as n from orders")).rows).toEqual([{ n: 1 }]);
  }, 300_000);

  it("control plane kill -9 in the middle of a rebuild: done, fresh (the row is gone), accepting connections", async () => {
    const { deploymentId } = await rig.api.mutateOk("postgres.rebuild", { postgresId });
    await sleep(1500);
    await rig.controlPlane.stop("SIGKILL");
    await rig.controlPlane.start();
    await settledAndDone(deploymentId);
    const tables = await query("select count(*)::int as n from pg_tables where tablename = 'orders'");
    expect(tables.rows).toEqual([{ n: 0 }]);
  }, 300_000);
});
