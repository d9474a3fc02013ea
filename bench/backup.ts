/**
 * `pnpm bench:backup`: a postgres database of BENCH_BACKUP_MIB MiB (its pg_database_size)
 * backed up by `backup.manualBackupPostgres` (the agent runs `pg_dump -Fc` in the container,
 * gzips in its process and streams a multipart upload to the destination) to a local s3rver,
 * beside `pg_dump -Fc | gzip > /dev/null` in the same container, in the same run; and the
 * server's peak disk growth during each: the database's volume, the container's writable layer
 * and the agent's work directory, sampled every 250 ms (`du`), against their size before. The
 * bucket is kept in /dev/shm (BENCH_BACKUP_BUCKET_DIR) so that the stand-in destination's own
 * files are not counted as the server's. The control plane and its agent run in this process.
 *
 * Environment: BENCH_BACKUP_MIB (default 100; the figure is 500), BENCH_ROUNDS
 * (default 1), PLATFORM_TEST_POSTGRES_IMAGE (default platform-test/db-postgres:15), NATS_URL,
 * BENCH_BACKUP_BUCKET_DIR (default /dev/shm).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "../apps/agent/src/testing/net.ts";
import { startTestS3, type TestS3 } from "../packages/object-storage/src/testing/s3.ts";
import { type BenchPlatform, docker, median, startBenchPlatform } from "./support.ts";

const run = promisify(execFile);
const sizeMiB = Number(process.env.BENCH_BACKUP_MIB ?? 100);
const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
const image = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";
const bucketDirectory = process.env.BENCH_BACKUP_BUCKET_DIR ?? "/dev/shm";
const credentials = { user: "bench", password: "bench-Pass1", database: "bench" };
const MiB = 1024 * 1024;

async function connect(port: number): Promise<pg.Client> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const client = new pg.Client({ host: "127.0.0.1", port, ...credentials, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Bytes used under `paths` (du -sb; a path that is gone counts 0). */
async function bytesUnder(paths: string[]): Promise<number> {
  const { stdout } = await run("du", ["-sb", "--total", ...paths]).catch((error) => ({
    stdout: String(error.stdout ?? ""),
  }));
  const total = stdout.trim().split("\n").at(-1)?.split(/\s+/)[0];
  return Number(total ?? 0);
}

/** Runs `work` while sampling `paths`; answers its duration and the peak growth over the start. */
async function measured(paths: string[], work: () => Promise<void>): Promise<{ ms: number; peak: number }> {
  const baseline = await bytesUnder(paths);
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await bytesUnder(paths)) - baseline);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const started = performance.now();
  try {
    await work();
  } finally {
    sampling = false;
    await sampler;
  }
  const ms = performance.now() - started;
  peak = Math.max(peak, (await bytesUnder(paths)) - baseline);
  return { ms, peak };
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

