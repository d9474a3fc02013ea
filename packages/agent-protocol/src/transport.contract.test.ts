/**
 * Contract tests of AgentTransport: the same suite runs over the NATS transport (against the
 * real NATS server on 127.0.0.1:4222) and over the in-memory transport, so the control plane
 * can rely on the same behaviour with or without NATS_URL.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { InvalidNameError } from "@platform/names";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentClient, makeCommandRequest } from "./client.ts";
import { encodeCommandRequest, encodeHeartbeat } from "./codec.ts";
import { AgentCommandError, AgentTimeoutError, AgentUnavailableError } from "./errors.ts";
import { InMemoryAgentTransport } from "./memory-transport.ts";
import type { AgentEvent, CommandReply, CommandRequest, Heartbeat, LogChunk } from "./messages.ts";
import { NatsAgentTransport } from "./nats-transport.ts";
import { connectTestNats, uniqueServerId } from "./testing/nats.ts";
import type { AgentTransport, CommandHandler } from "./transport.ts";

let connection: NatsConnection;

beforeAll(async () => {
  connection = await connectTestNats();
});

afterAll(async () => {
  await connection?.close();
});

const transports: Array<[string, () => AgentTransport]> = [
  ["nats", () => new NatsAgentTransport(connection)],
  ["in-memory", () => new InMemoryAgentTransport()],
];

const pingHandler: CommandHandler = async (request) => ({
  requestId: request.requestId,
  result: "ping",
  ping: { agentVersion: "test", hostname: "test-host", timeUnixMs: Date.now() },
});

function nextMessage<T>(subscribe: (handler: (message: T) => void) => { unsubscribe(): void }): Promise<T> {
  return new Promise((resolve) => {
    const subscription = subscribe((message) => {
      subscription.unsubscribe();
      resolve(message);
    });
  });
}

describe.each(transports)("AgentTransport contract over %s", (_name, makeTransport) => {
  let transport: AgentTransport;
  let client: AgentClient;

  beforeAll(() => {
    transport = makeTransport();
    client = new AgentClient(transport, 2000);
  });

  afterAll(async () => {
    await transport.close();
  });

  async function serve(serverId: string, handler: CommandHandler) {
    const subscription = transport.serveCommands(serverId, handler);
    await transport.flush();
    return subscription;
  }

  it("carries a command to the agent of its server and the reply back", async () => {
    const serverId = uniqueServerId();
    const seen: CommandRequest[] = [];
    await serve(serverId, async (request) => {
      seen.push(request);
      return pingHandler(request);
    });
    const result = await client.ping(serverId);
    expect(result).toMatchObject({ agentVersion: "test", hostname: "test-host" });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ serverId, command: "ping", ping: {} });
    expect(seen[0]!.deadlineUnixMs).toBeGreaterThan(Date.now());
  });

  it("delivers container commands with their arguments", async () => {
    const serverId = uniqueServerId();
    await serve(serverId, async (request) => {
      if (request.command !== "restartContainer") throw new Error("unexpected");
      return {
        requestId: request.requestId,
        result: "restartContainer",
        restartContainer: { id: request.restartContainer.containerId, startedAt: "now" },
      };
    });
    const scope = { organizationId: "org-1", includeUnmanaged: false };
    await expect(
      client.restartContainer(serverId, "web-1", scope, { stopTimeoutSeconds: 3 }),
    ).resolves.toEqual({
      id: "web-1",
      startedAt: "now",
    });
  });

  it("turns an error reply into AgentCommandError with its code", async () => {
    const serverId = uniqueServerId();
    await serve(serverId, async (request) => ({
      requestId: request.requestId,
      result: "error",
      error: { code: "NOT_FOUND", message: "no such container: web-9" },
    }));
    const failure = client.inspectContainer(serverId, "web-9", {
      organizationId: "org-1",
      includeUnmanaged: true,
    });
    await expect(failure).rejects.toBeInstanceOf(AgentCommandError);
    await expect(failure).rejects.toMatchObject({
      code: "NOT_FOUND",
      agentMessage: "no such container: web-9",
    });
  });

  it("refuses a request whose deadline has passed, without running it", async () => {
    const serverId = uniqueServerId();
    const handler = vi.fn(pingHandler);
    await serve(serverId, handler);
    const request = makeCommandRequest(serverId, { command: "ping", ping: {} }, 1000, Date.now() - 5000);
    const reply = await transport.request(serverId, request, 2000);
    expect(reply).toMatchObject({
      requestId: request.requestId,
      result: "error",
      error: { code: "DEADLINE_EXCEEDED" },
    });
    expect(handler).not.toHaveBeenCalled();
  });

  it("refuses a command addressed to another server", async () => {
    const serverId = uniqueServerId();
    await serve(serverId, pingHandler);
    const request = makeCommandRequest("someone-else", { command: "ping", ping: {} }, 1000);
    const reply = await transport.request(serverId, request, 2000);
    expect(reply).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
  });

  it("answers a command the agent does not know with UNIMPLEMENTED", async () => {
    const serverId = uniqueServerId();
    await serve(serverId, pingHandler);
    const request: CommandRequest = {
      requestId: "r-unknown",
      serverId,
      deadlineUnixMs: 0,
      command: "unknown",
    };
    const reply = await transport.request(serverId, request, 2000);
    expect(reply).toMatchObject({
      requestId: "r-unknown",
      result: "error",
      error: { code: "UNIMPLEMENTED" },
    });
  });

  it("answers INTERNAL when the handler throws", async () => {
    const serverId = uniqueServerId();
    await serve(serverId, async () => {
      throw new Error("boom");
    });
    const reply = await transport.request(
      serverId,
      makeCommandRequest(serverId, { command: "ping", ping: {} }, 1000),
      2000,
    );
    expect(reply).toMatchObject({
      result: "error",
      error: { code: "INTERNAL", message: "ping failed: boom" },
    });
  });

  it("rejects with AgentUnavailableError when no agent serves the server", async () => {
    const serverId = uniqueServerId();
    await expect(client.ping(serverId)).rejects.toThrow(AgentUnavailableError);
    await expect(client.ping(serverId)).rejects.toThrow(`no agent of server ${serverId} is connected`);
  });

  it("rejects with a clear AgentTimeoutError when the agent does not reply in time", async () => {
    const serverId = uniqueServerId();
    await serve(serverId, () => new Promise<CommandReply>(() => {}));
    const started = Date.now();
    const failure = client.validateServer(serverId, 300);
    await expect(failure).rejects.toBeInstanceOf(AgentTimeoutError);
    await expect(failure).rejects.toThrow(
      new RegExp(
        `agent of server ${serverId} did not reply to validateServer \\(request [0-9a-f-]+\\) within 300 ms`,
      ),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("stops serving after unsubscribe", async () => {
    const serverId = uniqueServerId();
    const subscription = await serve(serverId, pingHandler);
    await client.ping(serverId);
    subscription.unsubscribe();
    await transport.flush();
    await expect(client.ping(serverId)).rejects.toThrow(AgentUnavailableError);
  });

  it("delivers heartbeats to subscribers of that server and of all servers", async () => {
    const serverId = uniqueServerId();
    const other = uniqueServerId();
    const forServer = nextMessage<Heartbeat>((handler) => transport.subscribeHeartbeats(handler, serverId));
    const forAll: Heartbeat[] = [];
    const allSubscription = transport.subscribeHeartbeats((heartbeat) => {
      if (heartbeat.serverId === serverId || heartbeat.serverId === other) forAll.push(heartbeat);
    });
    await transport.flush();
    const heartbeat: Heartbeat = {
      serverId,
      agentVersion: "1.0.0",
      hostname: "h",
      sentAtUnixMs: Date.now(),
      dockerReachable: true,
      dockerVersion: "27.0.0",
      swarmState: "active",
    };
    transport.publishHeartbeat({ ...heartbeat, serverId: other });
    transport.publishHeartbeat(heartbeat);
    expect(await forServer).toEqual(heartbeat);
    await vi.waitFor(() => expect(forAll.map((h) => h.serverId).sort()).toEqual([serverId, other].sort()));
    allSubscription.unsubscribe();
  });

  it("delivers events and log chunks", async () => {
    const serverId = uniqueServerId();
    const nextEvent = nextMessage<AgentEvent>((handler) => transport.subscribeEvents(handler, serverId));
    const chunks: LogChunk[] = [];
    const logs = transport.subscribeLogs(serverId, "build-1", (chunk) => chunks.push(chunk));
    await transport.flush();
    const event: AgentEvent = {
      serverId,
      kind: "container.die",
      timeUnixMs: Date.now(),
      attributes: { id: "c1" },
    };
    transport.publishEvent(event);
    expect(await nextEvent).toEqual(event);
    for (let seq = 0; seq < 3; seq++) {
      transport.publishLogChunk(serverId, {
        streamId: "build-1",
        seq,
        data: new TextEncoder().encode(`line ${seq}\n`),
        final: seq === 2,
      });
    }
    await vi.waitFor(() => expect(chunks).toHaveLength(3));
    expect(chunks.map((chunk) => [chunk.seq, new TextDecoder().decode(chunk.data), chunk.final])).toEqual([
      [0, "line 0\n", false],
      [1, "line 1\n", false],
      [2, "line 2\n", true],
    ]);
    logs.unsubscribe();
  });

  it("refuses server ids that are not subject-safe before sending anything", async () => {
    expect(() => transport.serveCommands("a.b", pingHandler)).toThrow(InvalidNameError);
    await expect(client.ping("agent.>")).rejects.toThrow(InvalidNameError);
    await expect(
      transport.request("*", makeCommandRequest("*", { command: "ping", ping: {} }, 100), 100),
    ).rejects.toThrow(InvalidNameError);
  });
});

describe("NATS transport specifics", () => {
  it("drops a heartbeat whose body claims another server than its subject", async () => {
    const errors: Error[] = [];
    const transport = new NatsAgentTransport(connection, { onError: (error) => errors.push(error) });
    const serverId = uniqueServerId();
    const received: Heartbeat[] = [];
    transport.subscribeHeartbeats((heartbeat) => received.push(heartbeat), serverId);
    await transport.flush();
    const spoofed = encodeHeartbeat({
      serverId: "victim",
      agentVersion: "x",
      hostname: "x",
      sentAtUnixMs: 0,
      dockerReachable: false,
      dockerVersion: "",
      swarmState: "",
    });
    connection.publish(`agent.${serverId}.heartbeat`, spoofed);
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(received).toEqual([]);
    await transport.close();
  });

  it("answers garbage on the command subject with INVALID_ARGUMENT", async () => {
    const transport = new NatsAgentTransport(connection);
    const serverId = uniqueServerId();
    transport.serveCommands(serverId, pingHandler);
    await transport.flush();
    const reply = await connection.request(`agent.${serverId}.cmd`, new Uint8Array([0xff, 0xff, 0xff]), {
      timeout: 2000,
    });
    const { decodeCommandReply } = await import("./codec.ts");
    expect(decodeCommandReply(reply.data)).toMatchObject({
      result: "error",
      error: { code: "INVALID_ARGUMENT" },
    });
    // A well-formed request still works on the same subscription.
    const ok = await connection.request(
      `agent.${serverId}.cmd`,
      encodeCommandRequest(makeCommandRequest(serverId, { command: "ping", ping: {} }, 1000)),
      { timeout: 2000 },
    );
    expect(decodeCommandReply(ok.data).result).toBe("ping");
    await transport.close();
  });
});
