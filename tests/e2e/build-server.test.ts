/**
 * A build server end to end (issue 27 item 4), as a user drives it through the public API: the
 * control plane and two agent processes on this machine (one enrolled for a server of
 * serverType build, one for the server the application runs on) over a private NATS, the local
 * test registry (Debian's docker-registry, scripts/start-test-registry.sh) stored as the
 * application's build registry, and a Git repository served on 127.0.0.1. A deploy builds on the
 * build server's agent, pushes to the registry, and the target's agent pulls the pushed image and
 * runs it; the deployment record names both servers. A second version, then a rollback to the
 * first: the rollback kept on the target deploys the pulled image again, with no build.
 * Both agents talk to this machine's one Docker engine: what shows that each did its part is
 * its own log stream in the deployment's log (the build's push, the deploy's pull) and the
 * registry's tag list.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  dockerCli,
  removeDeployedApps,
  requireDocker,
  TEST_IMAGE,
  uniqueName,
} from "../../apps/agent/src/testing/docker.ts";
import { type GitServer, startGitServer } from "../../apps/agent/src/testing/git-server.ts";
import { freePort, servedBody } from "../../apps/agent/src/testing/net.ts";
import { startTestRegistries, type TestRegistries } from "../../apps/agent/src/testing/registry.ts";
import { AgentProcesses } from "../support/agent-processes.ts";
import type { ApiClient } from "../support/control-plane.ts";

const SERVING_DOCKERFILE = `FROM ${TEST_IMAGE}
COPY index.html /www/index.html
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
`;
const DEPLOY_WAIT_MS = 180_000;

const appName = uniqueName("e2e-buildsrv");
/** The registry path the pushes go to: this run's only. */
const imagePrefix = uniqueName("bs").toLowerCase();
const processes = new AgentProcesses();
let git: GitServer | undefined;
let registries: TestRegistries;
let api: ApiClient;
const serverIds = { builder: "", target: "" };
let applicationId: string;
let publishedPort: number;
const pushedImages: string[] = [];

