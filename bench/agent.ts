/**
 * `pnpm bench:agent`: round-trip latency (p50/p99) of a no-op command (ping) sent over NATS to
 * the agent daemon, beside a bare NATS request/reply to an echo responder on the same server in
 * the same run, each in its own process; and the agent's idle resident memory (VmRSS from
 * /proc/<pid>/status once it has settled), beside that of the same agent run from its single
 * executable (dist/agent/platform-agent-linux-<arch>, from `npm run build`) when it is built.
 * Requests are sequential, after a warm-up.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  AgentClient,
  connect,
  encodeCommandRequest,
  makeCommandRequest,
  NatsAgentTransport,
} from "../packages/agent-protocol/src/index.ts";

const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const requests = Number(process.env.BENCH_REQUESTS ?? 2000);
const warmup = Number(process.env.BENCH_WARMUP ?? 200);
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 3000);
const root = path.resolve(import.meta.dirname, "..");
const serverId = `bench-${process.pid}`;
const echoSubject = `bench.${process.pid}.echo`;

function startNode(script: string, env: Record<string, string>): ChildProcess {
  // node --import tsx (not the tsx CLI) so the pid is the measured process itself.
  return spawn(process.execPath, ["--import", "tsx", script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  return Math.round((kib / 1024) * 10) / 10;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function timeEach(count: number, once: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await once();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}

function summary(name: string, samples: number[]): string {
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  const cells = [percentile(samples, 50), percentile(samples, 99), mean].map((ms) =>
    ms.toFixed(3).padStart(8),
  );
  return `${name.padEnd(34)} ${cells.join(" ")}`;
}

async function waitForPing(client: AgentClient, id: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.ping(id, 500);
      return;
    } catch (error) {
      if (attempt > 60) throw new Error(`the agent did not answer: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Idle VmRSS of the agent run from dist/agent's executable, or undefined when it is not built. */
async function executableIdleRss(client: AgentClient, mainDirectory: string): Promise<number | undefined> {
  const executable = path.join(root, "dist/agent", `platform-agent-linux-${process.arch}`);
  if (!existsSync(executable)) return undefined;
  const id = `${serverId}-executable`;
  const agent = spawn(executable, [], {
    env: {
      ...process.env,
      NATS_URL: natsUrl,
      AGENT_SERVER_ID: id,
      AGENT_CONFIG_FILE: path.join(mainDirectory, "absent.json"),
      AGENT_MAIN_DIR: mainDirectory,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    await waitForPing(client, id);
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    return rssMiB(agent.pid!);
  } finally {
    agent.kill("SIGTERM");
  }
}

async function main(): Promise<void> {
  const mainDirectory = mkdtempSync(path.join(tmpdir(), "platform-bench-agent-"));
  const agent = startNode("apps/agent/src/main.ts", {
    NATS_URL: natsUrl,
    AGENT_SERVER_ID: serverId,
    AGENT_CONFIG_FILE: path.join(mainDirectory, "absent.json"),
    AGENT_MAIN_DIR: mainDirectory,
    LOG_LEVEL: "warn",
  });
  const echo = startNode("bench/nats-echo.ts", { NATS_URL: natsUrl, BENCH_SUBJECT: echoSubject });
  const connection = await connect({ servers: natsUrl });
  const client = new AgentClient(new NatsAgentTransport(connection), 5000);
  try {
    await waitForPing(client, serverId);
    await new Promise<void>((resolve) => echo.stdout!.once("data", () => resolve()));

    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const idleRss = rssMiB(agent.pid!);
    const echoRss = rssMiB(echo.pid!);
    const executableRss = await executableIdleRss(client, mainDirectory);

    // The bare request carries the same bytes as an encoded ping request.
    const payload = encodeCommandRequest(makeCommandRequest(serverId, { command: "ping", ping: {} }, 5000));
    const bare = () => connection.request(echoSubject, payload, { timeout: 5000 });
    const ping = () => client.ping(serverId);
    await timeEach(warmup, bare);
    await timeEach(warmup, ping);
    const bareSamples = await timeEach(requests, bare);
    const agentSamples = await timeEach(requests, ping);
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const afterRss = rssMiB(agent.pid!);

    console.log(
      `\nbench:agent — ${requests} sequential requests each after ${warmup} warm-up, NATS ${natsUrl}\n`,
    );
    console.log(`${"round trip".padEnd(34)}   p50 ms   p99 ms  mean ms`);
    console.log(summary("bare NATS request/reply (echo)", bareSamples));
    console.log(summary("agent no-op command (ping)", agentSamples));
    const overhead = percentile(agentSamples, 50) - percentile(bareSamples, 50);
    console.log(`\nagent overhead at p50: ${overhead.toFixed(3)} ms per command`);
    console.log(`agent idle RSS: ${idleRss} MiB (after ${settleMs} ms idle); ${afterRss} MiB after the run`);
    if (executableRss !== undefined) {
      console.log(
        `agent idle RSS from its single executable: ${executableRss} MiB (after ${settleMs} ms idle)`,
      );
    }
    console.log(`bare NATS responder RSS (node + tsx + NATS client, for scale): ${echoRss} MiB`);
  } finally {
    await connection.close();
    agent.kill("SIGTERM");
    echo.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    rmSync(mainDirectory, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
