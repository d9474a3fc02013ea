/**
 * `npm run bench:logs`: followed runtime logs (GET /api/runtime.logs) against `docker service
 * logs -f`. A Swarm service of the busybox image prints numbered lines as fast as it can; over the
 * same BENCH_SECONDS window two readers run side by side: curl on the runtime log stream and
 * `docker service logs -f --tail 0` of the same service, each counting its lines (lines per second
 * each, and their ratio). The stream goes through what serves it in the control plane: an agent
 * daemon (its own process, on NATS) follows Docker's log and publishes batches of lines, and this
 * process relays them as server-sent events with the route's own code (RuntimeLogFollow and
 * streamFollow of apps/control-plane/src/monitoring/log-follow.ts; the route's login and database
 * lookup happen once per stream and are left out). This process's CPU over the window (utime +
 * stime, /proc/self/stat) is the control plane's part, reported per 1,000 lines/s relayed.
 * Settings: NATS_URL, BENCH_SECONDS (20), PLATFORM_TEST_BUSYBOX_IMAGE.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { RuntimeLogFollow, streamFollow } from "../apps/control-plane/src/monitoring/log-follow.ts";
import { AgentClient, connect, NatsAgentTransport } from "../packages/agent-protocol/src/index.ts";
import { applicationOwner, ownershipLabels } from "../packages/ownership/src/ownership.ts";

const run = promisify(execFile);
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const image = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
const root = path.resolve(import.meta.dirname, "..");
const serverId = `bench-logs-${process.pid}`;
const serviceName = `bench-logs-${process.pid}`;
const owner = applicationOwner("bench-org", `bench-app-${process.pid}`);
const CLOCK_TICKS = 100; // USER_HZ on Linux

function cpuSeconds(pid: number | "self"): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function startAgent(mainDirectory: string): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "apps/agent/src/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      NATS_URL: natsUrl,
      AGENT_SERVER_ID: serverId,
      AGENT_CONFIG_FILE: path.join(mainDirectory, "absent.json"),
      AGENT_MAIN_DIR: mainDirectory,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
}

async function waitForAgent(client: AgentClient): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.ping(serverId, 500);
      return;
    } catch (error) {
      if (attempt > 120) throw new Error(`agent ${serverId} did not answer: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Lines `command` prints (run by sh) within the window; it is stopped at its end. */
function countLines(command: string, pattern: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", `timeout ${seconds} ${command} | grep -c '${pattern}'`], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.once("error", reject);
    child.once("exit", () => resolve(Number(out.trim()) || 0));
  });
}

async function main(): Promise<void> {
  const mainDirectory = mkdtempSync(path.join(tmpdir(), "platform-bench-logs-"));
  const connection = await connect({ servers: natsUrl });
  const client = new AgentClient(new NatsAgentTransport(connection), 20_000);
  const agent = startAgent(mainDirectory);
  const app = new Hono();
  app.get("/follow", async (c) => {
    const follow = new RuntimeLogFollow(
      client,
      { serverId, owner, swarmServiceName: serviceName },
      { tail: 0, search: "" },
    );
    await follow.start();
    return streamFollow(c, follow);
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(started));
  });
  const { port } = server.address() as AddressInfo;
  try {
    await waitForAgent(client);
    await run("docker", [
      "service",
      "create",
      "--detach",
      "--no-resolve-image",
      "--name",
      serviceName,
      ...Object.entries(ownershipLabels(owner)).flatMap(([key, value]) => ["--label", `${key}=${value}`]),
      image,
      "sh",
      "-c",
      'i=0; while true; do echo "bench line $i"; i=$((i+1)); done',
    ]);
    for (let attempt = 0; ; attempt++) {
      const { stdout } = await run("docker", ["service", "logs", "--tail", "1", serviceName]);
      if (stdout.includes("bench line")) break;
      if (attempt > 120) throw new Error("the service printed nothing");
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));

    const startCpu = cpuSeconds("self");
    const startAgentCpu = cpuSeconds(agent.pid!);
    const started = performance.now();
    const [streamed, reference] = await Promise.all([
      countLines(`curl -sN http://127.0.0.1:${port}/follow`, "^data: "),
      countLines(`docker service logs -f --tail 0 ${serviceName}`, "bench line"),
    ]);
    const elapsed = (performance.now() - started) / 1000;
    const cpuPercent = ((cpuSeconds("self") - startCpu) / elapsed) * 100;
    const agentCpuPercent = ((cpuSeconds(agent.pid!) - startAgentCpu) / elapsed) * 100;
    const streamedRate = streamed / seconds;
    const referenceRate = reference / seconds;
    const perThousand = streamedRate > 0 ? cpuPercent / (streamedRate / 1000) : Number.NaN;
    console.log(
      JSON.stringify(
        {
          seconds,
          streamLinesPerSecond: Math.round(streamedRate),
          dockerServiceLogsLinesPerSecond: Math.round(referenceRate),
          ratio: Math.round((streamedRate / referenceRate) * 100) / 100,
          controlPlaneCpuPercent: Math.round(cpuPercent * 10) / 10,
          controlPlaneCpuPercentPer1000LinesPerSecond: Math.round(perThousand * 100) / 100,
          agentCpuPercent: Math.round(agentCpuPercent * 10) / 10,
        },
        null,
        2,
      ),
    );
  } finally {
    await run("docker", ["service", "rm", serviceName]).catch(() => {});
    server.close();
    agent.kill("SIGTERM");
    await connection.close();
    rmSync(mainDirectory, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
