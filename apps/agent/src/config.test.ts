/** The daemon's configuration: file, environment overrides, defaults and clear errors. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadAgentConfig } from "./config.ts";

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});

async function stateWith(config: unknown): Promise<string> {
  directory = await mkdtemp(path.join(tmpdir(), "agent-config-"));
  await writeFile(path.join(directory, "agent.json"), JSON.stringify(config));
  return directory;
}

describe("loadAgentConfig", () => {
  it("reads the state directory's agent.json and fills defaults", async () => {
    const stateDir = await stateWith({
      serverId: "srv-1",
      natsUrl: "nats://cp:4222",
      credsFile: "agent.creds",
    });
    expect(await loadAgentConfig({ AGENT_STATE_DIR: stateDir })).toEqual({
      serverId: "srv-1",
      natsUrl: "nats://cp:4222",
      credsFile: path.join(stateDir, "agent.creds"),
      dockerSocket: "/var/run/docker.sock",
      mainDirectory: "/etc/platform",
      hostRoot: "/",
      heartbeatIntervalMs: 10_000,
      platformNetwork: "platform-network",
      nvidiaSmi: "nvidia-smi",
      dockerDaemonConfig: "/etc/docker/daemon.json",
      nvidiaRuntimeConfig: "/etc/nvidia-container-runtime/config.toml",
      stateDir,
      configFile: path.join(stateDir, "agent.json"),
    });
  });

  it("lets the environment override the file", async () => {
    const stateDir = await stateWith({ serverId: "srv-1", natsUrl: "nats://cp:4222" });
    const config = await loadAgentConfig({
      AGENT_STATE_DIR: stateDir,
      AGENT_SERVER_ID: "srv-2",
      NATS_URL: "nats://127.0.0.1:4222",
      AGENT_NATS_CREDS: "/secrets/agent.creds",
      AGENT_DOCKER_SOCKET: "/run/user/docker.sock",
      AGENT_MAIN_DIR: "/srv/platform",
      AGENT_HEARTBEAT_INTERVAL_MS: "2500",
      AGENT_PLATFORM_NETWORK: "platform_stack-network",
      AGENT_NVIDIA_SMI: "/opt/nvidia/bin/nvidia-smi",
      AGENT_DOCKER_DAEMON_CONFIG: "/srv/docker/daemon.json",
      AGENT_NVIDIA_RUNTIME_CONFIG: "/srv/nvidia/config.toml",
    });
    expect(config).toMatchObject({
      serverId: "srv-2",
      natsUrl: "nats://127.0.0.1:4222",
      credsFile: "/secrets/agent.creds",
      dockerSocket: "/run/user/docker.sock",
      mainDirectory: "/srv/platform",
      heartbeatIntervalMs: 2500,
      platformNetwork: "platform_stack-network",
      nvidiaSmi: "/opt/nvidia/bin/nvidia-smi",
      dockerDaemonConfig: "/srv/docker/daemon.json",
      nvidiaRuntimeConfig: "/srv/nvidia/config.toml",
    });
  });

  it("works from the environment alone", async () => {
    const config = await loadAgentConfig({
      AGENT_CONFIG_FILE: "/nonexistent/agent.json",
      AGENT_SERVER_ID: "srv-3",
      NATS_URL: "nats://127.0.0.1:4222",
    });
    expect(config).toMatchObject({ serverId: "srv-3", credsFile: undefined });
  });

  it("names the bad setting and its variable", async () => {
    await expect(
      loadAgentConfig({
        AGENT_CONFIG_FILE: "/nonexistent/agent.json",
        AGENT_SERVER_ID: "bad.id",
        NATS_URL: "http://x",
        AGENT_HEARTBEAT_INTERVAL_MS: "soon",
      }),
    ).rejects.toThrow(
      /serverId \(AGENT_SERVER_ID\): .*; natsUrl \(NATS_URL\): .*; heartbeatIntervalMs \(AGENT_HEARTBEAT_INTERVAL_MS\)/,
    );
  });

  it("refuses a config file that is not a JSON object", async () => {
    const stateDir = await stateWith([1, 2]);
    await expect(loadAgentConfig({ AGENT_STATE_DIR: stateDir })).rejects.toThrow(/is not a JSON object/);
  });
});
