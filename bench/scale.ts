/**
 * `pnpm bench:scale`: one control plane (Postgres, in its own process) under N simulated agents
 * (all in this process), step by step along a curve (default 0, 1000, 2500, 5000; SCALE_AGENTS
 * sets it), each step measured for SCALE_SECONDS (default 30) after SCALE_WARMUP_SECONDS
 * (default 10) of warm-up.
 *
 * The NATS server is private (started here on a free port, operator/JWT mode with JetStream,
 * like the tests'). Every simulated agent has its own server row, enrolls through
 * POST /api/agent.enroll with a one-time token and its own nkey, and connects with the user JWT
 * it got (so NATS enforces its per-server permissions). It beats every 10 s (±10% jitter) with
 * the heartbeat the real agent sends and answers the commands the control plane sends idle
 * agents (validateServer for activation, observeServices for reconciliation: each server runs
 * one deployed application) the way a healthy agent does.
 *
 * The control plane runs as `npm start` runs it (built JavaScript under plain node).
 *
 * Measured per step: the control plane's CPU (utime+stime from /proc/<pid>/stat over the
 * window, in cores) and RSS; heartbeat lag, the time from an agent's publish to the database
 * showing it (servers.last_heartbeat_at holds the receive time, so a heartbeat sent at t is
 * recorded once a poll every POLL_MS sees last_heartbeat_at ≥ t: resolution POLL_MS); heartbeats
 * never recorded; commands answered; and project.all (100 projects) p50/p99 from a steady
 * probe of 10 requests/s. The 0-agent step is the reference of the same run.
 */
