/**
 * Test support for the agent link: server rows made straight in the database, the control
 * plane served on a real 127.0.0.1 port (agents enroll over HTTP), and the agent daemon
 * (apps/agent/src/main.ts) as a child process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { serve } from "@hono/node-server";
import { AGENT_ENTRY } from "../../../../../scripts/built-entries.mjs";
import { newId } from "../../crypto/ids.ts";
import type { TestPlatform } from "../../testing/harness.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../../../..");

/** Inserts an inactive server of `organizationId` and returns its id. */
export async function insertTestServer(platform: TestPlatform, organizationId: string, name = "test-server") {
  const serverId = newId();
  await platform.ctx.db
    .insertInto("servers")
    .values({ serverId, organizationId, name, ipAddress: "127.0.0.1", username: "root" })
    .execute();
  return serverId;
}

export async function serverRow(platform: TestPlatform, serverId: string) {
  return platform.ctx.db
    .selectFrom("servers")
    .selectAll()
    .where("serverId", "=", serverId)
    .executeTakeFirstOrThrow();
}

/** Serves the platform's app on a spare port of 127.0.0.1. */
export async function listen(platform: TestPlatform): Promise<{ url: string; close(): Promise<void> }> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: platform.app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
      resolve(started),
    );
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface AgentProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  logLines: string[];
}

/** Runs the agent daemon with its state in `stateDir`, enrolling first when a token is given. */
export function startAgentProcess(options: {
  stateDir: string;
  controlPlaneUrl?: string;
  enrollmentToken?: string;
  heartbeatIntervalMs?: number;
}): AgentProcess {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    AGENT_STATE_DIR: options.stateDir,
    AGENT_MAIN_DIR: options.stateDir,
    AGENT_HEARTBEAT_INTERVAL_MS: String(options.heartbeatIntervalMs ?? 200),
  };
  if (options.controlPlaneUrl) env.AGENT_CONTROL_PLANE_URL = options.controlPlaneUrl;
  if (options.enrollmentToken) env.AGENT_ENROLLMENT_TOKEN = options.enrollmentToken;
  const child = spawn(process.execPath, [AGENT_ENTRY], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logLines: string[] = [];
  child.stdout?.on("data", (chunk) => logLines.push(...String(chunk).split("\n").filter(Boolean)));
  child.stderr?.on("data", (chunk) => logLines.push(`STDERR ${chunk}`));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, logLines };
}

/** Kills the daemon with `signal` (SIGKILL: no goodbye, like a crash) and waits for it to exit. */
export async function killAgentProcess(agent: AgentProcess | undefined, signal: NodeJS.Signals = "SIGKILL") {
  if (!agent || agent.child.exitCode !== null) return;
  agent.child.kill(signal);
  await agent.exited;
}
