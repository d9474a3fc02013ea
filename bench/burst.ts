/**
 * `pnpm bench:burst`: BURST_APPS (default 50) applications of a prebuilt local image (docker
 * source: no build, no registry) deployed at once, until every one serves on its host-mode port,
 * beside the same number of bare `docker service create` of the same specs (image, network,
 * host-mode port) started at once in the same run; the total time of each and the ratio. The
 * deployment queue's limit stays at its default (DEPLOYMENT_CONCURRENCY unset). The control plane
 * runs in this process on NATS JetStream and a fresh Postgres database, with its agent on the
 * local Docker Engine (as bench:deploy). Every service created here is removed at the end.
 */
import { rm } from "node:fs/promises";
import { freePort } from "../apps/agent/src/testing/net.ts";
import { DEFAULT_DEPLOYMENT_CONCURRENCY } from "../apps/control-plane/src/deployments/queue.ts";
import {
  type BenchPlatform,
  buildServingImage,
  docker,
  median,
  servedAt,
  startBenchPlatform,
} from "./support.ts";

const count = Number(process.env.BURST_APPS ?? 50);
const network = "platform-network";
const SERVE_TIMEOUT_MS = 300_000;

interface Burst {
  totalMs: number;
  /** Each service's time from the burst's start until it served, sorted. */
  servedMs: number[];
}

/** Starts every `start` at once; resolves when all of their ports serve `body`. */
async function burst(ports: number[], body: string, start: (index: number) => Promise<void>): Promise<Burst> {
  const startedAt = performance.now();
  const served = await Promise.all(
    ports.map(async (port, index) => {
      await start(index);
      return (await servedAt(port, body, SERVE_TIMEOUT_MS)) - startedAt;
    }),
  );
  return { totalMs: performance.now() - startedAt, servedMs: served.sort((a, b) => a - b) };
}

async function removeServices(names: string[]): Promise<void> {
  // One docker call for many services; errors (already gone) are ignored.
  for (let i = 0; i < names.length; i += 25) {
    await docker(["service", "rm", ...names.slice(i, i + 25)]).catch(() => {});
  }
}

async function main(): Promise<void> {
  // The queue's limit at its default.
  delete process.env.DEPLOYMENT_CONCURRENCY;
  const body = `burst ${process.pid}`;
  const { tag, context } = await buildServingImage("burst", body);

  let bench: BenchPlatform | undefined;
  const platformServices: string[] = [];
  const cliServices: string[] = [];
  let viaPlatform: Burst | undefined;
  let viaCli: Burst | undefined;
  try {
    bench = await startBenchPlatform("burst", {}, context);
    const { call, environmentId } = bench;
    const applications: { applicationId: string; port: number }[] = [];
    for (let i = 0; i < count; i++) {
      const appName = `bench-burst-${process.pid}-${i}`;
      platformServices.push(appName);
      const app = await call("application.create", { name: `burst ${i}`, appName, environmentId });
      await call("application.saveDockerProvider", { applicationId: app.applicationId, dockerImage: tag });
      const port = await freePort();
      await call("port.create", { applicationId: app.applicationId, publishedPort: port, targetPort: 8080 });
      applications.push({ applicationId: app.applicationId, port });
    }
    const concurrency = bench.platform.ctx.deployments.worker.slots.size;
    console.log(
      `deploying ${count} applications at once (deployment queue limit ${concurrency}, the default ${DEFAULT_DEPLOYMENT_CONCURRENCY})…`,
    );
    viaPlatform = await burst(
      applications.map((app) => app.port),
      body,
      async (index) => {
        await call("application.deploy", { applicationId: applications[index]!.applicationId });
      },
    );
    console.log(`platform: all ${count} served after ${viaPlatform.totalMs.toFixed(0)} ms`);
    await removeServices(platformServices);

    const cliPorts: number[] = [];
    for (let i = 0; i < count; i++) {
      cliServices.push(`bench-burst-cli-${process.pid}-${i}`);
      cliPorts.push(await freePort());
    }
    console.log(`creating ${count} services at once with docker service create…`);
    viaCli = await burst(cliPorts, body, async (index) => {
      await docker([
        "service",
        "create",
        "--detach",
        "--name",
        cliServices[index]!,
        "--network",
        network,
        "--publish",
        `mode=host,published=${cliPorts[index]},target=8080`,
        tag,
      ]);
    });
    console.log(`docker CLI: all ${count} served after ${viaCli.totalMs.toFixed(0)} ms`);
  } finally {
    await removeServices([...platformServices, ...cliServices]);
    await bench?.platform.close();
    // The image goes once no container of it is left (service removal stops them asynchronously).
    for (let i = 0; i < 30; i++) {
      if ((await docker(["ps", "-aq", "--filter", `ancestor=${tag}`]).catch(() => "")) === "") break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    await docker(["image", "rm", "-f", tag]).catch(() => {});
    await rm(context, { recursive: true, force: true });
  }
  if (!viaPlatform || !viaCli) return;
  const line = (what: string, result: Burst) =>
    console.log(
      `  ${what.padEnd(44)} ${result.totalMs.toFixed(0).padStart(7)} ms  (first ${result.servedMs[0]!.toFixed(0)} ms, median ${median(result.servedMs).toFixed(0)} ms)`,
    );
  console.log(`\nbench:burst — ${count} services of a prebuilt image deployed at once, until all serve`);
  line("application.deploy × N (queue + agent + Swarm)", viaPlatform);
  line("docker service create × N (bare CLI)", viaCli);
  console.log(
    `  ${"ratio platform / CLI (total time)".padEnd(44)} ${(viaPlatform.totalMs / viaCli.totalMs).toFixed(2).padStart(7)}`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
