/**
 * Build servers in the control plane's flow (issue 27 item 4), without Docker: the agents of two
 * servers (a build server and the application's server, rows without real agents) are stood in
 * for by spies on the agent client, which record which server gets which command. The build goes
 * to the build server with the build registry's credentials, the deploy to the application's
 * server with the pushed image and the registry's credentials to pull it, and the rollback is kept
 * there with the registry's copy. A cancel during the build goes to the build server. A failure
 * on the build server (agent away, push refused) fails the deployment naming it, and nothing
 * reaches the application's server; the application's server away fails it naming that one. The real build, push, pull and serve run in
 * tests/e2e/build-server.test.ts.
 */
import {
  AgentCommandError,
  AgentUnavailableError,
  type BuildImageCommand,
  type CommandArgs,
  type DeployServiceCommand,
} from "@platform/agent-protocol";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
let buildServer: string;
let targetServer: string;
let registryId: string;

const as = (session = owner) => ({ token: session.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

interface Sent {
  command: string;
  serverId: string;
  body: unknown;
}
let sent: Sent[] = [];

/** Stands in for the agents: every command is recorded with its server; `build` answers the builds. */
function fakeAgents(build: (serverId: string, command: CommandArgs<"buildImage">) => Promise<unknown>) {
  const client = platform.ctx.agents.client;
  vi.spyOn(client, "buildImage").mockImplementation(async (serverId, command) => {
    sent.push({ command: "buildImage", serverId, body: command });
    return (await build(serverId, command)) as never;
  });
  vi.spyOn(client, "deployService").mockImplementation(async (serverId, command) => {
    sent.push({ command: "deployService", serverId, body: command });
    return { serviceId: "svc", created: true, runningTasks: 1 };
  });
  vi.spyOn(client, "keepRollbackImage").mockImplementation(async (serverId, command) => {
    sent.push({ command: "keepRollbackImage", serverId, body: command });
    return { imageId: "sha256:abc", pushedImage: "" } as never;
  });
  vi.spyOn(client, "cancelJob").mockResolvedValue(undefined as never);
}

/** The build server's answer to a build that succeeded and pushed its image to the build registry. */
async function builtAndPushed(_serverId: string, command: CommandArgs<"buildImage">) {
  return {
    imageName: command.imageName,
    imageId: "sha256:abc",
    pushedImage: `198.51.100.7:5000/team/${command.appName}:${command.jobId}`,
    commitHash: "0123abc",
    commitMessage: "first",
    rollbackImage: "",
  };
}

async function createApp(name: string) {
  const app = await ok("application.create", {
    name,
    environmentId,
    appName: `bs-${name}`,
    serverId: targetServer,
  });
  await ok("application.saveGitProvider", {
    applicationId: app.applicationId,
    customGitUrl: "http://127.0.0.1:9/acme/web.git",
    customGitBranch: "main",
    customGitBuildPath: "/",
    enableSubmodules: false,
  });
  await ok("application.update", {
    applicationId: app.applicationId,
    buildType: "dockerfile",
    buildServerId: buildServer,
    buildRegistryId: registryId,
  });
  return app as { applicationId: string; appName: string };
}

async function deploy(applicationId: string) {
  const { deploymentId } = await ok("application.deploy", { applicationId });
  return platform.waitForDeployment(deploymentId, 60_000);
}

beforeAll(async () => {
  // No agent runs here; a build server's absence is given up on after the watchdog's 2 s.
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8,198.51.100.0/24", DEPLOYMENT_WATCHDOG_MS: "2000" },
    { agents: { localAgent: false } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Build servers" });
  environmentId = project.environment.environmentId;
  const organizationId = owner.user.organizationId;
  buildServer = await insertServer(platform.ctx.db, organizationId, {
    name: "builder",
    serverType: "build",
  });
  targetServer = await insertServer(platform.ctx.db, organizationId, { name: "target" });
  const registry = await ok("registry.create", {
    registryName: "Builds",
    registryUrl: "198.51.100.7:5000",
    username: "pusher",
    password: "registry-password-1",
    imagePrefix: "team",
  });
  registryId = registry.registryId;
}, 60_000);

afterEach(() => {
  vi.restoreAllMocks();
  sent = [];
});

afterAll(async () => {
  await platform?.close();
});

describe("a deployment with a build server", () => {
  it("builds and pushes on the build server, deploys the pushed image on the application's server, and records both", async () => {
    const app = await createApp("ok");
    fakeAgents(builtAndPushed);
    const row = await deploy(app.applicationId);
    expect(row.status, row.logs).toBe("done");
    expect(sent.map(({ command, serverId }) => [command, serverId])).toEqual([
      ["buildImage", buildServer],
      ["deployService", targetServer],
      ["keepRollbackImage", targetServer],
    ]);
    const pushed = `198.51.100.7:5000/team/${app.appName}:${row.deploymentId}`;
    const build = sent[0]!.body as BuildImageCommand;
    expect(build.pushRegistry).toEqual({
      serverAddress: "198.51.100.7:5000",
      username: "pusher",
      password: "registry-password-1",
    });
    expect(build.pushImagePrefix).toBe("team");
    // The application's server pulls the pushed image with the registry's credentials.
    const deployed = sent[1]!.body as DeployServiceCommand;
    expect(deployed.spec?.image).toBe(pushed);
    expect(deployed.registryAuth).toMatchObject({ serverAddress: "198.51.100.7:5000", username: "pusher" });
    expect(sent[2]!.body).toMatchObject({ sourceImage: pushed });

    // The record says where it was built and where it runs; the password is in no log line.
    expect(row).toMatchObject({ serverId: targetServer, buildServerId: buildServer, imageName: pushed });
    expect(row.logs).toContain(`Building on the build server builder (${buildServer})`);
    expect(row.logs).toContain(`The server that runs the application pulls ${pushed}`);
    expect(row.logs).not.toContain("registry-password-1");
    const listed = await platform.query("deployment.all", { applicationId: app.applicationId }, as());
    expect(listed.body[0]).toMatchObject({ deploymentId: row.deploymentId, buildServerId: buildServer });

    // The rollback is kept on the application's server, with the build registry's copy to pull.
    const rollback = await platform.ctx.db
      .selectFrom("rollbacks")
      .selectAll()
      .where("deploymentId", "=", row.deploymentId)
      .executeTakeFirstOrThrow();
    expect(rollback).toMatchObject({ serverId: targetServer, registryId, registryImage: pushed });
  });

  it("an unreachable build server fails the deployment naming it; nothing is deployed", async () => {
    const app = await createApp("away");
    fakeAgents(async (serverId) => {
      throw new AgentUnavailableError(serverId, "buildImage");
    });
    const row = await deploy(app.applicationId);
    expect(row.status).toBe("error");
    expect(row.errorMessage).toBe(
      `The agent of the build server builder (${buildServer}) is not connected: the image was not built and nothing was deployed`,
    );
    expect(row.buildServerId).toBe(buildServer);
    expect(new Set(sent.map(({ command, serverId }) => `${command}@${serverId}`))).toEqual(
      new Set([`buildImage@${buildServer}`]),
    );
  });

  it("an application's server whose agent is away fails the deployment naming that server by its name", async () => {
    const app = await createApp("target-away");
    fakeAgents(builtAndPushed);
    vi.spyOn(platform.ctx.agents.client, "deployService").mockImplementation(async (serverId) => {
      sent.push({ command: "deployService", serverId, body: {} });
      throw new AgentUnavailableError(serverId, "deployService");
    });
    const row = await deploy(app.applicationId);
    expect(row.status).toBe("error");
    // Waited for (the watchdog's 2 s here), then given up on: both said with the server's name.
    expect(row.logs).toContain('The agent of server "target" is not connected: waiting for it');
    expect(row.errorMessage).toBe('The agent of server "target" is not connected');
    expect(row.logs).not.toContain(targetServer);
  });

  it("a cancel during the build goes to the build server's agent", async () => {
    const app = await createApp("cancelled");
    let building: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      building = resolve;
    });
    fakeAgents((serverId) => {
      building();
      // The build runs until the agent is told to cancel it.
      return new Promise((_resolve, reject) => {
        cancelled = () => reject(new AgentCommandError("CANCELLED", "cancelled", serverId, "buildImage"));
      });
    });
    let cancelled: () => void = () => {};
    const cancelJob = vi.spyOn(platform.ctx.agents.client, "cancelJob").mockImplementation(async () => {
      cancelled();
      return { cancelled: true, runsOn: false, ended: true };
    });
    const { deploymentId } = await ok("application.deploy", { applicationId: app.applicationId });
    await started;
    expect((await ok("application.cancelDeployment", { applicationId: app.applicationId })).success).toBe(
      true,
    );
    const row = await platform.waitForDeployment(deploymentId, 60_000);
    expect(row.errorMessage).toBe("Cancelled by application.cancelDeployment");
    expect(cancelJob).toHaveBeenCalledWith(buildServer, deploymentId);
    expect(sent.map(({ command }) => command)).toEqual(["buildImage"]);
  });

  it("a push the registry refuses fails the deployment with the registry's answer; nothing is deployed", async () => {
    const app = await createApp("refused");
    fakeAgents(async () => {
      throw new AgentCommandError(
        "FAILED",
        "pushing 198.51.100.7:5000/team/bs-refused failed: unauthorized: authentication required",
        buildServer,
        "buildImage",
      );
    });
    const row = await deploy(app.applicationId);
    expect(row.status).toBe("error");
    expect(row.errorMessage).toBe(
      "Build on the build server builder failed: pushing 198.51.100.7:5000/team/bs-refused failed: unauthorized: authentication required",
    );
    expect(sent.map(({ command, serverId }) => [command, serverId])).toEqual([["buildImage", buildServer]]);
  });

  it("a build server in use cannot be retyped or removed; one changed anyway, or a removed build registry, fails the deployment before any command", async () => {
    const app = await createApp("changed");
    fakeAgents(async () => {
      throw new Error("no build expected");
    });
    // The API refuses to turn a build server in use into a deploy server, or to remove it.
    const retype = await platform.mutate(
      "server.update",
      { serverId: buildServer, serverType: "deploy" },
      as(),
    );
    expect(retype.status).toBe(400);
    expect(retype.body.error.data.fields).toEqual(["serverType"]);
    const removed = await platform.mutate("server.remove", { serverId: buildServer }, as());
    expect(removed.status).toBe(409);
    expect(removed.body.error.message).toContain("clear their buildServerId first");
    // A row changed behind the API's back is caught when the deployment runs.
    const setType = (serverType: "build" | "deploy") =>
      platform.ctx.db
        .updateTable("servers")
        .set({ serverType })
        .where("serverId", "=", buildServer)
        .execute();
    await setType("deploy");
    try {
      const row = await deploy(app.applicationId);
      expect(row.status).toBe("error");
      expect(row.errorMessage).toBe(
        "The server builder (buildServerId) is a deploy server: set its serverType to build, or clear buildServerId",
      );
    } finally {
      await setType("build");
    }
    const spare = await ok("registry.create", {
      registryName: "Spare",
      registryUrl: "198.51.100.8:5000",
      username: "u",
      password: "p",
    });
    await ok("application.update", { applicationId: app.applicationId, buildRegistryId: spare.registryId });
    await ok("registry.remove", { registryId: spare.registryId });
    const row = await deploy(app.applicationId);
    expect(row.status).toBe("error");
    expect(row.errorMessage).toContain("none is set: set buildRegistryId, or clear buildServerId");
    expect(sent).toEqual([]);
  });
});

describe("saving a build server", () => {
  it("another organization's build server is a 404, nothing stored", async () => {
    const other = await createUserDirectly(platform, { email: "other-org@example.com" });
    const foreign = await insertServer(platform.ctx.db, other.user.organizationId, {
      name: "theirs",
      serverType: "build",
    });
    const app = await ok("application.create", { name: "tenant", environmentId, appName: "bs-tenant" });
    const response = await platform.mutate(
      "application.update",
      { applicationId: app.applicationId, buildServerId: foreign, buildRegistryId: registryId },
      as(),
    );
    expect(response.status).toBe(404);
    const stored = await platform.ctx.db
      .selectFrom("applications")
      .select(["buildServerId", "buildRegistryId"])
      .where("applicationId", "=", app.applicationId)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ buildServerId: null, buildRegistryId: null });
  });
});
