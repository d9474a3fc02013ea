/**
 * startAgent over the in-memory transport, as the control plane runs the agent of its own
 * machine: commands through AgentClient, heartbeats at start and on the timer, clean stop.
 */
import {
  AGENT_VERSION,
  AgentClient,
  AgentUnavailableError,
  type Heartbeat,
  InMemoryAgentTransport,
} from "@platform/agent-protocol";
import { describe, expect, it, vi } from "vitest";
import { jitteredInterval, startAgent } from "./agent.ts";

describe("startAgent (in-memory transport)", () => {
  it("serves commands and publishes heartbeats until stopped", async () => {
    const transport = new InMemoryAgentTransport();
    const heartbeats: Heartbeat[] = [];
    transport.subscribeHeartbeats((heartbeat) => heartbeats.push(heartbeat), "local");
    const agent = await startAgent({
      transport,
      serverId: "local",
      hostname: "control-plane-host",
      dockerSocket: "/nonexistent/docker.sock",
      heartbeatIntervalMs: 100,
    });
    const client = new AgentClient(transport, 5000);
    expect(await client.ping("local")).toMatchObject({
      agentVersion: AGENT_VERSION,
      hostname: "control-plane-host",
    });
    await expect(client.listContainers("local")).rejects.toMatchObject({ code: "UNAVAILABLE" });

    await vi.waitFor(() => expect(heartbeats.length).toBeGreaterThanOrEqual(3), { timeout: 2000 });
    expect(heartbeats[0]).toMatchObject({
      serverId: "local",
      agentVersion: AGENT_VERSION,
      hostname: "control-plane-host",
      dockerReachable: false,
    });

    await agent.stop();
    const count = heartbeats.length;
    await expect(client.ping("local")).rejects.toThrow(AgentUnavailableError);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heartbeats.length).toBe(count);
  });

  it("spreads heartbeats by ±10%", () => {
    expect(jitteredInterval(10_000, () => 0)).toBe(9000);
    expect(jitteredInterval(10_000, () => 0.5)).toBe(10_000);
    expect(jitteredInterval(10_000, () => 0.999999)).toBe(11_000);
  });
});
