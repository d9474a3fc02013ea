/**
 * `pnpm bench:cluster`: a 6-replica application deployed across a Swarm of 3 nodes through the
 * platform (application.deploy on the manager's server, until its 6 tasks run), beside
 * `docker service create` of the same spec (image, replicas, network, endpoint mode) on the
 * same Swarm in the same run, and the ratio. The Swarm is three extra Docker Engines in network
 * namespaces (scripts/test-cluster.sh, removed at the end), each with its own in-process agent;
 * the host's engine is not used. Needs root and what the tests need (Postgres, Docker).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type RunningAgent, startAgent } from "../apps/agent/src/agent.ts";
import { insertTestServer } from "../apps/control-plane/src/agents/testing/agents.ts";
import { startTestPlatform, type TestPlatform } from "../apps/control-plane/src/testing/harness.ts";
import { printComparison, printRound } from "./support.ts";

const run = promisify(execFile);
const script = path.resolve(import.meta.dirname, "../scripts/test-cluster.sh");
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const REPLICAS = 6;
const IMAGE = "platform-test/static-httpd:latest";
const ENGINES = ["a", "b", "c"] as const;
type Engine = (typeof ENGINES)[number];
const socket = (engine: Engine) => `/run/pcl/${engine}/docker.sock`;

const cluster = (...args: string[]) => run("bash", [script, ...args], { timeout: 180_000 });
const onA = async (args: string[]) =>
  (await run("docker", ["-H", `unix://${socket("a")}`, ...args], { maxBuffer: 16 << 20 })).stdout.trim();

/** Resolves once `service` has REPLICAS running tasks on 3 distinct nodes; answers the time. */
async function converged(service: string, timeoutMs = 180_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // The deployment is queued: the service appears when the agent creates it.
    const listed = await onA([
      "service",
      "ps",
      service,
      "--filter",
      "desired-state=running",
      "--format",
      "{{.Node}} {{.CurrentState}}",
    ]).catch(() => "");
    const lines = listed.split("\n").filter((line) => /\sRunning /.test(line));
    if (lines.length === REPLICAS && new Set(lines.map((line) => line.split(" ")[0])).size === 3) {
      return performance.now();
    }
    if (Date.now() > deadline) throw new Error(`${service} did not converge: ${lines.join("; ")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<void> {
  let platform: TestPlatform | undefined;
  const agents: RunningAgent[] = [];
  const directories: string[] = [];
  try {
    await cluster("down");
    await cluster("up", ...ENGINES);
    await onA(["swarm", "init", "--advertise-addr", "10.231.0.2"]);
    await onA(["network", "create", "-d", "overlay", "--attachable", "platform-network"]);
    platform = await startTestPlatform({ LOG_LEVEL: "warn" }, { agents: { localAgent: false } });
    const owner = await platform.registerOwner();
    const servers = {} as Record<Engine, string>;
    for (const engine of ENGINES) {
      servers[engine] = await insertTestServer(platform, owner.user.organizationId, `node-${engine}`);
      await platform.ctx.db
        .updateTable("servers")
        .set({ enrolledAt: new Date().toISOString() })
        .where("serverId", "=", servers[engine])
        .execute();
      const mainDirectory = await mkdtemp(path.join(tmpdir(), `bench-cluster-${engine}-`));
      directories.push(mainDirectory);
      agents.push(
        await startAgent({
          serverId: servers[engine],
          transport: platform.ctx.agents.client.transport,
          dockerSocket: socket(engine),
          mainDirectory,
        }),
      );
    }
    const as = { token: owner.token };
    for (const engine of ["b", "c"] as const) {
      const joined = await platform.query(
        "cluster.addWorker",
        { serverId: servers.a, joinServerId: servers[engine] },
        as,
      );
      if (joined.status !== 200)
        throw new Error(`addWorker answered ${joined.status}: ${JSON.stringify(joined.body)}`);
    }
    const project = await platform.mutateOk("project.create", { name: "Bench" }, as);
    const viaPlatform: number[] = [];
    const viaCli: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const app = await platform.mutateOk(
        "application.create",
        { name: `bench-${round}`, environmentId: project.environment.environmentId, serverId: servers.a },
        as,
      );
      await platform.mutateOk(
        "application.saveDockerProvider",
        { applicationId: app.applicationId, dockerImage: IMAGE },
        as,
      );
      await platform.mutateOk(
        "application.update",
        { applicationId: app.applicationId, replicas: REPLICAS },
        as,
      );
      const started = performance.now();
      await platform.mutateOk("application.deploy", { applicationId: app.applicationId }, as);
      viaPlatform.push((await converged(app.appName)) - started);

      const cliName = `bench-cli-${round}`;
      const cliStarted = performance.now();
      await onA([
        "service",
        "create",
        "--detach",
        "--no-resolve-image",
        "--name",
        cliName,
        "--replicas",
        String(REPLICAS),
        "--network",
        "platform-network",
        "--endpoint-mode",
        "dnsrr",
        IMAGE,
      ]);
      viaCli.push((await converged(cliName)) - cliStarted);
      printRound(round, rounds, viaPlatform.at(-1)!, viaCli.at(-1)!);
    }
    printComparison(
      `${REPLICAS} replicas across 3 Swarm nodes, until every task runs`,
      "application.deploy (platform, through the agent)",
      viaPlatform,
      viaCli,
    );
  } finally {
    for (const agent of agents) await agent.stop().catch(() => {});
    await platform?.close().catch(() => {});
    await cluster("down");
    for (const directory of directories) await rm(directory, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
