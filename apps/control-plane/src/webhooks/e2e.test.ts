/**
 * Webhooks end to end: a Git repository served on 127.0.0.1 with a Dockerfile, a custom-Git
 * application published on a host-mode port, and the real pipeline on the real Docker Engine.
 * A GitHub push webhook deploys it; a commit plus a webhook serves the new content; a push to
 * another branch and a push touching only unwatched files deploy nothing.
 */
import { removeDeployedApps, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { freePort, servedBody } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { githubPush } from "./samples.ts";

const DEPLOY_WAIT_MS = 180_000;
const DOCKERFILE = `FROM ${TEST_IMAGE}
COPY index.html /www/index.html
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
`;

let platform: TestPlatform;
let git: GitServer;
let owner: Session;
const appName = uniqueName("webhook-e2e");
const as = () => ({ token: owner.token });

const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

const waitForDeployment = (deploymentId: string) => platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);

beforeAll(async () => {
  await requireDocker();
  git = await startGitServer();
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory: "/nonexistent" } } },
  );
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await git?.close();
  await removeDeployedApps([appName]);
}, 120_000);

describe("a GitHub push webhook on a real repository", () => {
  it("deploys on push, redeploys the new commit, and ignores other branches and unwatched files", async () => {
    const firstSha = await git.createRepo("hooked", { Dockerfile: DOCKERFILE, "index.html": "version one" });
    const project = await ok("project.create", { name: "Webhooks" });
    const app = await ok("application.create", {
      name: "hooked",
      appName,
      environmentId: project.environment.environmentId,
    });
    const applicationId = app.applicationId as string;
    await ok("application.saveGitProvider", {
      applicationId,
      customGitUrl: git.url("hooked"),
      customGitBranch: "main",
      customGitBuildPath: "/",
      enableSubmodules: false,
      watchPaths: ["**", "!docs/**"],
    });
    await ok("application.saveBuildType", {
      applicationId,
      buildType: "dockerfile",
      dockerfile: "Dockerfile",
      dockerContextPath: ".",
      dockerBuildStage: "",
    });
    const port = await freePort();
    await ok("port.create", { applicationId, publishedPort: port, targetPort: 8080 });
    const { refreshToken } = (await platform.query("application.one", { applicationId }, as())).body;

    const hook = (payload: unknown): Promise<ApiResponse> =>
      platform.request(`/api/deploy/github/${applicationId}?refreshToken=${refreshToken}`, {
        method: "POST",
        body: JSON.stringify(payload),
        headers: { "x-github-event": "push" },
      });
    const push = (ref: string, sha: string, message: string, files: string[]) => ({
      ...githubPush(ref, [{ message, modified: files }]),
      after: sha,
    });

    const first = await hook(push("refs/heads/main", firstSha, "first version", ["index.html"]));
    expect(first.body).toMatchObject({ deployed: true });
    const firstRun = await waitForDeployment(first.body.deploymentId);
    expect(firstRun.status, firstRun.logs).toBe("done");
    expect(firstRun.title).toBe(`GitHub push ${firstSha.slice(0, 7)}`);
    expect(await servedBody(port, "/", "version one")).toBe("version one");

    const secondSha = await git.commit("hooked", { "index.html": "version two" }, "second version");
    const second = await hook(push("refs/heads/main", secondSha, "second version", ["index.html"]));
    expect(second.body).toMatchObject({ deployed: true });
    const secondRun = await waitForDeployment(second.body.deploymentId);
    expect(secondRun.status, secondRun.logs).toBe("done");
    expect(secondRun.commitHash).toBe(secondSha);
    expect(await servedBody(port, "/", "version two")).toBe("version two");

    const otherSha = await git.commit(
      "hooked",
      { "index.html": "version on a branch" },
      "branch work",
      "feature",
    );
    const other = await hook(push("refs/heads/feature", otherSha, "branch work", ["index.html"]));
    expect(other.body).toMatchObject({
      deployed: false,
      message: expect.stringMatching(/not the application's branch/),
    });

    const docsSha = await git.commit("hooked", { "docs/notes.md": "notes" }, "docs only");
    const docs = await hook(push("refs/heads/main", docsSha, "docs only", ["docs/notes.md"]));
    expect(docs.body).toMatchObject({ deployed: false, message: expect.stringMatching(/watchPaths/) });

    const deployments = (await platform.query("deployment.all", { applicationId }, as())).body as unknown[];
    expect(deployments).toHaveLength(2);
    expect(await servedBody(port, "/", "version two")).toBe("version two");
  }, 400_000);
});
