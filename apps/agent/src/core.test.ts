/**
 * AgentCore without a Docker Engine: names are refused before Docker is called, an unreachable
 * engine is UNAVAILABLE, and misaddressed or expired commands are refused.
 */
import path from "node:path";
import {
  AGENT_VERSION,
  asReceived,
  type CommandInput,
  decodeCommandRequest,
  encodeCommandRequest,
  type Init,
  type ListContainersCommand,
  makeCommandRequest,
} from "@platform/agent-protocol";
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { staticProbe } from "./audit/services.ts";
import { AgentCore } from "./core.ts";

/** A stand-in for dockerode that records every property touched. */
function recordingDocker(): { docker: Docker; calls: string[] } {
  const calls: string[] = [];
  const docker = new Proxy(
    {},
    {
      get(_target, property) {
        calls.push(String(property));
        return () => {
          throw new Error(`docker.${String(property)} must not be called`);
        };
      },
    },
  ) as Docker;
  return { docker, calls };
}

const serverId = "core-test";
const badIds = ["x; rm -rf /", "../x", "..", "a/b", "$(reboot)", "", "name with space", "x\n"];

describe("AgentCore", () => {
  it("answers ping with its version and hostname", async () => {
    const core = new AgentCore({ serverId, docker: recordingDocker().docker, hostname: "host-1" });
    const reply = await core.handle(
      asReceived(makeCommandRequest(serverId, { command: "ping", ping: {} }, 1000)),
    );
    expect(reply).toMatchObject({
      result: "ping",
      ping: { agentVersion: AGENT_VERSION, hostname: "host-1" },
    });
  });

  it("refuses a command missing a part the wire leaves optional before Docker is called", async () => {
    const { docker, calls } = recordingDocker();
    const core = new AgentCore({ serverId, docker });
    const owner = { organizationId: "org-1", resource: "application:app-1" };
    // No action is ACTION_UNSPECIFIED on the wire, no auth is an absent message: none may be
    // taken for a reload or a removal, or reach Docker as an undefined value.
    const commands: [CommandInput, RegExp][] = [
      [{ command: "serviceAction", serviceAction: { serviceName: "web", owner } }, /action/],
      [{ command: "registryLogin", registryLogin: {} }, /auth is required/],
      [{ command: "stackAction", stackAction: { appName: "shop", composeType: "stack", owner } }, /action/],
    ];
    for (const [command, message] of commands) {
      const reply = await core.handle(asReceived(makeCommandRequest(serverId, command, 1000)));
      expect(reply, command.command).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
      expect(reply.result === "error" && reply.error.message).toMatch(message);
    }
    expect(calls).toEqual([]);
  });

  it("answers a command of a newer sender (an unknown oneof member) UNIMPLEMENTED", async () => {
    const { docker, calls } = recordingDocker();
    const core = new AgentCore({ serverId, docker });
    const header = encodeCommandRequest({
      requestId: "r-new",
      serverId,
      deadlineUnixMs: 0,
      command: "unknown",
    });
    // Field 2000 of CommandRequest (tag 16002: 0x82 0x7d), an empty message: no command has that
    // number (commands are numbered below 200; 120, used here before, is a command now).
    const request = decodeCommandRequest(new Uint8Array([...header, 0x82, 0x7d, 0x00]));
    expect(await core.handle(request)).toMatchObject({
      requestId: "r-new",
      result: "error",
      error: { code: "UNIMPLEMENTED" },
    });
    expect(calls).toEqual([]);
  });

  it("refuses bad container ids before Docker is called", async () => {
    const { docker, calls } = recordingDocker();
    const core = new AgentCore({ serverId, docker });
    const scope = { organizationId: "org-1", includeUnmanaged: true };
    for (const containerId of badIds) {
      const commands: CommandInput[] = [
        { command: "restartContainer", restartContainer: { containerId, scope } },
        { command: "inspectContainer", inspectContainer: { containerId, scope } },
      ];
      for (const command of commands) {
        const reply = await core.handle(asReceived(makeCommandRequest(serverId, command, 1000)));
        expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
      }
    }
    expect(calls).toEqual([]);
  });

  it("refuses bad names in list filters before Docker is called", async () => {
    const { docker, calls } = recordingDocker();
    const core = new AgentCore({ serverId, docker });
    const filters: Init<ListContainersCommand>[] = [
      { nameMatch: "x; rm -rf /" },
      { swarmServiceName: "../x" },
      { stackNamespace: "a b" },
      { composeProject: "$(id)" },
      { labels: { "bad key": "v" } },
      { labels: { ok: "bad=value" } },
    ];
    for (const listContainers of filters) {
      const reply = await core.handle(
        asReceived(makeCommandRequest(serverId, { command: "listContainers", listContainers }, 1000)),
      );
      expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    }
    expect(calls).toEqual([]);
  });

  it("answers UNAVAILABLE when the Docker Engine is not reachable", async () => {
    const core = new AgentCore({ serverId, dockerSocket: "/nonexistent/docker.sock" });
    const reply = await core.handle(
      asReceived(makeCommandRequest(serverId, { command: "listContainers", listContainers: {} }, 5000)),
    );
    expect(reply).toEqual({
      requestId: expect.any(String),
      result: "error",
      error: {
        code: "UNAVAILABLE",
        message: "the Docker Engine is not reachable at /nonexistent/docker.sock",
      },
    });
  });

  it("validates a server without Docker as having no Docker, Swarm or network", async () => {
    const core = new AgentCore({
      serverId,
      dockerSocket: "/nonexistent/docker.sock",
      mainDirectory: "/nonexistent/platform",
      toolSearchPath: "/nonexistent",
    });
    const reply = await core.handle(
      asReceived(makeCommandRequest(serverId, { command: "validateServer", validateServer: {} }, 5000)),
    );
    const absent = { enabled: false };
    expect(reply).toMatchObject({
      result: "validateServer",
      validateServer: {
        docker: absent,
        rclone: absent,
        nixpacks: absent,
        buildpacks: absent,
        railpack: absent,
        isPlatformNetworkInstalled: false,
        isSwarmInstalled: false,
        isMainDirectoryInstalled: false,
      },
    });
  });

  it("runs the security audit on its host root", async () => {
    const core = new AgentCore({
      serverId,
      docker: recordingDocker().docker,
      hostRoot: path.join(import.meta.dirname, "audit/fixtures/hardened"),
      serviceProbe: staticProbe({ active: ["ssh"] }),
    });
    const reply = await core.handle(
      asReceived(makeCommandRequest(serverId, { command: "securityAudit", securityAudit: {} }, 5000)),
    );
    expect(reply).toMatchObject({
      result: "securityAudit",
      securityAudit: { ssh: { enabled: true, permitRootLogin: "no" }, ufw: { active: true } },
    });
  });

  it("refuses commands for another server and commands past their deadline", async () => {
    const { docker, calls } = recordingDocker();
    const core = new AgentCore({ serverId, docker });
    const other = await core.handle(
      asReceived(makeCommandRequest("other", { command: "ping", ping: {} }, 1000)),
    );
    expect(other).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    const late = await core.handle(
      asReceived(
        makeCommandRequest(
          serverId,
          { command: "listContainers", listContainers: {} },
          1000,
          Date.now() - 2000,
        ),
      ),
    );
    expect(late).toMatchObject({ result: "error", error: { code: "DEADLINE_EXCEEDED" } });
    expect(calls).toEqual([]);
  });

  it("heartbeat says when Docker is not reachable", async () => {
    const core = new AgentCore({ serverId, dockerSocket: "/nonexistent/docker.sock", hostname: "h" });
    expect(await core.heartbeat()).toMatchObject({
      serverId,
      hostname: "h",
      agentVersion: AGENT_VERSION,
      dockerReachable: false,
      dockerVersion: "",
      swarmState: "",
    });
  });
});
