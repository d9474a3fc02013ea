/**
 * Fault-injection support for deployments (tests/faults/deploy-faults.test.ts, bench/faults.ts):
 * one restartable control plane process on a fixed port, database and data directory, an
 * enrolled agent process that can be killed and started again, a private NATS (JetStream, JWT
 * auth) that can be stopped and started, and applications on that agent's server that serve
 * their VERSION variable on a host-mode port. Every fault hits only processes started here.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, TEST_IMAGE, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import {
  type AgentProcess,
  killAgentProcess,
  startAgentProcess,
} from "../../apps/control-plane/src/agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../../apps/control-plane/src/agents/testing/nats-jwt.ts";
import type { PostgresTarget } from "../../apps/control-plane/src/db/database.ts";
import { createTestDatabase } from "../../apps/control-plane/src/testing/harness.ts";
import { CONTROL_PLANE_ENTRY } from "../../scripts/built-entries.mjs";
import { ApiClient, tail } from "../support/control-plane.ts";

const repositoryRoot = path.resolve(import.meta.dirname, "../..");

/**
 * Serves $VERSION on 8080. The shell is PID 1 and exits on SIGTERM (httpd as PID 1 ignores it:
 * every stop-first update would wait Docker's 10 s stop grace).
 */
export const SERVING_COMMAND = `sh -c 'trap "exit 0" TERM; mkdir -p /tmp/w && echo "$VERSION" > /tmp/w/index.html && httpd -f -p 8080 -h /tmp/w & wait'`;

/**
 * Removes a test's service, the helper containers of its volume's runs, then the volume (once
 * the service's containers, which go asynchronously, no longer hold it).
 */
export async function removeServiceAndVolume(appName: string, volumeName: string): Promise<void> {
  await dockerCli(["service", "rm", appName]).catch(() => {});
  const helpers = await dockerCli(["ps", "-aq", "--filter", `name=${volumeName}-volume-`]).catch(() => "");
  for (const id of helpers.split("\n").filter(Boolean)) await dockerCli(["rm", "-f", id]).catch(() => {});
  for (let attempt = 0; attempt < 30; attempt++) {
    const removed = await dockerCli(["volume", "rm", volumeName]).then(
      () => true,
      (error) => /no such volume/i.test(String(error)),
    );
    if (removed) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** The control plane as its own process, restartable on the same port, database and data. */
export class RestartableControlPlane {
  child: ChildProcess | undefined;
  readonly output: string[] = [];
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly url: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Starts the process and waits until GET /health answers 200. */
  async start(): Promise<void> {
    this.exitCode = null;
    this.exitSignal = null;
    const child = spawn(process.execPath, [CONTROL_PLANE_ENTRY], {
      cwd: repositoryRoot,
      env: this.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    child.stdout?.on("data", (chunk) => this.output.push(String(chunk)));
    child.stderr?.on("data", (chunk) => this.output.push(String(chunk)));
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        resolve();
      }),
    );
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`the control plane exited before it was healthy:\n${tail(this.output)}`);
      }
      try {
        const response = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(2000) });
        if (response.status === 200) return;
      } catch {}
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`the control plane was not healthy within 60 s:\n${tail(this.output)}`);
  }

  /** Sends `signal` and waits for the exit (SIGKILL after `killAfterMs`); answers how long it took. */
  async stop(signal: NodeJS.Signals = "SIGTERM", killAfterMs = 30_000): Promise<number> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return 0;
    const started = Date.now();
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    await this.exited;
    clearTimeout(timer);
    return Date.now() - started;
  }
}

export interface FaultApp {
  applicationId: string;
  appName: string;
  port: number;
}

/** Everything one fault run needs, started once and shared by its cases. */
export class DeployFaultRig {
  nats!: JwtNats;
  controlPlane!: RestartableControlPlane;
  agent: AgentProcess | undefined;
  api!: ApiClient;
  serverId!: string;
  environmentId!: string;
  readonly apps: FaultApp[] = [];
  /** How long the last SIGTERM stop of the control plane took. */
  lastStopMs = 0;
  /** The exit code of the control plane after the last SIGTERM stop (0 = clean). */
  lastStopExitCode: number | null = null;
  /** The control plane's database (read directly while the control plane is down). */
  database!: PostgresTarget;
  private agentStateDir!: string;
  private readonly cleanups: Array<() => Promise<unknown>> = [];

