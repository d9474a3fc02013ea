/**
 * `pnpm bench:deploy`: time from `application.deploy` to the new container serving on its
 * host-mode port, for a prebuilt image (docker source: no build), beside the same deployment
 * made with the bare docker CLI (`docker service create` with the same image, network and
 * host-mode port) in the same run, and the ratio. Each round deploys a new service both ways;
 * the control plane runs in-process on NATS JetStream and a fresh Postgres database, with its
 * agent on the local Docker Engine. Needs what the tests need (Postgres, NATS, Docker Swarm,
 * scripts/docker-setup.sh).
 */
import { rm } from "node:fs/promises";
import { freePort } from "../apps/agent/src/testing/net.ts";
import {
  type BenchPlatform,
  buildServingImage,
  docker,
  printComparison,
  printRound,
  servedAt,
  startBenchPlatform,
} from "./support.ts";

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const network = "platform-network";

async function main(): Promise<void> {
  const body = `bench ${process.pid}`;
  const { tag, context } = await buildServingImage("deploy", body);

  let bench: BenchPlatform | undefined;
  const services: string[] = [];
  const viaPlatform: number[] = [];
  const viaCli: number[] = [];
  try {
    bench = await startBenchPlatform("deploy", {}, context);
    const { call, environmentId } = bench;
    for (let round = 0; round < rounds; round++) {
      const appName = `bench-platform-${process.pid}-${round}`;
      services.push(appName);
      const app = await call("application.create", {
        name: "bench",
        appName,
        environmentId,
      });
      await call("application.saveDockerProvider", { applicationId: app.applicationId, dockerImage: tag });
      const port = await freePort();
      await call("port.create", { applicationId: app.applicationId, publishedPort: port, targetPort: 8080 });
      const started = performance.now();
      await call("application.deploy", { applicationId: app.applicationId });
      viaPlatform.push((await servedAt(port, body)) - started);

      const cliName = `bench-cli-${process.pid}-${round}`;
      services.push(cliName);
      const cliPort = await freePort();
      const cliStarted = performance.now();
      await docker([
        "service",
        "create",
        "--detach",
        "--name",
        cliName,
        "--network",
        network,
        "--publish",
        `mode=host,published=${cliPort},target=8080`,
        tag,
      ]);
      viaCli.push((await servedAt(cliPort, body)) - cliStarted);
      printRound(round, rounds, viaPlatform.at(-1)!, viaCli.at(-1)!);
    }
  } finally {
    for (const name of services) await docker(["service", "rm", name]).catch(() => {});
    await bench?.platform.close();
    await docker(["image", "rm", "-f", tag]).catch(() => {});
    await rm(context, { recursive: true, force: true });
  }
  printComparison(
    "deploy of a prebuilt image until it serves on 127.0.0.1",
    "application.deploy (queue + agent + Swarm)",
    viaPlatform,
    viaCli,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
