/**
 * `pnpm bench:compose`: time from `compose.deploy` of a three-service stack (composeType
 * `stack`: a web server and a worker of the busybox test image, and the redis test image with a
 * named volume) until every service runs its task, beside `docker stack deploy` of the same
 * converted file (getConvertedCompose of a twin stack, so names do not collide) to the same
 * point, in the same run; and the ratio. Both are watched the same way (`docker service ls` of
 * the stack's namespace). The control plane runs in-process on NATS JetStream and a fresh
 * Postgres database, with its agent on the local Docker Engine.
 *
 * Environment: BENCH_ROUNDS (default 3), PLATFORM_TEST_REDIS_IMAGE (default
 * platform-test/db-redis:7, scripts/build-database-images.sh), NATS_URL.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { convertedComposeOf } from "../apps/control-plane/src/compose/deploy.ts";
import { findComposeWithOrganization } from "../apps/control-plane/src/compose/repository.ts";
import { type BenchPlatform, docker, printComparison, printRound, startBenchPlatform } from "./support.ts";

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const busybox = "platform-test/busybox:latest";
const redis = process.env.PLATFORM_TEST_REDIS_IMAGE ?? "platform-test/db-redis:7";
const RUNNING_TIMEOUT_MS = 180_000;

const FILE = `services:
  web:
    image: ${busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; mkdir -p /www && echo ok > /www/index.html && httpd -f -p 8080 -h /www & wait"]
  worker:
    image: ${busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
  cache:
    image: ${redis}
    volumes:
      - data:/data
volumes:
  data: {}
`;

/** Polls until the stack's three services each run their one task; answers that moment. */
async function allRunning(stack: string): Promise<number> {
  const deadline = Date.now() + RUNNING_TIMEOUT_MS;
  for (;;) {
    const replicas = (
      await docker([
        "service",
        "ls",
        "--filter",
        `label=com.docker.stack.namespace=${stack}`,
        "--format",
        "{{.Replicas}}",
      ])
    )
      .split("\n")
      .filter(Boolean);
    if (replicas.length === 3 && replicas.every((value) => value === "1/1")) return performance.now();
    if (Date.now() > deadline) throw new Error(`stack ${stack} did not run within 180 s: ${replicas}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<void> {
  for (const image of [busybox, redis]) await docker(["image", "inspect", image]);
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "platform-bench-compose-"));
  let bench: BenchPlatform | undefined;
  const stacks: string[] = [];
  const viaPlatform: number[] = [];
  const viaCli: number[] = [];
  try {
    bench = await startBenchPlatform("compose", {}, mainDirectory);
    const { platform, call, environmentId } = bench;
    /** What compose.getConvertedCompose answers for the stack. */
    const converted = async (composeId: string) => {
      const row = await findComposeWithOrganization(platform.ctx.db, composeId);
      if (!row) throw new Error(`no stack ${composeId}`);
      return (await convertedComposeOf(platform.ctx, row)).yaml;
    };
    for (let round = 0; round < rounds; round++) {
      const appName = `bench-st-platform-${process.pid}-${round}`;
      const twin = `bench-st-cli-${process.pid}-${round}`;
      stacks.push(appName, twin);
      const created = await call("compose.create", {
        name: "bench",
        appName,
        environmentId,
        composeType: "stack",
        composeFile: FILE,
      });
      const twinStack = await call("compose.create", {
        name: "bench twin",
        appName: twin,
        environmentId,
        composeType: "stack",
        composeFile: FILE,
      });
      const started = performance.now();
      await call("compose.deploy", { composeId: created.composeId });
      viaPlatform.push((await allRunning(appName)) - started);

      const file = path.join(mainDirectory, `${twin}.yml`);
      await writeFile(file, await converted(twinStack.composeId));
      const cliStarted = performance.now();
      await docker(["stack", "deploy", "--prune", "--with-registry-auth", "--compose-file", file, twin]);
      viaCli.push((await allRunning(twin)) - cliStarted);
      printRound(round, rounds, viaPlatform.at(-1)!, viaCli.at(-1)!);
    }
  } finally {
    await bench?.platform.close();
    for (const stack of stacks) await docker(["stack", "rm", stack]).catch(() => {});
    // The volumes go once their containers have.
    for (const stack of stacks) {
      for (let attempt = 0; attempt < 60; attempt++) {
        const removed = await docker(["volume", "rm", `${stack}_data`]).then(
          () => true,
          (error) => /no such volume/i.test(String(error)),
        );
        if (removed) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    await rm(mainDirectory, { recursive: true, force: true });
  }
  printComparison(
    "a three-service stack (busybox web and worker, redis with a volume) from deploy until every task runs",
    "compose.deploy (queue + agent + stack deploy)",
    viaPlatform,
    viaCli,
    "docker stack deploy of the converted file",
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