  /** `env`: extra control plane settings (DEPLOYMENT_WATCHDOG_MS, ...). */
  async start(env: Record<string, string> = {}): Promise<void> {
    this.nats = await startJwtNats({ jetstream: true });
    this.cleanups.push(() => this.nats.stop());
    const database = await createTestDatabase();
    this.cleanups.push(() => database.drop());
    const dataDir = await mkdtemp(path.join(tmpdir(), "faults-cp-"));
    this.cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const target = database.target;
    this.database = target;
    this.controlPlane = new RestartableControlPlane(url, {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: "127.0.0.1",
      PLATFORM_URL: url,
      PLATFORM_DATA_DIR: dataDir,
      DATABASE_URL: target.url,
      LOG_LEVEL: "warn",
      PLATFORM_LOCAL_PROXY: "false",
      PLATFORM_SECRET_KEY: "faults-test-secret-key-0123456789abcdef",
      RECONCILE_INTERVAL_MS: "1000",
      DEPLOYMENT_WATCHDOG_MS: "60000",
      ...this.nats.env,
      ...env,
    });
    this.cleanups.push(() => this.controlPlane.stop("SIGKILL"));
    await this.controlPlane.start();
    this.api = new ApiClient(url);
    const session = await this.api.mutateOk("auth.register", {
      email: "owner@example.com",
      password: "correct-horse-battery",
      name: "Owner",
    });
    this.api.token = session.token;
    const server = await this.api.mutateOk("server.create", {
      name: "faults",
      ipAddress: "127.0.0.1",
      port: 22,
      username: "root",
    });
    this.serverId = server.serverId;
    const enrollment = await this.api.mutateOk("server.enrollmentCommand", { serverId: this.serverId });
    this.agentStateDir = await mkdtemp(path.join(tmpdir(), "faults-agent-"));
    this.cleanups.push(() => rm(this.agentStateDir, { recursive: true, force: true }));
    this.cleanups.push(() => killAgentProcess(this.agent));
    this.agent = startAgentProcess({
      stateDir: this.agentStateDir,
      controlPlaneUrl: url,
      enrollmentToken: enrollment.token,
      heartbeatIntervalMs: 1000,
    });
    await this.until("the agent online", async () => {
      const one = await this.api.queryOk("server.one", { serverId: this.serverId });
      return one.serverStatus === "active" && one.online;
    });
    const project = await this.api.mutateOk("project.create", { name: "Faults" });
    this.environmentId = project.environment.environmentId;
  }

