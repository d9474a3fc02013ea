/**
 * settings.readDirectories / readTraefikFile / updateTraefikFile with a serverId: the owner of an
 * organization that is not the instance's acts on its own remote server's proxy (an agent
 * enrolled over real NATS with JWT auth, its own main directory), never on this machine's, and a
 * file its application holds passes the same tenant rules as application.updateTraefikConfig.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RemoteAgentPlatform, startRemoteAgentPlatform } from "../agents/testing/remote-agent.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import type { Session, TestPlatform } from "../testing/harness.ts";
import { readIfExists } from "./test-support.ts";

let remote: RemoteAgentPlatform;
let platform: TestPlatform;
let tenant: Session;
let localMain: string;
let remoteMain: string;
let serverId: string;
const as = (session = tenant) => ({ token: session.token });
const remoteFile = (name: string) => path.join(remoteMain, "traefik", "dynamic", name);

beforeAll(async () => {
  // The instance organization's owner first, so that the tenant's organization is not the instance's.
  remote = await startRemoteAgentPlatform(async (platform) => {
    await platform.registerOwner();
    return createUserDirectly(platform, { email: "tenant-files@example.com" });
  });
  ({ platform, session: tenant, localMain, remoteMain, serverId } = remote);
}, 60_000);

afterAll(async () => {
  await remote?.close();
});

describe("a tenant's own server's dynamic files (serverId)", () => {
  it("are listed, read and written on that server only; its application's file keeps the tenant rules", async () => {
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
      { domainType: "application", applicationId, host: "edge.example.com", certificateType: "none" },
      as(),
    );
    expect(domain.status, JSON.stringify(domain.body)).toBe(200);
    const appFile = `${appName}.yml`;
    const generated = await readFile(remoteFile(appFile), "utf8");

    // This machine stays the instance administrator's.
    expect((await platform.query("settings.readDirectories", {}, as())).status).toBe(403);

    const listed = await platform.query("settings.readDirectories", { serverId }, as());
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body[0].children.map((child: { id: string }) => child.id)).toEqual([`dynamic/${appFile}`]);
    const read = await platform.query(
      "settings.readTraefikFile",
      { path: `dynamic/${appFile}`, serverId },
      as(),
    );
    expect(read.body).toBe(generated);

    // The application's file: a route to a host the application does not have is refused.
    const foreign = generated.replace("edge.example.com", "bank.example.com");
    const refused = await platform.mutate(
      "settings.updateTraefikFile",
      { path: appFile, traefikConfig: foreign, serverId },
      as(),
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.data.fields).toEqual(["traefikConfig"]);
    expect(await readFile(remoteFile(appFile), "utf8")).toBe(generated);

    // What a tenant may write as its application's file (application.updateTraefikConfig's rules).
    const edited = [
      "http:",
      "  routers:",
      `    ${appName}-custom:`,
      "      rule: Host(`edge.example.com`) && PathPrefix(`/api`)",
      "      entryPoints: [web]",
      `      service: ${appName}-custom`,
      "  services:",
      `    ${appName}-custom:`,
      "      loadBalancer:",
      "        servers:",
      `          - url: http://${appName}:3000`,
      "",
    ].join("\n");
    const written = await platform.mutate(
      "settings.updateTraefikFile",
      { path: appFile, traefikConfig: edited, serverId },
      as(),
    );
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(await readFile(remoteFile(appFile), "utf8")).toBe(edited);
    // …and the application still reads it as its own (the holder was kept).
    expect((await platform.query("application.readTraefikConfig", { applicationId }, as())).body).toBe(
      edited,
    );

    // A new file on the tenant's own server: Traefik's schema only, written there, not here.
    const extra = "http:\n  middlewares:\n    edge-compress:\n      compress: {}\n";
    const added = await platform.mutate(
      "settings.updateTraefikFile",
      { path: "extra.yml", traefikConfig: extra, serverId },
      as(),
    );
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(await readFile(remoteFile("extra.yml"), "utf8")).toBe(extra);
    expect(await readIfExists(path.join(localMain, "traefik", "dynamic", "extra.yml"))).toBeUndefined();
  }, 60_000);
});
