/**
 * End-to-end support for tests with agent processes (tests/e2e/remote-server.test.ts,
 * build-server.test.ts): a private NATS (JetStream, decentralized JWT auth), the control plane as
 * its own process on it, and agent processes each enrolled for a server through the public API
 * (server.create, server.enrollmentCommand). The steps of such a test build on each other:
 * after a failure the rest are skipped, not failed again, and the processes' output is printed.
 * close() runs every teardown step, whatever failed before it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeEach } from "vitest";
import {
  type AgentProcess,
  killAgentProcess,
  startAgentProcess,
} from "../../apps/control-plane/src/agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../../apps/control-plane/src/agents/testing/nats-jwt.ts";
import { ApiClient, type ControlPlaneProcess, startControlPlaneProcess, tail } from "./control-plane.ts";

export class AgentProcesses {
  nats: JwtNats | undefined;
  controlPlane: ControlPlaneProcess | undefined;
  /** The public API of the control plane (set by start; a test sets its token). */
  api!: ApiClient;
  /** The enrolled agents by the name they were enrolled with. */
  readonly agents = new Map<string, AgentProcess>();
  private readonly directories: string[] = [];

  /** Starts NATS and the control plane on it, with `env` added to the control plane's. */
  async start(env: Record<string, string> = {}): Promise<void> {
    this.nats = await startJwtNats({ jetstream: true });
    this.controlPlane = await startControlPlaneProcess({ ...this.nats.env, ...env });
    this.api = new ApiClient(this.controlPlane.url);
  }

  /** Registers the instance's owner (auth.register): the API client acts as them from then on. */
  async registerOwner(): Promise<void> {
    const session = await this.api.mutateOk("auth.register", {
      email: "owner@example.com",
      password: "correct-horse-battery",
      name: "Owner",
    });
    this.api.token = session.token;
  }

  /** A fresh directory, removed at close. */
  async temporaryDirectory(prefix: string): Promise<string> {
    const directory = await mkdtemp(path.join(tmpdir(), prefix));
    this.directories.push(directory);
    return directory;
  }

  /**
   * Creates the server `input.name` (127.0.0.1, as root) and starts an agent process enrolled
   * with its enrollment token; answers the created server and the enrollment.
   */
  async enroll(input: { name: string; serverType?: "build" | "deploy" }) {
    const server = await this.api.mutateOk("server.create", {
      ipAddress: "127.0.0.1",
      port: 22,
      username: "root",
      ...input,
    });
    const enrollment = await this.api.mutateOk("server.enrollmentCommand", { serverId: server.serverId });
    this.agents.set(
      input.name,
      startAgentProcess({
        stateDir: await this.temporaryDirectory(`e2e-${input.name}-agent-`),
        controlPlaneUrl: this.controlPlane!.url,
        enrollmentToken: enrollment.token,
      }),
    );
    return { server, enrollment };
  }

  /** The last lines of the control plane's and each agent's output, for failure messages. */
  output(): string {
    return [
      `--- control plane (last lines) ---\n${this.controlPlane ? tail(this.controlPlane.output) : "(not started)"}`,
      ...[...this.agents].map(
        ([name, agent]) => `--- ${name} agent (last lines) ---\n${agent.logLines.slice(-60).join("\n")}`,
      ),
    ].join("\n");
  }

  /** Registers a beforeEach: after a failed step the rest are skipped, and the output printed. */
  stepsBuildOnEachOther(): void {
    let failedStep: string | undefined;
    beforeEach(({ task, onTestFailed, skip }) => {
      if (failedStep) skip(`an earlier step failed: ${failedStep}`);
      onTestFailed(() => {
        failedStep = task.name;
        console.error(this.output());
      });
    });
  }

  /**
   * Kills the agents, runs the test's own `steps` (its services, images, ...), stops the control
   * plane and NATS, removes the directories: every step runs, whatever failed before it.
   */
  async close(steps: Array<() => Promise<unknown>> = []): Promise<void> {
    const all: Array<() => Promise<unknown>> = [
      ...[...this.agents.values()].map((agent) => () => killAgentProcess(agent)),
      ...steps,
      async () => this.controlPlane?.stop(),
      async () => this.nats?.stop(),
      ...this.directories.map((directory) => () => rm(directory, { recursive: true, force: true })),
    ];
    for (const step of all) await step().catch(() => {});
  }
}
