/**
 * `pnpm bench:deploy`: time from `application.deploy` to the new container serving on its
 * host-mode port, for a prebuilt image (docker source: no build), beside the same deployment
 * made with the bare docker CLI (`docker service create` with the same image, network and
 * host-mode port) in the same run, and the ratio. Each round deploys a new service both ways;
 * the control plane runs in-process on NATS JetStream and a fresh Postgres database, with its
 * agent on the local Docker Engine. Needs what the tests need (Postgres, NATS, Docker Swarm,
 * scripts/docker-setup.sh).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "../apps/agent/src/testing/net.ts";
import { startTestPlatform } from "../apps/control-plane/src/testing/harness.ts";

const run = promisify(execFile);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const baseImage = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
const network = "platform-network";
const SERVE_TIMEOUT_MS = 120_000;

const docker = async (args: string[]) => (await run("docker", args, { maxBuffer: 16 << 20 })).stdout.trim();

/** Polls 127.0.0.1:port until it answers `body`; answers the moment it did. */
async function servedAt(port: number, body: string): Promise<number> {
  const deadline = Date.now() + SERVE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      if ((await response.text()).trim() === body) return performance.now();
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`nothing served "${body}" on 127.0.0.1:${port} within ${SERVE_TIMEOUT_MS} ms`);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

async function main(): Promise<void> {
  const tag = `platform-bench/deploy:${process.pid}`;
  const context = await mkdtemp(path.join(tmpdir(), "platform-bench-deploy-"));
  const body = `bench ${process.pid}`;
  await writeFile(path.join(context, "index.html"), body);
  await writeFile(
    path.join(context, "Dockerfile"),
    `FROM ${baseImage}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
  );
  await docker(["build", "--quiet", "--tag", tag, context]);

  const platform = await startTestPlatform(
    { NATS_URL: natsUrl, LOG_LEVEL: "warn" },
    {
      agents: { localAgent: { mainDirectory: context } },
      deployments: { stream: `BENCH_DEPLOY_${process.pid}`, subjectPrefix: `bench.deploy.${process.pid}` },
    },
  );
  const services: string[] = [];
  const viaPlatform: number[] = [];
  const viaCli: number[] = [];
  try {
    const owner = await platform.registerOwner();
    const auth = { token: owner.token };
    const call = async (name: string, input: Record<string, unknown>) => {
      const response = await platform.mutate(name, input, auth);
      if (response.status !== 200) throw new Error(`${name}: ${JSON.stringify(response.body)}`);
      return response.body;
    };
    const project = await call("project.create", { name: "Bench" });
    for (let round = 0; round < rounds; round++) {
      const appName = `bench-platform-${process.pid}-${round}`;
      services.push(appName);
      const app = await call("application.create", {
        name: "bench",
        appName,
        environmentId: project.environment.environmentId,
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
      process.stdout.write(
        `round ${round + 1}/${rounds}: platform ${viaPlatform.at(-1)!.toFixed(0)} ms, docker CLI ${viaCli.at(-1)!.toFixed(0)} ms\n`,
      );
    }
  } finally {
    for (const name of services) await docker(["service", "rm", name]).catch(() => {});
    await platform.close();
    await docker(["image", "rm", "-f", tag]).catch(() => {});
    await rm(context, { recursive: true, force: true });
  }
  const platformMs = median(viaPlatform);
  const cliMs = median(viaCli);
  console.log(`\ndeploy of a prebuilt image until it serves on 127.0.0.1 (median of ${rounds} rounds)`);
  console.log(`  application.deploy (queue + agent + Swarm)  ${platformMs.toFixed(0).padStart(7)} ms`);
  console.log(`  docker service create (bare CLI)            ${cliMs.toFixed(0).padStart(7)} ms`);
  console.log(`  ratio platform / CLI                        ${(platformMs / cliMs).toFixed(2).padStart(7)}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
