/**
 * docker.* (spec 4.13) against the real Docker Engine, as a contract run over both agent links:
 * the embedded agent on the in-memory transport (no NATS_URL) and the local agent over a real
 * nats-server with JWT auth. Bad names are 400s that never reach the agent; another
 * organization's server is a 404.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, removeContainer, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { InMemoryAgentTransport, NatsAgentTransport } from "@platform/agent-protocol";
import { applicationOwner, databaseOwner, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { insertTestServer } from "../agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../agents/testing/nats-jwt.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const image = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";
const SLEEPER = ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"];
const prefix = uniqueName("cp-docker");
const standalone = `${prefix}-web`;
const composeProject = `${prefix}-compose`;
const composeContainer = `${composeProject}-db-1`;
const stack = `${prefix}-stack`;
const service = `${stack}_api`;
let mainDirectory: string;

async function serviceContainerId(): Promise<string> {
  const id = await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${service}`]);
  if (!id) throw new Error(`no running container of ${service} yet`);
  return id;
}

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-docker-"));
  await dockerCli(["run", "-d", "--name", standalone, "-p", "127.0.0.1::8080", image, ...SLEEPER]);
  await dockerCli([
    "run",
    "-d",
    "--name",
    composeContainer,
    "--label",
    `com.docker.compose.project=${composeProject}`,
    image,
    ...SLEEPER,
  ]);
  // A real Swarm service labelled the way `docker stack deploy` labels its services.
  await dockerCli([
    "service",
    "create",
    "--detach",
    "--no-resolve-image",
    "--name",
    service,
    "--label",
    `com.docker.stack.namespace=${stack}`,
    "--container-label",
    `com.docker.stack.namespace=${stack}`,
    image,
    ...SLEEPER,
  ]);
  await vi.waitFor(serviceContainerId, { timeout: 30_000, interval: 250 });
});

afterAll(async () => {
  await dockerCli(["service", "rm", service]).catch(() => {});
  await removeContainer(standalone);
  await removeContainer(composeContainer);
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

interface Setup {
  name: string;
  transport: typeof InMemoryAgentTransport | typeof NatsAgentTransport;
  start(): Promise<{ platform: TestPlatform; stop(): Promise<void> }>;
}

const setups: Setup[] = [
  {
    name: "embedded agent, in-memory transport",
    transport: InMemoryAgentTransport,
    async start() {
      const platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
      return { platform, stop: () => platform.close() };
    },
  },
  {
    name: "local agent over NATS with JWT auth",
    transport: NatsAgentTransport,
    async start() {
      const nats: JwtNats = await startJwtNats();
      const platform = await startTestPlatform(nats.env, { agents: { localAgent: { mainDirectory } } });
      return {
        platform,
        stop: async () => {
          await platform.close();
          await nats.stop();
        },
      };
    },
  },
];

describe.each(setups)("docker.* ($name)", (setup) => {
  let platform: TestPlatform;
  let stop: () => Promise<void>;
  let owner: Session;
  const as = () => ({ token: owner.token });

  beforeAll(async () => {
    ({ platform, stop } = await setup.start());
    owner = await platform.registerOwner();
  });
  afterAll(async () => stop?.());

  it("reaches the local agent over the transport of the setup", () => {
    expect(platform.ctx.agents.client.transport).toBeInstanceOf(setup.transport);
  });

  it("getContainers lists every container of this machine in Dokploy's shape", async () => {
    const response = await platform.query("docker.getContainers", {}, as());
    expect(response.status).toBe(200);
    const web = response.body.find((container: { name: string }) => container.name === standalone);
    const id = await dockerCli(["inspect", "-f", "{{.Id}}", standalone]);
    const port = await dockerCli(["port", standalone, "8080/tcp"]);
    expect(web).toEqual({
      containerId: id.slice(0, 12),
      name: standalone,
      image,
      ports: `${port}->8080/tcp`,
      state: "running",
      status: expect.stringMatching(/^Up /),
      serverId: null,
    });
  });

  it("getConfig answers the container's full configuration", async () => {
    const response = await platform.query("docker.getConfig", { containerId: standalone }, as());
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      Name: `/${standalone}`,
      Config: { Image: image },
      State: { Running: true },
      HostConfig: expect.any(Object),
      NetworkSettings: expect.any(Object),
    });
  });

  it("restartContainer restarts the real container", async () => {
    const before = await dockerCli(["inspect", "-f", "{{.State.StartedAt}}", standalone]);
    const response = await platform.mutate("docker.restartContainer", { containerId: standalone }, as());
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    const after = await dockerCli(["inspect", "-f", "{{.State.Running}} {{.State.StartedAt}}", standalone]);
    expect(after.startsWith("true ")).toBe(true);
    expect(after).not.toBe(`true ${before}`);
  });

  it("getContainersByAppNameMatch finds by name, compose project and stack", async () => {
    const byName = await platform.query("docker.getContainersByAppNameMatch", { appName: prefix }, as());
    expect(byName.status).toBe(200);
    const names = byName.body.map((container: { name: string }) => container.name);
    expect(names).toEqual(expect.arrayContaining([standalone, composeContainer]));
    expect(byName.body[0]).toEqual({
      containerId: expect.stringMatching(/^[0-9a-f]{12}$/),
      name: expect.any(String),
      state: expect.any(String),
      status: expect.any(String),
    });

    const compose = await platform.query(
      "docker.getContainersByAppNameMatch",
      { appName: composeProject, appType: "docker-compose" },
      as(),
    );
    expect(compose.body.map((container: { name: string }) => container.name)).toEqual([composeContainer]);

    const stackContainers = await platform.query(
      "docker.getContainersByAppNameMatch",
      { appName: stack, appType: "stack" },
      as(),
    );
    expect(stackContainers.body.map((container: { containerId: string }) => container.containerId)).toEqual([
      (await serviceContainerId()).slice(0, 12),
    ]);
  });

  it("getContainersByAppLabel finds standalone containers by name and swarm ones by service", async () => {
    const standaloneResponse = await platform.query(
      "docker.getContainersByAppLabel",
      { appName: standalone, type: "standalone" },
      as(),
    );
    expect(standaloneResponse.body).toEqual([
      { containerId: expect.any(String), name: standalone, state: "running" },
    ]);
    const swarm = await platform.query(
      "docker.getContainersByAppLabel",
      { appName: service, type: "swarm" },
      as(),
    );
    expect(swarm.body).toEqual([
      {
        containerId: (await serviceContainerId()).slice(0, 12),
        name: expect.stringContaining(service),
        state: "running",
      },
    ]);
  });

  it("getStackContainersByAppName and getServiceContainersByAppName list the service's containers", async () => {
    const hostname = (await platform.ctx.agents.client.ping("local")).hostname;
    for (const [procedure, appName] of [
      ["docker.getStackContainersByAppName", stack],
      ["docker.getServiceContainersByAppName", service],
    ] as const) {
      const response = await platform.query(procedure, { appName }, as());
      expect(response.status).toBe(200);
      expect(response.body).toEqual([
        {
          containerId: (await serviceContainerId()).slice(0, 12),
          name: expect.stringContaining(service),
          state: "running",
          node: hostname,
          currentState: expect.stringMatching(/^Up /),
          error: "",
        },
      ]);
    }
    const none = await platform.query(
      "docker.getServiceContainersByAppName",
      { appName: `${prefix}-none` },
      as(),
    );
    expect(none.body).toEqual([]);
  });

  it("refuses bad container ids and app names with a 400 that never reaches the agent", async () => {
    const request = vi.spyOn(platform.ctx.agents.client.transport, "request");
    try {
      for (const containerId of ["abc;rm -rf /", "../etc", "$(id)", "a b", "..", "", `${standalone}\n`]) {
        for (const call of [
          () => platform.mutate("docker.restartContainer", { containerId }, as()),
          () => platform.query("docker.getConfig", { containerId }, as()),
        ]) {
          const response = await call();
          expect(response.status, containerId).toBe(400);
          expect(response.body.error.data.fields).toEqual(["containerId"]);
        }
      }
      for (const appName of ["x|y", "../x", "a'b"]) {
        for (const name of [
          "docker.getContainersByAppNameMatch",
          "docker.getStackContainersByAppName",
          "docker.getServiceContainersByAppName",
        ]) {
          const response = await platform.query(name, { appName }, as());
          expect(response.status, `${name} ${appName}`).toBe(400);
          expect(response.body.error.data.fields).toEqual(["appName"]);
        }
      }
      const badType = await platform.query(
        "docker.getContainersByAppLabel",
        { appName: "x", type: "compose" },
        as(),
      );
      expect(badType.body.error.data.fields).toEqual(["type"]);
      const badServer = await platform.query("docker.getContainers", { serverId: "a.b>" }, as());
      expect(badServer.status).toBe(400);
      expect(badServer.body.error.data.fields).toEqual(["serverId"]);
      expect(request).not.toHaveBeenCalled();
    } finally {
      request.mockRestore();
    }
  });

  it("a server of another organization is a 404, an unknown container a 404", async () => {
    const other = await createUserDirectly(platform, { email: `other-${setup.name.length}@example.com` });
    const otherServer = await insertTestServer(platform, other.user.organizationId);
    for (const [name, input] of [
      ["docker.getContainers", { serverId: otherServer }],
      ["docker.getConfig", { containerId: standalone, serverId: otherServer }],
    ] as const) {
      const response = await platform.query(name, input, as());
      expect(response.status).toBe(404);
      expect(response.body.error.message).toBe("Server not found");
    }
    const restart = await platform.mutate(
      "docker.restartContainer",
      { containerId: standalone, serverId: otherServer },
      as(),
    );
    expect(restart.status).toBe(404);

    const missing = await platform.query("docker.getConfig", { containerId: `${prefix}-missing` }, as());
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("NOT_FOUND");
  });

  it("a server whose agent is not connected answers 503, naming the server by its name", async () => {
    const serverId = await insertTestServer(platform, owner.user.organizationId, "edge-paris");
    const response = await platform.query("docker.getContainers", { serverId }, as());
    expect(response.status).toBe(503);
    expect(response.body.error.message).toBe('The agent of server "edge-paris" is not connected');
    expect(response.body.error.data.serverId).toBe(serverId);
  });

  it("needs a session", async () => {
    const response = await platform.query("docker.getContainers", {});
    expect(response.status).toBe(401);
  });
});

describe("docker.* on the cloud edition", () => {
  let platform: TestPlatform;
  afterAll(async () => platform?.close());

  it("requires a serverId (the control plane's machine is not a tenant's)", async () => {
    platform = await startTestPlatform({ PLATFORM_EDITION: "cloud" }, { agents: { localAgent: false } });
    const owner = await platform.registerOwner();
    for (const input of [{}, { serverId: LOCAL_SERVER_ID }]) {
      const response = await platform.query("docker.getContainers", input, { token: owner.token });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.message).toBe("Invalid input: serverId: is required on the cloud edition");
      expect(response.body.error.data.fields).toEqual(["serverId"]);
    }
  });
});

describe("docker.* tenancy (issue 10 finding 1)", () => {
  let platform: TestPlatform;
  let owner: Session;
  let member: Session;
  let stranger: Session;
  const mine = `${prefix}-mine`;
  const theirs = `${prefix}-theirs`;
  const internal = `${prefix}-internal`;
  const proxyLike = `${prefix}-proxy`;
  const labelled = (name: string, labels: Record<string, string>) =>
    dockerCli([
      "run",
      "-d",
      "--name",
      name,
      ...Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]),
      image,
      ...SLEEPER,
    ]);

  beforeAll(async () => {
    platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
    owner = await platform.registerOwner();
    const organizationId = owner.user.organizationId;
    member = await createUserDirectly(platform, { email: "docker-member@example.com", organizationId });
    const granted = await platform.mutate(
      "user.assignPermissions",
      { id: member.user.userId, canAccessToDocker: true },
      { token: owner.token },
    );
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    stranger = await createUserDirectly(platform, { email: "docker-stranger@example.com" });
    await labelled(mine, ownershipLabels(applicationOwner(organizationId, "app-mine")));
    await labelled(theirs, ownershipLabels(applicationOwner(stranger.user.organizationId, "app-theirs")));
    await labelled(internal, { "platform.internal": "true" });
    await labelled(proxyLike, { "platform.role": "proxy" });
  }, 60_000);

  afterAll(async () => {
    for (const name of [mine, theirs, internal, proxyLike]) await removeContainer(name);
    await platform?.close();
  });

  const namesSeenBy = async (session: Session) => {
    const response = await platform.query("docker.getContainers", {}, { token: session.token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body as { name: string }[]).map((container) => container.name);
  };

  it("the instance owner sees its organization's and unmanaged containers, never another's or the platform's", async () => {
    const names = await namesSeenBy(owner);
    expect(names).toEqual(expect.arrayContaining([mine, standalone]));
    for (const hidden of [theirs, internal, proxyLike]) expect(names).not.toContain(hidden);
    for (const name of names) expect(name.startsWith("platform-")).toBe(false);
    const byMatch = await platform.query(
      "docker.getContainersByAppNameMatch",
      { appName: prefix },
      { token: owner.token },
    );
    const matched = (byMatch.body as { name: string }[]).map((container) => container.name);
    expect(matched).toContain(mine);
    for (const hidden of [theirs, internal, proxyLike]) expect(matched).not.toContain(hidden);
  });

  it("getConfig and restartContainer of a container the caller may not see are 404s, and nothing restarts", async () => {
    for (const [session, containerId] of [
      [owner, theirs],
      [owner, internal],
      [owner, proxyLike],
      [member, standalone],
      [member, theirs],
    ] as const) {
      const before = await dockerCli(["inspect", "-f", "{{.State.StartedAt}}", containerId]);
      const config = await platform.query("docker.getConfig", { containerId }, { token: session.token });
      expect(config.status, containerId).toBe(404);
      expect(JSON.stringify(config.body)).not.toContain("Env");
      const restart = await platform.mutate(
        "docker.restartContainer",
        { containerId },
        { token: session.token },
      );
      expect(restart.status, containerId).toBe(404);
      expect(await dockerCli(["inspect", "-f", "{{.State.StartedAt}}", containerId])).toBe(before);
    }
    const own = await platform.query("docker.getConfig", { containerId: mine }, { token: member.token });
    expect(own.status).toBe(200);
    expect(own.body.Name).toBe(`/${mine}`);
  });

  it("a member sees its organization's containers only, no unmanaged ones", async () => {
    const names = await namesSeenBy(member);
    expect(names).toContain(mine);
    for (const hidden of [standalone, theirs, internal, proxyLike]) expect(names).not.toContain(hidden);
  });

  it("another organization must name one of its servers: this machine is a 400 naming serverId", async () => {
    for (const [name, input] of [
      ["docker.getContainers", {}],
      ["docker.getConfig", { containerId: theirs }],
      ["docker.getContainersByAppLabel", { appName: theirs, type: "standalone" }],
    ] as const) {
      const response = await platform.query(name, input, { token: stranger.token });
      expect(response.status, name).toBe(400);
      expect(response.body.error.data.fields).toEqual(["serverId"]);
    }
    const restart = await platform.mutate(
      "docker.restartContainer",
      { containerId: theirs },
      { token: stranger.token },
    );
    expect(restart.status).toBe(400);
  });
});

describe("docker.* applies the member's service grants (issue 22 finding 2)", () => {
  let platform: TestPlatform;
  let owner: Session;
  let restricted: Session;
  const granted = `${prefix}-granted`;
  const ungranted = `${prefix}-ungranted`;
  const ungrantedDatabase = `${prefix}-ungranted-db`;

  beforeAll(async () => {
    platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
    owner = await platform.registerOwner();
    const organizationId = owner.user.organizationId;
    const as = { token: owner.token };
    const project = await platform.mutateOk("project.create", { name: "grants" }, as);
    const environmentId = project.environment.environmentId as string;
    const create = (name: string) => platform.mutateOk("application.create", { name, environmentId }, as);
    const grantedApp = await create("granted");
    const ungrantedApp = await create("ungranted");
    const database = await platform.mutateOk(
      "postgres.create",
      {
        name: "secrets",
        appName: `${prefix}-pg`,
        environmentId,
        databasePassword: "grants-Pass1",
        databaseName: "shop",
        databaseUser: "shopper",
      },
      as,
    );
    restricted = await createUserDirectly(platform, {
      email: "docker-restricted@example.com",
      organizationId,
    });
    const assigned = await platform.mutate(
      "user.assignPermissions",
      { id: restricted.user.userId, canAccessToDocker: true, accessedServices: [grantedApp.applicationId] },
      as,
    );
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    const run = (name: string, labels: Record<string, string>) =>
      dockerCli([
        "run",
        "-d",
        "--name",
        name,
        "--env",
        "DATABASE_PASSWORD=grants-Pass1",
        ...Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]),
        image,
        ...SLEEPER,
      ]);
    await run(granted, ownershipLabels(applicationOwner(organizationId, grantedApp.applicationId)));
    await run(ungranted, ownershipLabels(applicationOwner(organizationId, ungrantedApp.applicationId)));
    await run(ungrantedDatabase, ownershipLabels(databaseOwner(organizationId, database.postgresId)));
  }, 60_000);

  afterAll(async () => {
    for (const name of [granted, ungranted, ungrantedDatabase]) await removeContainer(name);
    await platform?.close();
  });

  it("a member granted one application lists only that application's containers", async () => {
    const as = { token: restricted.token };
    const all = await platform.query("docker.getContainers", {}, as);
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    const names = (all.body as { name: string }[]).map((container) => container.name);
    expect(names).toContain(granted);
    for (const hidden of [ungranted, ungrantedDatabase, standalone]) expect(names).not.toContain(hidden);
    const byMatch = await platform.query("docker.getContainersByAppNameMatch", { appName: prefix }, as);
    const matched = (byMatch.body as { name: string }[]).map((container) => container.name);
    expect(matched).toContain(granted);
    for (const hidden of [ungranted, ungrantedDatabase]) expect(matched).not.toContain(hidden);
    const byLabel = await platform.query(
      "docker.getContainersByAppLabel",
      { appName: ungrantedDatabase, type: "standalone" },
      as,
    );
    expect(byLabel.body).toEqual([]);
  });

  it("getConfig and restartContainer of an ungranted service's container are 404s; nothing restarts", async () => {
    const as = { token: restricted.token };
    for (const containerId of [ungranted, ungrantedDatabase]) {
      const before = await dockerCli(["inspect", "-f", "{{.State.StartedAt}}", containerId]);
      const config = await platform.query("docker.getConfig", { containerId }, as);
      expect(config.status, containerId).toBe(404);
      expect(JSON.stringify(config.body)).not.toContain("grants-Pass1");
      const restart = await platform.mutate("docker.restartContainer", { containerId }, as);
      expect(restart.status, containerId).toBe(404);
      expect(await dockerCli(["inspect", "-f", "{{.State.StartedAt}}", containerId])).toBe(before);
    }
    const own = await platform.query("docker.getConfig", { containerId: granted }, as);
    expect(own.status).toBe(200);
    expect(own.body.Name).toBe(`/${granted}`);
  });

  it("the owner still sees every service's containers", async () => {
    const all = await platform.query("docker.getContainers", {}, { token: owner.token });
    const names = (all.body as { name: string }[]).map((container) => container.name);
    expect(names).toEqual(expect.arrayContaining([granted, ungranted, ungrantedDatabase]));
  });
});
