/**
 * An application on a remote server: its Traefik file goes to that server's agent (enrolled
 * over real NATS with JWT auth, its own main directory), never to this machine's.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type RemoteAgentPlatform, startRemoteAgentPlatform } from "../agents/testing/remote-agent.ts";
import type { Session, TestPlatform } from "../testing/harness.ts";
import { readIfExists } from "./test-support.ts";

let remote: RemoteAgentPlatform;
let platform: TestPlatform;
let owner: Session;
let localMain: string;
let remoteMain: string;
let serverId: string;
const as = () => ({ token: owner.token });

beforeAll(async () => {
  remote = await startRemoteAgentPlatform((platform) => platform.registerOwner());
  ({ platform, session: owner, localMain, remoteMain, serverId } = remote);
}, 60_000);

afterAll(async () => {
  await remote?.close();
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
    await remote.agent.stop();
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