  /** An application on the agent's server serving its VERSION variable on a host-mode port. */
  async createApp(): Promise<FaultApp> {
    const appName = uniqueName("faults");
    const application = await this.api.mutateOk("application.create", {
      name: appName,
      appName,
      environmentId: this.environmentId,
      serverId: this.serverId,
    });
    const { applicationId } = application;
    this.cleanups.push(() => dockerCli(["service", "rm", appName]));
    await this.api.mutateOk("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    await this.api.mutateOk("application.update", {
      applicationId,
      command: SERVING_COMMAND,
    });
    const port = await freePort();
    await this.api.mutateOk("port.create", {
      applicationId,
      publishedPort: port,
      targetPort: 8080,
      publishMode: "host",
    });
    const app = { applicationId, appName, port };
    this.apps.push(app);
    return app;
  }

  /** Sets the app's VERSION and queues a deployment; answers its id. */
  async deploy(app: FaultApp, version: string): Promise<string> {
    await this.api.mutateOk("application.saveEnvironment", {
      applicationId: app.applicationId,
      env: `VERSION=${version}`,
      buildArgs: "",
      buildSecrets: "",
      createEnvFile: false,
    });
    const { deploymentId } = await this.api.mutateOk<{ deploymentId: string }>("application.deploy", {
      applicationId: app.applicationId,
    });
    return deploymentId;
  }

  /** Another server (`serverType`) with its own enrolled agent process, killed at close. */
  async enrollAgent(
    name: string,
    serverType: "build" | "deploy",
  ): Promise<{ serverId: string; agent: AgentProcess }> {
    const server = await this.api.mutateOk("server.create", {
      name,
      serverType,
      ipAddress: "127.0.0.1",
      port: 22,
      username: "root",
    });
    const enrollment = await this.api.mutateOk("server.enrollmentCommand", { serverId: server.serverId });
    const stateDir = await mkdtemp(path.join(tmpdir(), `faults-${name}-agent-`));
    this.cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    const agent = startAgentProcess({
      stateDir,
      controlPlaneUrl: this.controlPlane.url,
      enrollmentToken: enrollment.token,
      heartbeatIntervalMs: 1000,
    });
    this.cleanups.push(() => killAgentProcess(agent));
    await this.until(`the ${name} agent online`, async () => {
      const one = await this.api.queryOk("server.one", { serverId: server.serverId });
      return one.serverStatus === "active" && one.online;
    });
    return { serverId: server.serverId, agent };
  }

  async killAgent(): Promise<void> {
    await killAgentProcess(this.agent, "SIGKILL");
  }

  startAgent(): void {
    this.agent = startAgentProcess({ stateDir: this.agentStateDir, heartbeatIntervalMs: 1000 });
  }

  /** Polls `probe` every 250 ms until it answers true (throws after `timeoutMs`). */
  /** Deploys `version` of the application and waits until that deployment is done (its error thrown). */
  async deployDone(app: FaultApp, version: string, timeoutMs = 120_000): Promise<string> {
    const deploymentId = await this.deploy(app, version);
    await this.until(
      "the application deployed",
      async () => {
        const [row] = await this.deployments(app);
        if (row?.deploymentId === deploymentId && row.status === "error")
          throw new Error(row.errorMessage ?? "");
        return row?.deploymentId === deploymentId && row.status === "done";
      },
      timeoutMs,
    );
    return deploymentId;
  }

  async until(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      try {
        if (await probe()) return;
      } catch (error) {
        last = error;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(
      `timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ""}`,
    );
  }

  /** The deployments of an application, newest first. */
  async deployments(
    app: FaultApp,
  ): Promise<Array<{ deploymentId: string; status: string; errorMessage: string | null }>> {
    return this.api.queryOk("deployment.all", { applicationId: app.applicationId });
  }

  /** True once no deployment of any application is idle or running. */
  async settled(): Promise<boolean> {
    for (const app of this.apps) {
      const deployments = await this.deployments(app);
      if (deployments.some((deployment) => deployment.status === "idle" || deployment.status === "running"))
        return false;
    }
    return true;
  }

  /** What the app's service carries and serves now: its deployment label and its page. */
  async observed(app: FaultApp): Promise<{ deploymentId: string; body: string }> {
    const label = await dockerCli([
      "service",
      "inspect",
      app.appName,
      "--format",
      '{{index .Spec.Labels "platform.deployment-id"}}',
    ]).catch(() => "");
    let body = "";
    try {
      const response = await fetch(`http://127.0.0.1:${app.port}/`, { signal: AbortSignal.timeout(2000) });
      body = (await response.text()).trim();
    } catch {}
    return { deploymentId: label.trim(), body };
  }

  processOutput(): string {
    return [
      `--- control plane ---\n${this.controlPlane ? tail(this.controlPlane.output) : ""}`,
      `--- agent ---\n${this.agent ? this.agent.logLines.slice(-40).join("\n") : ""}`,
    ].join("\n");
  }

  async close(): Promise<void> {
    for (const cleanup of this.cleanups.reverse()) await cleanup().catch(() => {});
  }
}

export interface DeployFault {
  name: string;
  /** Injects the fault and undoes it; resolves once it is undone. */
  run(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The faults injected into deploys (tests and bench); `lastStopMs` is how long a SIGTERM stop took. */
export function deployFaults(rig: DeployFaultRig): DeployFault[] {
  return [
    {
      name: "agent kill -9, restarted after 2 s",
      run: async () => {
        await rig.killAgent();
        await pause(2000);
        rig.startAgent();
      },
    },
    {
      name: "NATS stopped for 3 s",
      run: async () => {
        await rig.nats.server.pause();
        await pause(3000);
        await rig.nats.server.resume();
      },
    },
    {
      name: "control plane kill -9, restarted",
      run: async () => {
        await rig.controlPlane.stop("SIGKILL");
        await rig.controlPlane.start();
      },
    },
    {
      name: "control plane SIGTERM, restarted",
      run: async () => {
        rig.lastStopMs = await rig.controlPlane.stop("SIGTERM");
        rig.lastStopExitCode = rig.controlPlane.exitCode;
        await rig.controlPlane.start();
      },
    },
  ];
}
