/**
 * A remote server end to end, as a user drives it: the control plane and the agent run as their
 * own processes, talk over a private NATS (JetStream, decentralized JWT auth), and the test uses
 * nothing but the public HTTP API. The agent enrolls with the token of server.enrollmentCommand,
 * an application placed on that server is deployed there and serves on its host-mode port, and
 * when the agent dies the application keeps serving while the API reports the server unreachable.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { freePort, servedBody } from "../../apps/agent/src/testing/net.ts";
import { killAgentProcess } from "../../apps/control-plane/src/agents/testing/agents.ts";
import { AgentProcesses } from "../support/agent-processes.ts";
import type { ApiClient } from "../support/control-plane.ts";

/** What platform-test/busybox serves from /www (scripts/build-test-images.sh). */
const SERVED_PAGE = "platform test image";
/** The control plane's default: a server is online while its last heartbeat is younger than 30 s. */
const HEARTBEAT_TIMEOUT_MS = 30_000;

const appName = uniqueName("e2e-remote");
const processes = new AgentProcesses();
let api: ApiClient;
let serverId: string;
let publishedPort: number;

beforeAll(async () => {
  await requireDocker();
  await processes.start();
  api = processes.api;
}, 90_000);

processes.stepsBuildOnEachOther();

afterAll(() => processes.close([() => dockerCli(["service", "rm", appName])]), 60_000);

describe("a remote server driven through the API", () => {
  it("the control plane runs on the NATS JetStream queue", async () => {
    const health = await fetch(`${processes.controlPlane!.url}/health`);
    expect(await health.json()).toMatchObject({
      status: "ok",
      checks: { database: { kind: "postgres" } },
    });
    // Without JetStream it would fall back to an in-memory queue and say so at start.
    const fellBack = processes.controlPlane!.output.join("").includes("NATS has no JetStream");
    expect(fellBack, "the deployment queue fell back to memory").toBe(false);
  });

  it("an agent process enrolled with server.enrollmentCommand's token turns its server active and online", async () => {
    await processes.registerOwner();
    const { server, enrollment } = await processes.enroll({ name: "remote" });
    serverId = server.serverId;
    expect(server).toMatchObject({ serverStatus: "inactive", online: false, lastHeartbeatAt: null });
    const url = processes.controlPlane!.url;
    expect(enrollment.command).toBe(
      `curl -fsSL ${url}/agent/install.sh | sudo sh -s -- ` +
        `--control-plane-url ${url} --enrollment-token ${enrollment.token}`,
    );
    const agent = processes.agents.get("remote");

    await vi.waitFor(
      async () => {
        expect(agent!.child.exitCode, "the agent process exited").toBeNull();
        const one = await api.queryOk("server.one", { serverId });
        expect(one).toMatchObject({ serverStatus: "active", online: true });
      },
      { timeout: 30_000, interval: 250 },
    );
    const one = await api.queryOk("server.one", { serverId });
    expect(one.agentVersion).toEqual(expect.any(String));
    expect(one.enrolledAt).toEqual(expect.any(String));
    expect(one.lastHeartbeatAt).toEqual(expect.any(String));
    // The agent answers through the control plane: validation as that server sees it.
    const validation = await api.queryOk("server.validate", { serverId });
    expect(validation).toMatchObject({ docker: { enabled: true }, isMainDirectoryInstalled: true });
  }, 45_000);

  it("an application placed on that server deploys there and serves on its host-mode port", async () => {
    const project = await api.mutateOk("project.create", { name: "Remote" });
    const application = await api.mutateOk("application.create", {
      name: "web",
      appName,
      environmentId: project.environment.environmentId,
      serverId,
    });
    const { applicationId } = application;
    expect(application.serverId).toBe(serverId);
    await api.mutateOk("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    // The image's own command is a shell; busybox httpd serves /www (its index.html) on 8080.
    await api.mutateOk("application.update", { applicationId, command: "httpd -f -p 8080 -h /www" });
    publishedPort = await freePort();
    await api.mutateOk("port.create", {
      applicationId,
      publishedPort,
      targetPort: 8080,
      publishMode: "host",
    });

    const { deploymentId } = await api.mutateOk("application.deploy", { applicationId });
    const log = await api.followDeploymentLog(deploymentId, 60_000);
    expect(log.end, log.lines.join("\n")).toEqual({ status: "done", errorMessage: null });
    for (const line of log.lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z /);
    expect(log.lines.at(-1)).toContain("Deployment done");

    expect(await servedBody(publishedPort, "/", SERVED_PAGE)).toBe(SERVED_PAGE);
    const deployed = await api.queryOk("application.one", { applicationId });
    expect(deployed).toMatchObject({ applicationStatus: "done", serverId });
    expect(deployed.deployments[0]).toMatchObject({ deploymentId, status: "done" });
    // The server's agent runs it: its containers, listed through that agent, include the task.
    const containers = await api.queryOk<Array<{ name: string; state: string; serverId: string }>>(
      "docker.getContainers",
      { serverId },
    );
    expect(containers.find((container) => container.name.startsWith(`${appName}.`))).toMatchObject({
      state: "running",
      serverId,
    });
    expect((await api.queryOk("server.one", { serverId })).totalSum).toBe(1);
  }, 75_000);

  it("a killed agent leaves the application serving; the server turns unreachable, then offline", async () => {
    await killAgentProcess(processes.agents.get("remote"), "SIGKILL");

    // Nothing answers on the server's subjects any more: calls through its agent are 503s.
    const validate = await api.query("server.validate", { serverId });
    expect(validate.status, JSON.stringify(validate.body)).toBe(503);
    expect(validate.body.error.message).toBe('The agent of server "remote" is not connected');
    // The workload does not depend on the agent.
    expect(await servedBody(publishedPort, "/", SERVED_PAGE)).toBe(SERVED_PAGE);
    expect(
      await dockerCli(["service", "ls", "--filter", `name=${appName}`, "--format", "{{.Replicas}}"]),
    ).toBe("1/1");

    // server.one turns offline once the last heartbeat is older than the control plane's timeout.
    const before = await api.queryOk("server.one", { serverId });
    expect(before).toMatchObject({ serverStatus: "active", lastHeartbeatAt: expect.any(String) });
    await vi.waitFor(
      async () => expect(await api.queryOk("server.one", { serverId })).toMatchObject({ online: false }),
      { timeout: HEARTBEAT_TIMEOUT_MS + 5_000, interval: 500 },
    );
    const after = await api.queryOk("server.one", { serverId });
    expect(after).toMatchObject({ serverStatus: "active", lastHeartbeatAt: before.lastHeartbeatAt });
    expect(await servedBody(publishedPort, "/", SERVED_PAGE)).toBe(SERVED_PAGE);
  }, 50_000);
});
