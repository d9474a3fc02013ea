/**
 * An application on a remote server: its Traefik file goes to that server's agent (enrolled
 * over real NATS with JWT auth, its own main directory), never to this machine's.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connectAgentNats, enrollAgent, type RunningAgent, startAgent } from "@platform/agent";
import { NatsAgentTransport, type NatsConnection } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { insertTestServer, listen } from "../agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../agents/testing/nats-jwt.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { readIfExists } from "./test-support.ts";

let nats: JwtNats;
let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let owner: Session;
let localMain: string;
let remoteMain: string;
let remote: { agent: RunningAgent; connection: NatsConnection } | undefined;
let serverId: string;
const as = () => ({ token: owner.token });

beforeAll(async () => {
  nats = await startJwtNats();
  localMain = await mkdtemp(path.join(tmpdir(), "cp-proxy-local-"));
  remoteMain = await mkdtemp(path.join(tmpdir(), "cp-proxy-remote-"));
  platform = await startTestPlatform(nats.env, { agents: { localAgent: { mainDirectory: localMain } } });
  http = await listen(platform);
  owner = await platform.registerOwner();
  serverId = await insertTestServer(platform, owner.user.organizationId, "edge");
  const { token } = await platform.ctx.agents.createEnrollmentToken(serverId);
  const enrollment = await enrollAgent({
    controlPlaneUrl: http.url,
    enrollmentToken: token,
    stateDir: remoteMain,
  });
  const connection = await connectAgentNats({ ...enrollment, natsUrl: enrollment.natsUrl });
  const agent = await startAgent({
    serverId,
    transport: new NatsAgentTransport(connection),
    mainDirectory: remoteMain,
  });
  remote = { agent, connection };
}, 60_000);

afterAll(async () => {
  await remote?.agent.stop();
  await remote?.connection.close();
  await http?.close();
  await platform?.close();
  await nats?.stop();
  for (const directory of [localMain, remoteMain])
    if (directory) await rm(directory, { recursive: true, force: true });
});

describe("the proxy file of an application on a remote server", () => {
  it("is written into that server's dynamic directory and removed with the last domain", async () => {
    const project = await platform.mutate("project.create", { name: "Edge" }, as());
    const created = await platform.mutate(
      "application.create",
      { name: "Edge app", environmentId: project.body.environment.environmentId, serverId },
      as(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { applicationId, appName } = created.body;
    const domain = await platform.mutate(
      "domain.create",
      { domainType: "application", applicationId, host: "edge.example.com", certificateType: "letsencrypt" },
      as(),
    );
    expect(domain.status, JSON.stringify(domain.body)).toBe(200);

    const remoteFile = path.join(remoteMain, "traefik", "dynamic", `${appName}.yml`);
    const localFile = path.join(localMain, "traefik", "dynamic", `${appName}.yml`);
    const config = parse((await readIfExists(remoteFile))!);
    expect(Object.values(config.http.routers).map((router) => (router as { rule: string }).rule)).toContain(
      "Host(`edge.example.com`)",
    );
    expect(await readIfExists(localFile)).toBeUndefined();

    const read = await platform.query("application.readTraefikConfig", { applicationId }, as());
    expect(read.body).toBe(await readIfExists(remoteFile));

    const deleted = await platform.mutate("domain.delete", { domainId: domain.body.domainId }, as());
    expect(deleted.status).toBe(200);
    expect(await readIfExists(remoteFile)).toBeUndefined();
  });

  it("answers 503 and saves nothing while the server's agent is away", async () => {
    const project = await platform.mutate("project.create", { name: "Offline" }, as());
    const created = await platform.mutate(
      "application.create",
      { name: "Offline app", environmentId: project.body.environment.environmentId, serverId },
      as(),
    );
    await remote?.agent.stop();
    const domain = await platform.mutate(
      "domain.create",
      {
        domainType: "application",
        applicationId: created.body.applicationId,
        host: "offline.example.com",
        certificateType: "none",
      },
      as(),
    );
    expect(domain.status, JSON.stringify(domain.body)).toBe(503);
    const listed = await platform.query(
      "domain.byApplicationId",
      { applicationId: created.body.applicationId },
      as(),
    );
    expect(listed.body).toEqual([]);
  }, 30_000);
});
