/**
 * A build on a build server under a kill -9 of the control plane, with the real processes
 * (deploy-harness.ts: a restartable control plane, the application's server's agent, and a
 * second agent enrolled for a server of serverType build), the local test registry as the build
 * registry and a Git repository served on 127.0.0.1. Version 1 is built on the build server and
 * served; version 2's build is provably under way (its log shows the build step) when the
 * control plane is killed -9 and started again. The deployment ends (never left running), and
 * the application serves what its state says: version 2 when it is done, version 1 otherwise.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { type GitServer, startGitServer } from "../../apps/agent/src/testing/git-server.ts";
import { startTestRegistries, type TestRegistries } from "../../apps/agent/src/testing/registry.ts";
import { DeployFaultRig, type FaultApp } from "./deploy-harness.ts";

const rig = new DeployFaultRig();
let git: GitServer;
let app: FaultApp;
let registries: TestRegistries;
const imagePrefix = uniqueName("bsf").toLowerCase();
/** Makes this run's build steps its own: the engine's build cache cannot skip them. */
const runMark = uniqueName("mark");
const pushed: string[] = [];

const dockerfile = (extra = "") => `FROM ${TEST_IMAGE}
${extra}COPY index.html /www/index.html
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
`;

async function settledDeployment(deploymentId: string) {
  let row: Awaited<ReturnType<typeof rig.deployments>>[number] | undefined;
  await rig.until(
    `the deployment ${deploymentId} to settle`,
    async () => {
      row = (await rig.deployments(app)).find((item) => item.deploymentId === deploymentId);
      return row?.status === "done" || row?.status === "error";
    },
    120_000,
  );
  return row!;
}

/** Reads the deployment's log stream until a line matches `pattern`. */
async function logShows(deploymentId: string, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  const response = await fetch(
    `${rig.api.baseUrl}/api/deployment.logs?deploymentId=${encodeURIComponent(deploymentId)}`,
    { headers: { authorization: `Bearer ${rig.api.token}` }, signal: AbortSignal.timeout(timeoutMs) },
  );
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    if (pattern.test(text)) {
      await response.body!.cancel().catch(() => {});
      return;
    }
  }
  throw new Error(`the log ended without ${pattern}:\n${text}`);
}

async function served(): Promise<string> {
  try {
    const response = await fetch(`http://127.0.0.1:${app.port}/`, { signal: AbortSignal.timeout(2000) });
    return (await response.text()).trim();
  } catch {
    return "";
  }
}

beforeAll(async () => {
  await requireDocker();
  registries = await startTestRegistries();
  git = await startGitServer();
  await git.createRepo("app", { Dockerfile: dockerfile(), "index.html": "v1" });
  await rig.start({ PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" });
  const builder = await rig.enrollAgent("builder", "build");
  const registry = await rig.api.mutateOk("registry.create", {
    registryName: "Local test registry",
    registryUrl: registries.http,
    username: registries.username,
    password: registries.password,
    registryType: "selfHosted",
    imagePrefix,
  });
  app = await rig.createApp();
  const { applicationId } = app;
  await rig.api.mutateOk("application.update", { applicationId, command: null });
  await rig.api.mutateOk("application.saveGitProvider", {
    applicationId,
    customGitUrl: git.url("app"),
    customGitBranch: "main",
    customGitBuildPath: "/",
    enableSubmodules: false,
  });
  await rig.api.mutateOk("application.saveBuildType", {
    applicationId,
    buildType: "dockerfile",
    dockerfile: "Dockerfile",
    dockerContextPath: ".",
    dockerBuildStage: "",
  });
  await rig.api.mutateOk("application.update", {
    applicationId,
    buildServerId: builder.serverId,
    buildRegistryId: registry.registryId,
  });
  const { deploymentId } = await rig.api.mutateOk("application.deploy", { applicationId });
  pushed.push(`${registries.http}/${imagePrefix}/${app.appName}:${deploymentId}`);
  expect(await settledDeployment(deploymentId)).toMatchObject({ status: "done" });
  await rig.until("version 1 served", async () => (await served()) === "v1", 30_000);
}, 300_000);

afterAll(async () => {
  await rig.close();
  await dockerCli(["service", "rm", app?.appName ?? "none"]).catch(() => {});
  for (const image of pushed) await dockerCli(["image", "rm", "-f", image]).catch(() => {});
  await git?.close();
}, 120_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.error(rig.processOutput()));
});

describe("a build on a build server under a kill -9 of the control plane", () => {
  it("killed during the build: the deployment ends, the application serves what its state says", async () => {
    await git.commit(
      "app",
      { Dockerfile: dockerfile(`RUN echo ${runMark} && sleep 8\n`), "index.html": "v2" },
      "version 2, with a slow build step",
    );
    const { deploymentId } = await rig.api.mutateOk("application.deploy", {
      applicationId: app.applicationId,
    });
    pushed.push(`${registries.http}/${imagePrefix}/${app.appName}:${deploymentId}`);
    await logShows(deploymentId, new RegExp(runMark));
    await rig.controlPlane.stop("SIGKILL");
    await rig.controlPlane.start();

    const row = await settledDeployment(deploymentId);
    const label = await dockerCli([
      "service",
      "inspect",
      app.appName,
      "--format",
      '{{index .Spec.Labels "platform.deployment-id"}}',
    ]);
    if (row.status === "done") {
      expect(label.trim()).toBe(deploymentId);
      await rig.until("version 2 served", async () => (await served()) === "v2", 30_000);
    } else {
      expect(row.errorMessage).toMatch(/restart|control plane/i);
      expect(label.trim()).not.toBe(deploymentId);
      expect(await served()).toBe("v1");
    }
    // The control plane runs the build again after its restart: the user asked for version 2.
    expect(row).toMatchObject({ status: "done", errorMessage: null });
    const log = await rig.api.followDeploymentLog(deploymentId);
    expect(log.lines.join("\n")).toContain(
      "The control plane restarted before this deployment reached its service",
    );
  }, 150_000);
});