import type { ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { freePort } from "../apps/agent/src/testing/net.ts";
import { createAgentUser, startJwtNats } from "../apps/control-plane/src/agents/testing/nats-jwt.ts";
import {
  AGENT_VERSION,
  type CommandReply,
  type CommandRequest,
  connect,
  errorReply,
  jwtAuthenticator,
  NatsAgentTransport,
  type NatsConnection,
} from "../packages/agent-protocol/src/index.ts";
import { createScratchDatabase, registerBenchOwner, startControlPlane } from "./support.ts";

const curve = (process.env.SCALE_AGENTS ?? "1000,2500,5000").split(",").map(Number);
const stepSeconds = Number(process.env.SCALE_SECONDS ?? 30);
const warmupSeconds = Number(process.env.SCALE_WARMUP_SECONDS ?? 10);
const heartbeatMs = Number(process.env.SCALE_HEARTBEAT_MS ?? 10_000);
const POLL_MS = 200;
const PROBE_INTERVAL_MS = 100;
const _root = path.resolve(import.meta.dirname, "..");
const clockTicks = 100; // getconf CLK_TCK on Linux

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function milliseconds(value: number): string {
  return Number.isNaN(value) ? "-" : value.toFixed(0);
}

/** CPU seconds (user + system) the process has used. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** A simulated agent: its own NATS user, heartbeats as the agent sends them, healthy answers. */
class SimulatedAgent {
  /** Send times of heartbeats the database does not show yet. */
  readonly pending: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private connection: NatsConnection | undefined;

  constructor(
    readonly serverId: string,
    private readonly stats: Stats,
  ) {}

  async start(natsUrl: string, userJwt: string, seed: Uint8Array): Promise<void> {
    // A busy bench process may miss the server's authentication timeout: try again, as an agent does.
    for (let attempt = 1; !this.connection; attempt++) {
      try {
        this.connection = await connect({
          servers: natsUrl,
          name: `platform-agent/${AGENT_VERSION} ${this.serverId}`,
          authenticator: jwtAuthenticator(userJwt, seed),
          maxReconnectAttempts: -1,
          pingInterval: 20_000,
        });
      } catch (error) {
        if (attempt >= 10) throw error;
        await sleep(250 * attempt);
      }
    }
    const transport = new NatsAgentTransport(this.connection);
    transport.serveCommands(this.serverId, async (request) => this.answer(request));
    await transport.flush();
    const beat = () => {
      const sentAtUnixMs = Date.now();
      transport.publishHeartbeat({
        serverId: this.serverId,
        agentVersion: AGENT_VERSION,
        hostname: `sim-${this.serverId}`,
        sentAtUnixMs,
        dockerReachable: true,
        dockerVersion: "27.3.1",
        swarmState: "active",
      });
      this.pending.push(sentAtUnixMs);
      this.stats.sent.push(sentAtUnixMs);
      this.timer = setTimeout(beat, Math.round(heartbeatMs * (0.9 + 0.2 * Math.random())));
    };
    beat();
  }

  private answer(request: CommandRequest): CommandReply {
    this.stats.commands.set(request.command, (this.stats.commands.get(request.command) ?? 0) + 1);
    const { requestId } = request;
    switch (request.command) {
      case "ping":
        return {
          requestId,
          result: "ping",
          ping: { agentVersion: AGENT_VERSION, hostname: "sim", timeUnixMs: Date.now() },
        };
      case "validateServer": {
        const tool = { enabled: true, version: "1.0.0" };
        return {
          requestId,
          result: "validateServer",
          validateServer: {
            docker: tool,
            rclone: tool,
            nixpacks: tool,
            buildpacks: tool,
            railpack: tool,
            isPlatformNetworkInstalled: true,
            isSwarmInstalled: true,
            isMainDirectoryInstalled: true,
          },
        };
      }
      case "observeServices":
        return {
          requestId,
          result: "observedServices",
          observedServices: {
            activeJobs: [],
            services: request.observeServices.serviceNames.map((name) => ({
              name,
              found: true,
              deploymentId: "",
              previousDeploymentId: "",
              image: `${name}:latest`,
              updateState: "completed",
              updateMessage: "",
              desiredReplicas: 1,
              runningTasks: 1,
              taskError: "",
              outdatedTasks: 0,
              taskErrorDeploymentId: "",
              ownerMismatch: false,
            })),
          },
        };
      default:
        return errorReply(requestId, "UNIMPLEMENTED", `the simulated agent does not run ${request.command}`);
    }
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await this.connection?.close();
  }
}

interface Stats {
  sent: number[];
  lags: { sentAt: number; lagMs: number }[];
  commands: Map<string, number>;
}

interface StepFigures {
  agents: number;
  heartbeatsSent: number;
  heartbeatsRecorded: number;
  heartbeatsMissing: number;
  lagP50: number;
  lagP99: number;
  lagMax: number;
  commandsPerSecond: number;
  cpuCores: number;
  rssEnd: number;
  rssMax: number;
  projectAllP50: number;
  projectAllP99: number;
  probeErrors: number;
}

async function main(): Promise<void> {
  const database = await createScratchDatabase("platform_scale");
  const db = new pg.Pool({ connectionString: database.url, max: 2 });
  const dataDir = mkdtempSync(path.join(tmpdir(), "platform-scale-"));
  const nats = await startJwtNats({ jetstream: true });
  const port = Number(process.env.SCALE_PORT ?? (await freePort()));
  const base = `http://127.0.0.1:${port}`;
  let controlPlane: ChildProcess | undefined;
  const agents: SimulatedAgent[] = [];
  const stats: Stats = { sent: [], lags: [], commands: new Map() };
  const byServer = new Map<string, SimulatedAgent>();
  let polling = true;

  try {
    controlPlane = startControlPlane(port, {
      ...nats.env,
      DATABASE_URL: database.url,
      PLATFORM_LOCAL_PROXY: "false",
      PLATFORM_DATA_DIR: dataDir,
    });
    const pid = controlPlane.pid!;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {}
      if (i > 300) throw new Error("the control plane did not come up");
      await sleep(100);
    }
    const { apiKey } = await registerBenchOwner(base, "scale@example.com");
    const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
    for (let i = 0; i < 100; i++) {
      const created = await fetch(`${base}/api/project.create`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: `project ${i}`, description: "benchmark project" }),
      });
      if (!created.ok) throw new Error(`project.create failed: ${await created.text()}`);
    }
    const { rows: environments } = await db.query<{ environment_id: string; organization_id: string }>(
      `select e.environment_id, p.organization_id from environments e join projects p using (project_id) limit 1`,
    );
    const { environment_id: environmentId, organization_id: organizationId } = environments[0]!;

    // Heartbeat lag: a heartbeat sent at t is recorded once last_heartbeat_at (its receive time) ≥ t.
    const poller = (async () => {
      while (polling) {
        const { rows } = await db.query<{ server_id: string; last_heartbeat_at: Date | null }>(
          "select server_id, last_heartbeat_at from servers where last_heartbeat_at is not null",
        );
        const seenAt = Date.now();
        for (const row of rows) {
          const agent = byServer.get(row.server_id);
          if (!agent) continue;
          const receivedAt = row.last_heartbeat_at!.getTime();
          while (agent.pending.length > 0 && agent.pending[0]! <= receivedAt) {
            const sentAt = agent.pending.shift()!;
            stats.lags.push({ sentAt, lagMs: seenAt - sentAt });
          }
        }
        await sleep(POLL_MS);
      }
    })();

    async function addAgents(count: number): Promise<void> {
      const batch = 25;
      for (let start = 0; start < count; start += batch) {
        await Promise.all(
          Array.from({ length: Math.min(batch, count - start) }, async (_, i) => {
            const index = agents.length + start + i;
            const serverId = `sim${index}x${randomBytes(6).toString("hex")}`;
            await db.query(
              `insert into servers (server_id, organization_id, name, ip_address, username) values ($1, $2, $3, '127.0.0.1', 'root')`,
              [serverId, organizationId, `sim ${index}`],
            );
            // One deployed application per server, which reconciliation observes.
            const applicationId = `app${serverId}`;
            await db.query(
              `insert into applications (application_id, name, app_name, environment_id, server_id, application_status, refresh_token) values ($1, $2, $3, $4, $5, 'done', $1)`,
              [applicationId, `app ${index}`, `app-${serverId.toLowerCase()}`, environmentId, serverId],
            );
            await db.query(
              `insert into deployments (deployment_id, application_id, target_kind, target_id, kind, title, status) values ($1, $2, 'application', $2, 'deploy', 'bench', 'done')`,
              [`dep${serverId}`, applicationId],
            );
            const enrollmentToken = randomBytes(32).toString("base64url");
            await db.query(
              `insert into agent_enrollments (token_hash, server_id, expires_at) values ($1, $2, now() + interval '1 hour')`,
              [createHash("sha256").update(enrollmentToken).digest("hex"), serverId],
            );
            const user = createAgentUser();
            const enrolled = await fetch(`${base}/api/agent.enroll`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({
                enrollmentToken,
                publicKey: user.getPublicKey(),
                hostname: `sim-${index}`,
                agentVersion: AGENT_VERSION,
              }),
            });
            if (!enrolled.ok) throw new Error(`agent.enroll failed: ${await enrolled.text()}`);
            const { userJwt, natsUrl } = (await enrolled.json()) as { userJwt: string; natsUrl: string };
            const agent = new SimulatedAgent(serverId, stats);
            byServer.set(serverId, agent);
            await agent.start(natsUrl, userJwt, user.getSeed());
            agents.push(agent);
          }),
        );
      }
    }

    async function probeProjectAll(untilMs: number): Promise<{ latencies: number[]; errors: number }> {
      const latencies: number[] = [];
      let errors = 0;
      while (Date.now() < untilMs) {
        const startedAt = performance.now();
        try {
          const response = await fetch(`${base}/api/project.all`, { headers });
          await response.arrayBuffer();
          if (!response.ok) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - startedAt);
        await sleep(PROBE_INTERVAL_MS);
      }
      return { latencies: latencies.sort((a, b) => a - b), errors };
    }

    async function measure(): Promise<StepFigures> {
      const commandsBefore = [...stats.commands.values()].reduce((a, b) => a + b, 0);
      const startedAt = Date.now();
      const cpuBefore = cpuSeconds(pid);
      let rssMax = 0;
      const rssTimer = setInterval(() => {
        rssMax = Math.max(rssMax, rssMiB(pid));
      }, 1000);
      const probe = await probeProjectAll(startedAt + stepSeconds * 1000);
      const endedAt = Date.now();
      const cpuCores = (cpuSeconds(pid) - cpuBefore) / ((endedAt - startedAt) / 1000);
      clearInterval(rssTimer);
      const rssEnd = rssMiB(pid);
      const commands = [...stats.commands.values()].reduce((a, b) => a + b, 0) - commandsBefore;
      // Heartbeats sent in the window get 5 s more to be recorded; later ones are missing.
      await sleep(5000);
      const inWindow = (sentAt: number) => sentAt >= startedAt && sentAt < endedAt;
      const sent = stats.sent.filter(inWindow).length;
      const lags = stats.lags
        .filter((lag) => inWindow(lag.sentAt))
        .map((lag) => lag.lagMs)
        .sort((a, b) => a - b);
      return {
        agents: agents.length,
        heartbeatsSent: sent,
        heartbeatsRecorded: lags.length,
        heartbeatsMissing: sent - lags.length,
        lagP50: percentile(lags, 50),
        lagP99: percentile(lags, 99),
        lagMax: lags.at(-1) ?? Number.NaN,
        commandsPerSecond: commands / ((endedAt - startedAt) / 1000),
        cpuCores,
        rssEnd,
        rssMax: Math.max(rssMax, rssEnd),
        projectAllP50: percentile(probe.latencies, 50),
        projectAllP99: percentile(probe.latencies, 99),
        probeErrors: probe.errors,
      };
    }

    const results: StepFigures[] = [];
    const print = () => {
      console.log(
        `\nbench:scale — ${stepSeconds}s per step after ${warmupSeconds}s warm-up, heartbeats every ${heartbeatMs / 1000}s ±10%, Postgres, lag resolution ${POLL_MS} ms`,
      );
      console.log(
        "agents  hb sent  recorded  missing  lag p50 ms  lag p99 ms  lag max ms  cmds/s  CPU cores  RSS MiB end/max  project.all p50/p99 ms  errors",
      );
      for (const r of results) {
        const cells = [
          String(r.agents).padStart(6),
          String(r.heartbeatsSent).padStart(7),
          String(r.heartbeatsRecorded).padStart(8),
          String(r.heartbeatsMissing).padStart(7),
          milliseconds(r.lagP50).padStart(10),
          milliseconds(r.lagP99).padStart(10),
          milliseconds(r.lagMax).padStart(10),
          r.commandsPerSecond.toFixed(1).padStart(6),
          r.cpuCores.toFixed(3).padStart(9),
          `${r.rssEnd.toFixed(0)}/${r.rssMax.toFixed(0)}`.padStart(16),
          `${r.projectAllP50.toFixed(1)}/${r.projectAllP99.toFixed(1)}`.padStart(22),
          String(r.probeErrors).padStart(6),
        ];
        console.log(cells.join("  "));
      }
      console.log(`commands answered: ${JSON.stringify(Object.fromEntries(stats.commands))}`);
    };

    await sleep(warmupSeconds * 1000);
    results.push(await measure());
    print();
    for (const target of curve) {
      const startedAt = Date.now();
      const cpuBefore = cpuSeconds(pid);
      await addAgents(target - agents.length);
      const enrolledAt = Date.now();
      await sleep(warmupSeconds * 1000);
      const cores = (cpuSeconds(pid) - cpuBefore) / ((Date.now() - startedAt) / 1000);
      console.log(
        `${agents.length} agents enrolled and connected in ${((enrolledAt - startedAt) / 1000).toFixed(1)} s; control plane CPU while they enrolled and warmed up: ${cores.toFixed(3)} cores`,
      );
      results.push(await measure());
      print();
    }
    polling = false;
    await poller;
  } finally {
    polling = false;
    await Promise.all(agents.map((agent) => agent.stop().catch(() => {})));
    if (controlPlane && controlPlane.exitCode === null) {
      const exited = new Promise((resolve) => controlPlane!.once("exit", resolve));
      controlPlane.kill("SIGTERM");
      await Promise.race([exited, sleep(10_000)]);
    }
    await db.end();
    await nats.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
