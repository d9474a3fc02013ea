/**
 * `pnpm bench:database`: time from `postgres.deploy` to the database accepting connections
 * (a `pg` client runs `select 1` through the external host-mode port on 127.0.0.1), beside
 * `docker service create` of the same image with the same environment, data volume, network
 * and port, to the same point, in the same run; and the ratio. Each round deploys a new
 * service both ways; the control plane runs in-process on NATS JetStream and a fresh Postgres
 * database, with its agent on the local Docker Engine.
 *
 * Environment: BENCH_ROUNDS (default 3), PLATFORM_TEST_POSTGRES_IMAGE (default
 * platform-test/db-postgres:15, scripts/build-database-images.sh), BENCH_DATABASE_PORTS (two
 * comma-separated host ports per round, e.g. "25432,25433,25434,25435"; default: free ports
 * from the OS), NATS_URL.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "../apps/agent/src/testing/net.ts";
import { type BenchPlatform, docker, printComparison, printRound, startBenchPlatform } from "./support.ts";

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const image = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";
const givenPorts = (process.env.BENCH_DATABASE_PORTS ?? "")
  .split(",")
  .map((port) => Number(port.trim()))
  .filter((port) => port > 0);
const ACCEPT_TIMEOUT_MS = 180_000;
const credentials = { user: "bench", password: "bench-Pass1", database: "bench" };

let portIndex = 0;
const nextPort = async () => givenPorts[portIndex++] ?? freePort();

/** Polls until postgres on 127.0.0.1:port answers `select 1`; answers that moment. */
async function acceptsAt(port: number): Promise<number> {
  const deadline = Date.now() + ACCEPT_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ host: "127.0.0.1", port, ...credentials, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query("select 1");
      return performance.now();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`postgres on 127.0.0.1:${port} did not accept: ${error}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

async function main(): Promise<void> {
  await docker(["image", "inspect", image]);
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "platform-bench-database-"));
  let bench: BenchPlatform | undefined;
  const services: string[] = [];
  const viaPlatform: number[] = [];
  const viaCli: number[] = [];
  try {
    bench = await startBenchPlatform("database", { PLATFORM_DEFAULT_IMAGE_POSTGRES: image }, mainDirectory);
    const { platform, call, environmentId } = bench;
    for (let round = 0; round < rounds; round++) {
      const appName = `bench-pg-platform-${process.pid}-${round}`;
      services.push(appName);
      const port = await nextPort();
      const created = await call("postgres.create", {
        name: "bench",
        appName,
        environmentId,
        databaseName: credentials.database,
        databaseUser: credentials.user,
        databasePassword: credentials.password,
      });
      // The port is stored without a deployment: the deploy below is the one measured.
      await platform.ctx.db
        .updateTable("databaseServices")
        .set({ externalPort: port })
        .where("databaseId", "=", created.postgresId)
        .execute();
      const started = performance.now();
      await call("postgres.deploy", { postgresId: created.postgresId });
      viaPlatform.push((await acceptsAt(port)) - started);

      const cliName = `bench-pg-cli-${process.pid}-${round}`;
      services.push(cliName);
      const cliPort = await nextPort();
      const cliStarted = performance.now();
      await docker([
        "service",
        "create",
        "--detach",
        "--name",
        cliName,
        "--network",
        "platform-network",
        "--env",
        `POSTGRES_DB=${credentials.database}`,
        "--env",
        `POSTGRES_USER=${credentials.user}`,
        "--env",
        `POSTGRES_PASSWORD=${credentials.password}`,
        "--mount",
        `type=volume,source=${cliName}-data,target=/var/lib/postgresql/data`,
        "--publish",
        `mode=host,published=${cliPort},target=5432`,
        image,
      ]);
      viaCli.push((await acceptsAt(cliPort)) - cliStarted);
      printRound(round, rounds, viaPlatform.at(-1)!, viaCli.at(-1)!);
    }
  } finally {
    for (const name of services) await docker(["service", "rm", name]).catch(() => {});
    await bench?.platform.close();
    // The volumes go once their containers have.
    for (const name of services) {
      for (let attempt = 0; attempt < 60; attempt++) {
        if (
          await docker(["volume", "rm", `${name}-data`]).then(
            () => true,
            (error) => /no such volume/i.test(String(error)),
          )
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    await rm(mainDirectory, { recursive: true, force: true });
  }
  printComparison(
    `postgres (${image}) from deploy until it accepts connections on 127.0.0.1`,
    "postgres.deploy (queue + agent + Swarm)",
    viaPlatform,
    viaCli,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