beforeAll(async () => {
  await requireDocker();
  registries = await startTestRegistries();
  git = await startGitServer();
  await git.createRepo("app", { Dockerfile: SERVING_DOCKERFILE, "index.html": "built on the build server" });
  // The Git server and the registry listen on 127.0.0.1.
  await processes.start({ PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" });
  api = processes.api;
}, 300_000);

processes.stepsBuildOnEachOther();

afterAll(
  () =>
    processes.close([
      () => removeDeployedApps([appName]),
      ...pushedImages.map((image) => () => dockerCli(["image", "rm", "-f", image])),
      async () => git?.close(),
    ]),
  120_000,
);

async function enroll(name: "builder" | "target", serverType: "build" | "deploy") {
  const { server } = await processes.enroll({ name, serverType });
  serverIds[name] = server.serverId;
}

async function deploy(kind: "deploy" | "rollback", rollbackId?: string) {
  const { deploymentId } =
    kind === "deploy"
      ? await api.mutateOk("application.deploy", { applicationId })
      : await api.mutateOk("rollback.rollback", { rollbackId });
  const log = await api.followDeploymentLog(deploymentId, DEPLOY_WAIT_MS);
  const text = log.lines.join("\n");
  expect(log.end, text).toEqual({ status: "done", errorMessage: null });
  const listed = await api.queryOk<Array<Record<string, any>>>("deployment.all", { applicationId });
  return { deploymentId, text, row: listed.find((item) => item.deploymentId === deploymentId)! };
}

describe("a build server driven through the API", () => {
  it("two agents enroll: one for a build server, one for the application's server", async () => {
    await processes.registerOwner();
    await enroll("builder", "build");
    await enroll("target", "deploy");
    await vi.waitFor(
      async () => {
        for (const name of ["builder", "target"] as const) {
          expect(processes.agents.get(name)!.child.exitCode, `the ${name} agent exited`).toBeNull();
          expect(await api.queryOk("server.one", { serverId: serverIds[name] })).toMatchObject({
            serverStatus: "active",
            online: true,
          });
        }
      },
      { timeout: 45_000, interval: 250 },
    );
    expect(await api.queryOk("server.one", { serverId: serverIds.builder })).toMatchObject({
      serverType: "build",
    });
  }, 60_000);

  it(
    "a deploy builds on the build server, pushes to the registry, and the target pulls and serves it",
    async () => {
      const registry = await api.mutateOk("registry.create", {
        registryName: "Local test registry",
        registryUrl: registries.http,
        username: registries.username,
        password: registries.password,
        registryType: "selfHosted",
        imagePrefix,
      });
      const project = await api.mutateOk("project.create", { name: "Builds" });
      const application = await api.mutateOk("application.create", {
        name: "web",
        appName,
        environmentId: project.environment.environmentId,
        serverId: serverIds.target,
      });
      applicationId = application.applicationId;
      await api.mutateOk("application.saveGitProvider", {
        applicationId,
        customGitUrl: git!.url("app"),
        customGitBranch: "main",
        customGitBuildPath: "/",
        enableSubmodules: false,
      });
      await api.mutateOk("application.saveBuildType", {
        applicationId,
        buildType: "dockerfile",
        dockerfile: "Dockerfile",
        dockerContextPath: ".",
        dockerBuildStage: "",
      });
      // The target is a deploy server: as a build server it is refused.
      const wrong = await api.mutate("application.update", {
        applicationId,
        buildServerId: serverIds.target,
        buildRegistryId: registry.registryId,
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.data.fields).toEqual(["buildServerId"]);
      await api.mutateOk("application.update", {
        applicationId,
        buildServerId: serverIds.builder,
        buildRegistryId: registry.registryId,
      });
      publishedPort = await freePort();
      await api.mutateOk("port.create", {
        applicationId,
        publishedPort,
        targetPort: 8080,
        publishMode: "host",
      });

      const { deploymentId, text, row } = await deploy("deploy");
      const pushed = `${registries.http}/${imagePrefix}/${appName}:${deploymentId}`;
      pushedImages.push(pushed);
      // The build server's agent built and pushed (its own log stream), the target's pulled.
      expect(text).toContain(`Building on the build server builder (${serverIds.builder})`);
      expect(text).toContain(`pushed ${pushed}`);
      expect(text).toContain(`pulled ${pushed}`);
      expect(text.indexOf(`pushed ${pushed}`)).toBeLessThan(text.indexOf(`pulled ${pushed}`));
      expect(text).not.toContain(registries.password);
      expect(row).toMatchObject({
        serverId: serverIds.target,
        buildServerId: serverIds.builder,
        imageName: pushed,
        rollbackId: expect.any(String),
      });
      const tags = await fetch(`http://${registries.http}/v2/${imagePrefix}/${appName}/tags/list`, {
        headers: {
          authorization: `Basic ${Buffer.from(`${registries.username}:${registries.password}`).toString("base64")}`,
        },
      });
      expect(await tags.json()).toMatchObject({ tags: [deploymentId] });
      expect(await servedBody(publishedPort, "/", "built on the build server")).toBe(
        "built on the build server",
      );
      // The service runs the pushed image.
      const image = await dockerCli([
        "service",
        "inspect",
        appName,
        "--format",
        "{{.Spec.TaskTemplate.ContainerSpec.Image}}",
      ]);
      expect(image.startsWith(pushed)).toBe(true);
    },
    DEPLOY_WAIT_MS + 30_000,
  );

  it(
    "a second version, then a rollback to the first: the kept image runs again without a build",
    async () => {
      const first = (await api.queryOk<Array<Record<string, any>>>("deployment.all", { applicationId }))[0]!;
      await git!.commit("app", { "index.html": "second version" }, "v2");
      const second = await deploy("deploy");
      pushedImages.push(second.row.imageName);
      expect(second.row.buildServerId).toBe(serverIds.builder);
      expect(await servedBody(publishedPort, "/", "second version")).toBe("second version");

      const back = await deploy("rollback", first.rollbackId);
      expect(back.text).toContain("(no build)");
      expect(back.text).not.toContain("Building");
      expect(back.row).toMatchObject({
        serverId: serverIds.target,
        buildServerId: null,
        rollbackId: first.rollbackId,
      });
      expect(await servedBody(publishedPort, "/", "built on the build server")).toBe(
        "built on the build server",
      );
    },
    2 * DEPLOY_WAIT_MS,
  );
});
