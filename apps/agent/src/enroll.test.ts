/**
 * Enrollment against a local stand-in of the control plane's endpoint: the agent sends only its
 * public key, stores the JWT and seed as a 0600 .creds file plus its config, does not enroll
 * again when restarted, and reports refusals without leaking the token.
 */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseCreds } from "@nats-io/jwt";
import { createUser, fromSeed } from "@nats-io/nkeys";
import { AGENT_VERSION } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgentConfig } from "./config.ts";
import { enrollAgent } from "./enroll.ts";
import { startEnrollServer, type TestEnrollServer } from "./testing/enroll-server.ts";
import { createNatsAuthority, type TestNatsAuthority } from "./testing/nats-auth.ts";

const token = "enroll-token-0123456789abcdef";
let authority: TestNatsAuthority;
let server: TestEnrollServer;
const scratch: string[] = [];

async function stateDir(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), "agent-state-"));
  scratch.push(directory);
  return path.join(directory, "agent");
}

beforeAll(async () => {
  authority = await createNatsAuthority();
  server = await startEnrollServer({
    token,
    serverId: "srv-enrolled",
    natsUrl: "nats://127.0.0.1:4222",
    signJwt: (serverId, publicKey) => authority.agentJwt(serverId, publicKey),
  });
});

afterAll(async () => {
  await server?.close();
  for (const directory of scratch) await rm(directory, { recursive: true, force: true });
});

describe("enrollAgent", () => {
  it("enrolls with its public key and stores a 0600 .creds file and its config", async () => {
    const directory = await stateDir();
    const before = server.requests.length;
    const result = await enrollAgent({
      controlPlaneUrl: `${server.url}/`,
      enrollmentToken: token,
      stateDir: directory,
      hostname: "web-1",
    });
    expect(result).toEqual({
      serverId: "srv-enrolled",
      natsUrl: "nats://127.0.0.1:4222",
      configFile: path.join(directory, "agent.json"),
      credsFile: path.join(directory, "agent.creds"),
      enrolled: true,
    });
    const sent = server.requests[before]!;
    expect(sent).toEqual({
      enrollmentToken: token,
      publicKey: expect.stringMatching(/^U[A-Z2-7]{55}$/),
      hostname: "web-1",
      agentVersion: AGENT_VERSION,
    });

    expect((await stat(result.credsFile)).mode & 0o777).toBe(0o600);
    // The file is in the format NATS tools read, and holds the seed of the key that was sent.
    const credsText = await readFile(result.credsFile, "utf8");
    const creds = await parseCreds(new TextEncoder().encode(credsText));
    expect(creds.uc.sub).toBe(sent.publicKey);
    const seed = /-----BEGIN USER NKEY SEED-----\n(SU[A-Z2-7]+)\n/.exec(credsText)?.[1];
    expect(fromSeed(new TextEncoder().encode(seed)).getPublicKey()).toBe(sent.publicKey);

    const config = await loadAgentConfig({ AGENT_STATE_DIR: directory });
    expect(config).toMatchObject({
      serverId: "srv-enrolled",
      natsUrl: "nats://127.0.0.1:4222",
      credsFile: result.credsFile,
    });
  });

  it("does not enroll again when the state directory holds an enrollment", async () => {
    const directory = await stateDir();
    await enrollAgent({ controlPlaneUrl: server.url, enrollmentToken: token, stateDir: directory });
    const count = server.requests.length;
    const credsBefore = await readFile(path.join(directory, "agent.creds"), "utf8");
    const again = await enrollAgent({
      controlPlaneUrl: server.url,
      enrollmentToken: "used",
      stateDir: directory,
    });
    expect(again).toMatchObject({ serverId: "srv-enrolled", enrolled: false });
    expect(server.requests.length).toBe(count);
    expect(await readFile(path.join(directory, "agent.creds"), "utf8")).toBe(credsBefore);
  });

  it("reports a refused token with the server's message, without the token, and writes nothing", async () => {
    const directory = await stateDir();
    const failure = enrollAgent({
      controlPlaneUrl: server.url,
      enrollmentToken: "wrong-secret-token",
      stateDir: directory,
    });
    await expect(failure).rejects.toThrow(
      `enrollment at ${server.url}/api/agent.enroll was refused with HTTP 401: invalid or used enrollment token`,
    );
    await expect(failure).rejects.not.toThrow(/wrong-secret-token/);
    await expect(stat(directory)).rejects.toThrow();
  });

  it("refuses a JWT issued for another key", async () => {
    const other = await startEnrollServer({
      token,
      serverId: "srv-x",
      natsUrl: "nats://127.0.0.1:4222",
      signJwt: (serverId) => authority.agentJwt(serverId, createUser().getPublicKey()),
    });
    try {
      await expect(
        enrollAgent({ controlPlaneUrl: other.url, enrollmentToken: token, stateDir: await stateDir() }),
      ).rejects.toThrow(/JWT for another key/);
    } finally {
      await other.close();
    }
  });

  it("reports an unreachable control plane", async () => {
    await expect(
      enrollAgent({
        controlPlaneUrl: "http://127.0.0.1:1",
        enrollmentToken: token,
        stateDir: await stateDir(),
      }),
    ).rejects.toThrow(/enrollment at http:\/\/127.0.0.1:1\/api\/agent.enroll failed/);
  });
});
