/**
 * The proxy's file commands over a real nats-server (the way a remote server's agent gets
 * them): the largest file the agent accepts, in multi-byte UTF-8, travels both ways whole, and
 * a refused name comes back as INVALID_ARGUMENT.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { AgentClient, connect, NatsAgentTransport, type NatsConnection } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningAgent, startAgent } from "../agent.ts";
import { TestNatsServer } from "../testing/nats-server.ts";
import { MAX_PROXY_FILE_BYTES } from "./files.ts";

const serverId = `proxy-nats-${process.pid}`;
let nats: TestNatsServer;
let agentConnection: NatsConnection;
let controlPlaneConnection: NatsConnection;
let agent: RunningAgent;
let client: AgentClient;
let mainDirectory: string;

beforeAll(async () => {
  nats = await TestNatsServer.start("");
  mainDirectory = await mkdtemp(path.join(tmpdir(), "proxy-nats-main-"));
  agentConnection = await connect({ servers: nats.url });
  controlPlaneConnection = await connect({ servers: nats.url });
  agent = await startAgent({
    transport: new NatsAgentTransport(agentConnection),
    serverId,
    mainDirectory,
    dockerSocket: "/nonexistent/docker.sock",
    heartbeatIntervalMs: 60_000,
  });
  client = new AgentClient(new NatsAgentTransport(controlPlaneConnection), 10_000);
});

afterAll(async () => {
  await agent?.stop();
  await agentConnection?.close();
  await controlPlaneConnection?.close();
  await nats?.stop();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

describe("proxy files over NATS", () => {
  it("writes and reads back the largest accepted file whole", async () => {
    const holder = { owner: { organizationId: "org-nats", resource: "application:cafe" } };
    const line = "# certificate for café.example — ✓\n";
    const lineBytes = Buffer.byteLength(line);
    let content = line.repeat(Math.floor(MAX_PROXY_FILE_BYTES / lineBytes));
    content += "x".repeat(MAX_PROXY_FILE_BYTES - Buffer.byteLength(content));
    expect(Buffer.byteLength(content)).toBe(MAX_PROXY_FILE_BYTES);

    const written = await client.writeProxyFile(serverId, "certificate", "cafe.pem", content, holder);
    expect(written.path).toBe(path.join(mainDirectory, "traefik/dynamic/certificates/cafe.pem"));
    expect(await readFile(written.path, "utf8")).toBe(content);
    expect(await client.readProxyFile(serverId, "certificate", "cafe.pem", holder)).toEqual({
      exists: true,
      content,
    });
    expect(await client.removeProxyFile(serverId, "certificate", "cafe.pem", holder)).toEqual({
      removed: true,
    });
  });

  it("answers INVALID_ARGUMENT for a path instead of a file name", async () => {
    await expect(
      client.writeProxyFile(serverId, "dynamic", "../../etc/x.yml", "http: {}"),
    ).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await expect(client.readProxyFile(serverId, "dynamic", "../../etc/passwd")).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });
});