async function main(): Promise<void> {
  await docker(["image", "inspect", image]);
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "platform-bench-backup-"));
  let bench: BenchPlatform | undefined;
  let s3: TestS3 | undefined;
  const appName = `bench-backup-${process.pid}`;
  try {
    s3 = await startTestS3("backups", bucketDirectory);
    bench = await startBenchPlatform(
      "backup",
      { PLATFORM_DEFAULT_IMAGE_POSTGRES: image, PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
      mainDirectory,
    );
    const { platform, call, environmentId } = bench;
    const port = await freePort();
    const created = await call("postgres.create", {
      name: "bench",
      appName,
      environmentId,
      databaseName: credentials.database,
      databaseUser: credentials.user,
      databasePassword: credentials.password,
    });
    const postgresId = created.postgresId as string;
    const { deploymentId } = await call("postgres.saveExternalPort", { postgresId, externalPort: port });
    const deployed = await platform.waitForDeployment(deploymentId, 240_000);
    if (deployed.status !== "done") throw new Error(`postgres did not deploy: ${deployed.errorMessage}`);

    const client = await connect(port);
    console.log(`filling the database to ${sizeMiB} MiB ...`);
    await client.query("create table filler (id bigint primary key, payload text)");
    // ~330 bytes a row on disk with its index; text that compresses about as much as real data.
    const rows = Math.round((sizeMiB * MiB) / 330);
    for (let from = 1; from <= rows; from += 200_000) {
      await client.query(
        "insert into filler select g, md5(g::text) || repeat(md5((g * 7)::text), 6) || g from generate_series($1::bigint, $2::bigint) g",
        [from, Math.min(rows, from + 199_999)],
      );
    }
    await client.query("checkpoint");
    const size = Number((await client.query("select pg_database_size('bench') as size")).rows[0].size);
    await client.end();

    const containerId = (
      await docker(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${appName}`])
    )
      .split("\n")[0]!
      .trim();
    const upperDir = await docker(["inspect", "--format", "{{.GraphDriver.Data.UpperDir}}", containerId]);
    const volume = await docker(["volume", "inspect", "--format", "{{.Mountpoint}}", `${appName}-data`]);
    const serverPaths = [volume, upperDir, mainDirectory];

    const destination = await call("destination.create", {
      name: "bench s3rver",
      provider: "Minio",
      accessKey: s3.storage.accessKey,
      secretAccessKey: s3.storage.secretAccessKey,
      bucket: s3.storage.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
    });
    const backup = await call("backup.create", {
      schedule: "0 0 1 1 *",
      enabled: false,
      prefix: "bench",
      destinationId: destination.destinationId,
      database: credentials.database,
      databaseType: "postgres",
      postgresId,
      keepLatestCount: 1,
    });

    const viaPlatform: number[] = [];
    const viaCli: number[] = [];
    const peaks = { platform: 0, cli: 0 };
    let stored = 0;
    for (let round = 0; round < rounds; round++) {
      const cli = await measured(serverPaths, async () => {
        await docker([
          "exec",
          "-e",
          `PGPASSWORD=${credentials.password}`,
          containerId,
          "sh",
          "-c",
          `pg_dump -Fc --no-password -U ${credentials.user} -d ${credentials.database} | gzip > /dev/null`,
        ]);
      });
      viaCli.push(cli.ms);
      peaks.cli = Math.max(peaks.cli, cli.peak);
      const platformRun = await measured(serverPaths, async () => {
        const answer = await call("backup.manualBackupPostgres", { backupId: backup.backupId });
        if (answer.status !== "done") throw new Error(`the backup failed: ${answer.errorMessage}`);
        stored = answer.sizeBytes;
      });
      viaPlatform.push(platformRun.ms);
      peaks.platform = Math.max(peaks.platform, platformRun.peak);
      console.log(
        `round ${round + 1}/${rounds}: backup.manualBackupPostgres ${platformRun.ms.toFixed(0)} ms (disk +${mib(platformRun.peak)}), pg_dump -Fc | gzip ${cli.ms.toFixed(0)} ms (disk +${mib(cli.peak)})`,
      );
    }
    const platformMs = median(viaPlatform);
    const cliMs = median(viaCli);
    console.log(
      `\npostgres ${mib(size)} (pg_database_size), ${image}; object stored: ${mib(stored)} (median of ${rounds} rounds)`,
    );
    console.log(
      `  ${"backup.manualBackupPostgres to s3rver".padEnd(44)}  ${platformMs.toFixed(0).padStart(7)} ms`,
    );
    console.log(
      `  ${"pg_dump -Fc | gzip > /dev/null (docker exec)".padEnd(44)}  ${cliMs.toFixed(0).padStart(7)} ms`,
    );
    console.log(
      `  ${"ratio platform / reference".padEnd(44)}  ${(platformMs / cliMs).toFixed(2).padStart(7)}`,
    );
    console.log(
      `  peak disk growth on the server (volume, container layer, agent directory): backup ${mib(peaks.platform)}, reference ${mib(peaks.cli)}`,
    );
  } finally {
    await docker(["service", "rm", appName]).catch(() => {});
    await bench?.platform.close();
    for (let attempt = 0; attempt < 60; attempt++) {
      if (
        await docker(["volume", "rm", `${appName}-data`]).then(
          () => true,
          (error) => /no such volume/i.test(String(error)),
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await s3?.close();
    await rm(mainDirectory, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
