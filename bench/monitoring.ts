/**
 * `npm run bench:monitoring`: the agent daemon's CPU (percent of one core, from utime+stime in
 * /proc/<pid>/stat) and resident memory (VmRSS, mean and peak of one reading a second) while
 * it collects system metrics and the stats of 50 local busybox containers every 2 s for one
 * minute, beside an idle agent (no monitoring set up) measured over the same minute in the same
 * run. Each agent is its own process on NATS; the containers are made for the run (image
 * PLATFORM_TEST_BUSYBOX_IMAGE, default platform-test/busybox:latest) and removed afterwards.
 * Settings: NATS_URL, BENCH_CONTAINERS (50), BENCH_SECONDS (60), BENCH_METRICS_PORT (free port).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AgentClient, connect, NatsAgentTransport } from "../packages/agent-protocol/src/index.ts";

const run = promisify(execFile);
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const containerCount = Number(process.env.BENCH_CONTAINERS ?? 50);
const seconds = Number(process.env.BENCH_SECONDS ?? 60);
const image = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
const root = path.resolve(import.meta.dirname, "..");
const prefix = `bench-mon-${process.pid}`;
const token = `bench-token-${process.pid}`;
const CLOCK_TICKS = 100; // USER_HZ on Linux

async function freePort(): Promise<number> {
  if (process.env.BENCH_METRICS_PORT) return Number(process.env.BENCH_METRICS_PORT);
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function startAgent(serverId: string, mainDirectory: string): ChildProcess {
  // node --import tsx (not the tsx CLI) so the pid is the measured process itself.
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

/** CPU seconds (user + system) the process has used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function rssMiB(pid: number): number {
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return kib / 1024;
}

async function waitForAgent(client: AgentClient, serverId: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.ping(serverId, 500);
      return;
    } catch (error) {
      if (attempt > 80) throw new Error(`agent ${serverId} did not answer: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

async function main(): Promise<void> {
  const names = Array.from({ length: containerCount }, (_, index) => `${prefix}-${index}`);
  const idleDir = mkdtempSync(path.join(tmpdir(), "platform-bench-mon-idle-"));
  const busyDir = mkdtempSync(path.join(tmpdir(), "platform-bench-mon-busy-"));
  const port = await freePort();
  let idle: ChildProcess | undefined;
  let busy: ChildProcess | undefined;
  const connection = await connect({ servers: natsUrl });
  const client = new AgentClient(new NatsAgentTransport(connection), 20_000);
  try {
    for (const name of names) {
      await run("docker", [
        "run",
        "-d",
        "--network",
        "none",
        "--name",
        name,
        "--label",
        "platform.test=bench-monitoring",
        image,
        "sleep",
        "3600",
      ]);
    }
    idle = startAgent(`${prefix}-idle`, idleDir);
    busy = startAgent(`${prefix}-busy`, busyDir);
    await waitForAgent(client, `${prefix}-idle`);
    await waitForAgent(client, `${prefix}-busy`);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const config = {
      server: {
        refreshRate: 2,
        port,
        token,
        urlCallback: "http://127.0.0.1:9/unused",
        retentionDays: 1,
        cronJob: "0 0 * * *",
        thresholds: { cpu: 0, memory: 0 },
      },
      containers: { refreshRate: 2, services: { include: names } },
    };
    await client.setupMonitoring(`${prefix}-busy`, JSON.stringify(config));

    const start = { idle: cpuSeconds(idle.pid!), busy: cpuSeconds(busy.pid!), at: performance.now() };
    const rss = { idle: [] as number[], busy: [] as number[] };
    for (let second = 0; second < seconds; second++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      rss.idle.push(rssMiB(idle.pid!));
      rss.busy.push(rssMiB(busy.pid!));
    }
    const elapsed = (performance.now() - start.at) / 1000;
    const cpu = {
      idle: ((cpuSeconds(idle.pid!) - start.idle) / elapsed) * 100,
      busy: ((cpuSeconds(busy.pid!) - start.busy) / elapsed) * 100,
    };
    const headers = { authorization: `Bearer ${token}` };
    const system = (await (
      await fetch(`http://127.0.0.1:${port}/metrics?limit=all`, { headers })
    ).json()) as unknown[];
    const oneContainer = (await (
      await fetch(`http://127.0.0.1:${port}/metrics/containers?appName=${names[0]}&limit=all`, { headers })
    ).json()) as unknown[];

    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const row = (name: string, cpuPercent: number, samples: number[]) =>
      `${name.padEnd(46)} ${cpuPercent.toFixed(1).padStart(8)} ${mean(samples).toFixed(1).padStart(9)} ${Math.max(
        ...samples,
      )
        .toFixed(1)
        .padStart(9)}`;
    console.log(
      `\nbench:monitoring — ${containerCount} containers, system and container samples every 2 s, ${elapsed.toFixed(0)} s, NATS ${natsUrl}\n`,
    );
    console.log(
      `${"agent".padEnd(46)} ${"CPU %".padStart(8)} ${"RSS MiB".padStart(9)} ${"peak MiB".padStart(9)}`,
    );
    console.log(row("idle agent (no monitoring), reference", cpu.idle, rss.idle));
    console.log(row(`collecting agent (${containerCount} containers every 2 s)`, cpu.busy, rss.busy));
    console.log(
      `\nstored during the run: ${system.length} system samples, ${oneContainer.length} samples of ${names[0]} (one of ${containerCount})`,
    );
    console.log("CPU % is of one core (the machine is shared; run it on a quiet machine for stable figures)");
  } finally {
    await connection.close();
    idle?.kill("SIGTERM");
    busy?.kill("SIGTERM");
    await run("docker", ["rm", "-f", ...names]).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    rmSync(idleDir, { recursive: true, force: true });
    rmSync(busyDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
