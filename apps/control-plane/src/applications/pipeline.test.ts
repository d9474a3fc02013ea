/**
 * The deployment pipeline end to end: the control plane with its in-process agent on the real
 * Docker Engine, Git repositories served on 127.0.0.1, deployments started through the queue
 * (application.deploy / redeploy) and followed in the deployments table, and the service answering
 * on a host-mode port on 127.0.0.1.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { makeZip } from "@platform/agent/testing/archives.ts";
import {
  dockerCli,
  removeDeployedApps,
  requireDocker,
  TEST_IMAGE,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { freePort, servedBody } from "@platform/agent/testing/net.ts";
import { builderFix } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const run = promisify(execFile);
const DEPLOY_WAIT_MS = 180_000;
const QUICKSTART_IMAGE = "platform-test/static-httpd:latest";

/** An httpd on 8080 serving /www, writing some variables next to the page first. */
const SERVING_DOCKERFILE = `FROM ${TEST_IMAGE}
COPY index.html /www/index.html
CMD ["sh", "-c", "echo \\"$GREETING\\" > /www/env.txt; cp /app/.env /www/dotenv.txt 2>/dev/null; exec httpd -f -p 8080 -h /www"]
`;

let platform: TestPlatform;
let git: GitServer;
let owner: Session;
let environmentId: string;
let projectId: string;
const services: string[] = [];
const images: string[] = [];
const directories: string[] = [];

const as = () => ({ token: owner.token });

const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

async function createApp(name: string): Promise<{ applicationId: string; appName: string }> {
  const appName = uniqueName(`d2-${name}`);
  services.push(appName);
  return ok("application.create", { name, environmentId, appName });
}

async function publish(applicationId: string, targetPort = 8080): Promise<number> {
  const publishedPort = await freePort();
  await ok("port.create", { applicationId, publishedPort, targetPort });
  return publishedPort;
}

const waitForDeployment = (deploymentId: string) => platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);

async function deploy(applicationId: string, kind: "deploy" | "redeploy" = "deploy") {
  const { deploymentId } = await ok(`application.${kind}`, { applicationId });
  return waitForDeployment(deploymentId);
}

async function applicationStatus(applicationId: string): Promise<string> {
  return (await platform.query("application.one", { applicationId }, as())).body.applicationStatus;
}

async function useDockerfile(applicationId: string) {
  await ok("application.saveBuildType", {
    applicationId,
    buildType: "dockerfile",
    dockerfile: "Dockerfile",
    dockerContextPath: ".",
    dockerBuildStage: "",
  });
}

async function gitApp(name: string, repo: string): Promise<{ applicationId: string; appName: string }> {
  const app = await createApp(name);
  await ok("application.saveGitProvider", {
    applicationId: app.applicationId,
    customGitUrl: git.url(repo),
    customGitBranch: "main",
    customGitBuildPath: "/",
    enableSubmodules: false,
  });
  await useDockerfile(app.applicationId);
  return app;
}

beforeAll(async () => {
  await requireDocker();
  // Static builds use the local busybox image (no registry is reachable here); busybox httpd
  // serves /www, where the static build puts the publish directory.
  process.env.PLATFORM_STATIC_IMAGE = TEST_IMAGE;
  process.env.PLATFORM_STATIC_IMAGE_FLAVOR = "busybox-httpd";
  git = await startGitServer();
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "d2-pipeline-"));
  directories.push(mainDirectory);
  platform = await startTestPlatform(
    // The quickstart's nginx cannot be pulled here: the local httpd image serves on port 80 as it does.
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8", PLATFORM_QUICKSTART_IMAGE: QUICKSTART_IMAGE },
    // A fresh server: none of the CLI builders (nixpacks, railpack, pack) is installed.
    { agents: { localAgent: { mainDirectory, toolSearchPath: "/nonexistent" } } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Pipeline" });
  projectId = project.project.projectId;
  environmentId = project.environment.environmentId;
  await ok("project.update", { projectId, env: "SHARED=from-the-project\nPROJECT_ONLY=1" });
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await git?.close();
  for (const image of images) await dockerCli(["image", "rm", "-f", image]).catch(() => {});
  // Only this run's images: other runs of this file may be deploying at the same time.
  await removeDeployedApps(services);
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 120_000);

describe("a new application with no build type set (Dokploy's default, nixpacks)", () => {
  it(
    "reads nixpacks, and its first deploy on a server without nixpacks builds the repository's Dockerfile and serves",
    async () => {
      await git.createRepo("first", { Dockerfile: SERVING_DOCKERFILE, "index.html": "first deploy" });
      const app = await createApp("first");
      await ok("application.saveGitProvider", {
        applicationId: app.applicationId,
        customGitUrl: git.url("first"),
        customGitBranch: "main",
        customGitBuildPath: "/",
        enableSubmodules: false,
      });
      const created = await platform.query("application.one", { applicationId: app.applicationId }, as());
      expect(created.body.buildType).toBe("nixpacks");
      const port = await publish(app.applicationId);

      const first = await deploy(app.applicationId);
      expect(first.status, first.logs).toBe("done");
      expect(first.logs).toContain(
        "nixpacks is not installed on this server: building with the repository's Dockerfile instead of nixpacks",
      );
      expect(await servedBody(port, "/", "first deploy")).toBe("first deploy");
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "without a Dockerfile the deployment fails naming the missing tool and what to do",
    async () => {
      await git.createRepo("no-dockerfile", { "index.html": "nothing to build with" });
      const app = await createApp("nodockerfile");
      await ok("application.saveGitProvider", {
        applicationId: app.applicationId,
        customGitUrl: git.url("no-dockerfile"),
        customGitBranch: "main",
        customGitBuildPath: "/",
        enableSubmodules: false,
      });
      const failed = await deploy(app.applicationId);
      expect(failed.status).toBe("error");
      expect(failed.logs).toContain(
        `nixpacks is not installed on this server (needed for the nixpacks build type): ${builderFix("nixpacks")}`,
      );
      expect(await applicationStatus(app.applicationId)).toBe("error");
    },
    DEPLOY_WAIT_MS,
  );
});

describe("a Git repository with a Dockerfile", () => {
  let app: { applicationId: string; appName: string };
  let port: number;

  it(
    "deploys, inherits variables and answers on its host-mode port; a commit and a redeploy serve the new content",
    async () => {
      const dockerfile = `${SERVING_DOCKERFILE}ARG BUILD_NOTE=unset\nRUN echo "$BUILD_NOTE" > /www/build.txt\n`;
      await git.createRepo("web", { Dockerfile: dockerfile, "index.html": "version one" });
      app = await gitApp("web", "web");
      port = await publish(app.applicationId);
      await ok("application.saveEnvironment", {
        applicationId: app.applicationId,
        createEnvFile: true,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Dokploy's reference syntax, not a template
        env: "GREETING=${{project.SHARED}}\nAPP_ONLY=yes",
        buildArgs: "BUILD_NOTE=from-build-args",
      });

      const first = await deploy(app.applicationId);
      expect(first.status, first.logs).toBe("done");
      expect(first.logs).toContain("Cloning");
      expect(first.logs).toContain("Building");
      expect(first.logs).toContain("Deploying");
      expect(first.logs).toContain("Done");
      expect(first.imageName).toMatch(/^platform\/d2-web-/);
      expect(first.commitHash).toMatch(/^[0-9a-f]{40}$/);
      expect(await applicationStatus(app.applicationId)).toBe("done");
      expect(await servedBody(port, "/", "version one")).toBe("version one");
      expect(await servedBody(port, "/env.txt", "from-the-project")).toBe("from-the-project");
      const dotenv = await servedBody(port, "/dotenv.txt", "");
      expect(dotenv).toContain("GREETING=from-the-project");
      expect(dotenv).toContain("PROJECT_ONLY=1");
      expect(dotenv).toContain("APP_ONLY=yes");
      expect(await servedBody(port, "/build.txt", "from-build-args")).toBe("from-build-args");

      await git.commit("web", { "index.html": "version two" }, "second version");
      const second = await deploy(app.applicationId, "redeploy");
      expect(second.status, second.logs).toBe("done");
      expect(await servedBody(port, "/", "version two")).toBe("version two");
    },
    DEPLOY_WAIT_MS * 2,
  );

  it(
    "a broken Dockerfile fails the deployment with the build output and leaves the previous version serving",
    async () => {
      await git.commit(
        "web",
        { Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo compiling-the-broken-build && exit 3\n` },
        "break the build",
      );
      const broken = await deploy(app.applicationId);
      expect(broken.status).toBe("error");
      expect(broken.errorMessage).toMatch(/build/i);
      expect(broken.logs).toContain("compiling-the-broken-build");
      expect(broken.logs).toContain("Error:");
      expect(await applicationStatus(app.applicationId)).toBe("error");
      expect(await servedBody(port, "/", "version two")).toBe("version two");
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "stop scales the service to 0 (idle), start brings it back (done), reload restarts it",
    async () => {
      const stopped = await ok("application.stop", { applicationId: app.applicationId });
      expect(stopped).toMatchObject({ applicationId: app.applicationId, applicationStatus: "idle" });
      expect(
        await dockerCli([
          "service",
          "inspect",
          "--format",
          "{{.Spec.Mode.Replicated.Replicas}}",
          app.appName,
        ]),
      ).toBe("0");
      const started = await ok("application.start", { applicationId: app.applicationId });
      expect(started.applicationStatus).toBe("done");
      expect(await servedBody(port, "/", "version two")).toBe("version two");
      const wrongName = await platform.mutate(
        "application.reload",
        { applicationId: app.applicationId, appName: "someone-else" },
        as(),
      );
      expect(wrongName.status).toBe(400);
      expect(wrongName.body.error.data.fields).toEqual(["appName"]);
      await ok("application.reload", { applicationId: app.applicationId, appName: app.appName });
      expect(await servedBody(port, "/", "version two")).toBe("version two");
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "redeploy with cleanCache clears the build cache first and builds without the cache",
    async () => {
      await git.commit(
        "web",
        { Dockerfile: SERVING_DOCKERFILE, "index.html": "version three" },
        "fix the build",
      );
      await ok("application.update", { applicationId: app.applicationId, cleanCache: true });
      const result = await deploy(app.applicationId, "redeploy");
      expect(result.status, result.logs).toBe("done");
      expect(result.logs).toContain("Cleaning the build cache");
      expect(result.logs).toMatch(/Build cache cleaned \(\d+ bytes reclaimed\)/);
      expect(result.logs).toContain("--no-cache");
      expect(await servedBody(port, "/", "version three")).toBe("version three");
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "delete removes the Swarm service before the row",
    async () => {
      await ok("application.delete", { applicationId: app.applicationId });
      const listed = await dockerCli([
        "service",
        "ls",
        "--filter",
        `name=${app.appName}`,
        "--format",
        "{{.Name}}",
      ]);
      expect(listed.split("\n")).not.toContain(app.appName);
    },
    DEPLOY_WAIT_MS,
  );
});

describe("application.deployNginxQuickstart", () => {
  it(
    "creates a Hello World application of the quickstart image, routes a generated domain to its port 80 and deploys it",
    async () => {
      const started = await ok("application.deployNginxQuickstart", { environmentId });
      services.push(started.appName);
      const row = await waitForDeployment(started.deploymentId);
      expect(row.status, row.logs).toBe("done");
      const one = (await platform.query("application.one", { applicationId: started.applicationId }, as()))
        .body;
      expect(one).toMatchObject({
        name: "Hello World",
        appName: started.appName,
        sourceType: "docker",
        dockerImage: QUICKSTART_IMAGE,
        applicationStatus: "done",
      });
      const host = new URL(started.domainUrl).host;
      expect(started.domainUrl).toBe(`http://${host}`);
      expect(host).toMatch(/^hello-world-[a-z0-9-]+\..+\.traefik\.me$/);
      expect(one.domains).toEqual([
        expect.objectContaining({ domainId: started.domainId, host, port: 80, https: false }),
      ]);
      const traefik = await platform.query(
        "application.readTraefikConfig",
        { applicationId: started.applicationId },
        as(),
      );
      expect(traefik.body).toContain(`Host(\`${host}\`)`);
      const container = (
        await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${started.appName}`])
      )
        .split("\n")
        .filter(Boolean)[0]!;
      expect((await dockerCli(["inspect", "--format", "{{.Config.Image}}", container])).trim()).toContain(
        QUICKSTART_IMAGE,
      );

      // Another organization's environment is a 404 and creates nothing; an unknown key is a 400.
      const stranger = await createUserDirectly(platform, { email: "quickstart-stranger@example.com" });
      const before = (await platform.query("project.one", { projectId }, as())).body.environments[0]
        .applications.length;
      const foreign = await platform.mutate(
        "application.deployNginxQuickstart",
        { environmentId },
        { token: stranger.token },
      );
      expect(foreign.status).toBe(404);
      const elsewhere = await platform.mutate(
        "application.deployNginxQuickstart",
        { environmentId, serverId: "not-a-server-of-this-organization" },
        as(),
      );
      expect(elsewhere.status).toBe(404);
      const unknown = await platform.mutate(
        "application.deployNginxQuickstart",
        { environmentId, image: "x" },
        as(),
      );
      expect(unknown.status).toBe(400);
      expect(
        (await platform.query("project.one", { projectId }, as())).body.environments[0].applications.length,
      ).toBe(before);
    },
    DEPLOY_WAIT_MS,
  );
});

describe("other sources", () => {
  it(
    "a docker source runs a locally built image without building",
    async () => {
      const image = `platform-test/d2-docker-source:${uniqueName("v")}`;
      images.push(image);
      const context = await mkdtemp(path.join(tmpdir(), "d2-image-"));
      directories.push(context);
      await writeFile(path.join(context, "index.html"), "from a prebuilt image");
      await writeFile(
        path.join(context, "Dockerfile"),
        `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
      );
      await dockerCli(["build", "--quiet", "--tag", image, context]);

      const app = await createApp("docker");
      await ok("application.saveDockerProvider", { applicationId: app.applicationId, dockerImage: image });
      const port = await publish(app.applicationId);
      const result = await deploy(app.applicationId);
      expect(result.status, result.logs).toBe("done");
      expect(result.logs).not.toContain("Building");
      expect(result.imageName).toBe(image);
      expect(await servedBody(port, "/", "from a prebuilt image")).toBe("from a prebuilt image");
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "a static build serves its publish directory",
    async () => {
      await git.createRepo("site", { "public/index.html": "static site", "README.md": "not published" });
      const app = await gitApp("static", "site");
      await ok("application.saveBuildType", {
        applicationId: app.applicationId,
        buildType: "static",
        publishDirectory: "public",
        dockerContextPath: null,
        dockerBuildStage: null,
      });
      // The busybox base image has no web server command of its own.
      await ok("application.update", {
        applicationId: app.applicationId,
        command: "httpd -f -p 8080 -h /www",
      });
      const port = await publish(app.applicationId);
      const result = await deploy(app.applicationId);
      expect(result.status, result.logs).toBe("done");
      expect(await servedBody(port, "/", "static site")).toBe("static site");
      expect(await servedBody(port, "/README.md", "")).not.toBe("not published");
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "a drop upload (.tar.gz, then .zip built in its dropBuildPath) deploys through application.dropDeployment; a redeploy rebuilds it",
    async () => {
      const app = await createApp("drop");
      await useDockerfile(app.applicationId);
      const port = await publish(app.applicationId);
      const source = await mkdtemp(path.join(tmpdir(), "d2-drop-"));
      directories.push(source);
      await writeFile(path.join(source, "Dockerfile"), SERVING_DOCKERFILE);
      await writeFile(path.join(source, "index.html"), "dropped archive");
      const archive = path.join(source, "..", `${path.basename(source)}.tar.gz`);
      directories.push(archive);
      await run("tar", ["-czf", archive, "-C", source, "Dockerfile", "index.html"]);

      const response = await upload(app.applicationId, archive);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({ success: true, deploymentId: expect.any(String) });
      const result = await waitForDeployment(response.body.deploymentId);
      expect(result.status, result.logs).toBe("done");
      expect(await servedBody(port, "/", "dropped archive")).toBe("dropped archive");
      expect(
        (await platform.query("application.one", { applicationId: app.applicationId }, as())).body.sourceType,
      ).toBe("drop");
      // A .zip works the same way (Dokploy's format), built in its dropBuildPath.
      const zipped = await createApp("dropzip");
      await useDockerfile(zipped.applicationId);
      await ok("application.update", { applicationId: zipped.applicationId, dropBuildPath: "site" });
      const zipPort = await publish(zipped.applicationId);
      const zipUpload = await upload(
        zipped.applicationId,
        makeZip([
          { name: "Dockerfile", content: "FROM scratch\n" },
          { name: "site/Dockerfile", content: SERVING_DOCKERFILE },
          { name: "site/index.html", content: "dropped zip" },
        ]),
      );
      expect(zipUpload.status, JSON.stringify(zipUpload.body)).toBe(200);
      const fromZip = await waitForDeployment(zipUpload.body.deploymentId);
      expect(fromZip.status, fromZip.logs).toBe("done");
      expect(await servedBody(zipPort, "/", "dropped zip")).toBe("dropped zip");
      // A redeploy rebuilds the newest stored upload.
      const rebuilt = await deploy(app.applicationId, "redeploy");
      expect(rebuilt.status, rebuilt.logs).toBe("done");
      expect(rebuilt.logs).toContain("Unpacking the uploaded tar.gz archive");
      expect(await servedBody(port, "/", "dropped archive")).toBe("dropped archive");
    },
    DEPLOY_WAIT_MS,
  );
});

async function upload(applicationId: string, file: string | Uint8Array, token = owner.token) {
  const form = new FormData();
  form.set("applicationId", applicationId);
  const bytes = typeof file === "string" ? await readFile(file) : file;
  form.set("zip", new Blob([new Uint8Array(bytes)]), "code.tar.gz");
  const response = await platform.app.request("/api/application.dropDeployment", {
    method: "POST",
    body: form,
    headers: { authorization: `Bearer ${token}` },
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A small valid .tar.gz (one file). */
async function gzipTarball(): Promise<Uint8Array> {
  const directory = await mkdtemp(path.join(tmpdir(), "d2-tarball-"));
  directories.push(directory);
  await writeFile(path.join(directory, "index.html"), "x");
  const { stdout } = await run("tar", ["-cz", "-C", directory, "index.html"], { encoding: "buffer" });
  return new Uint8Array(stdout);
}

describe("bad input", () => {
  let app: { applicationId: string; appName: string };
  const marker = path.join(tmpdir(), `d2-pwned-${process.pid}`);

  beforeAll(async () => {
    app = await createApp("bad");
  });

  it.each([
    ["application.create", () => ({ name: "x", environmentId, appName: "app;touch$IFS/tmp/x" }), "appName"],
    ["application.create", () => ({ name: "x", environmentId, appName: "../etc" }), "appName"],
    [
      "application.saveGitProvider",
      () => ({
        applicationId: app.applicationId,
        customGitUrl: git.url("web"),
        customGitBranch: "main;touch /tmp/x",
        enableSubmodules: false,
      }),
      "customGitBranch",
    ],
    [
      "application.saveGitProvider",
      () => ({
        applicationId: app.applicationId,
        customGitUrl: `ext::sh -c touch% ${marker}`,
        enableSubmodules: false,
      }),
      "customGitUrl",
    ],
    [
      "application.saveGitProvider",
      () => ({
        applicationId: app.applicationId,
        customGitUrl: `--upload-pack=touch ${marker}`,
        enableSubmodules: false,
      }),
      "customGitUrl",
    ],
    [
      "application.saveDockerProvider",
      () => ({ applicationId: app.applicationId, dockerImage: "busybox;touch /tmp/x" }),
      "dockerImage",
    ],
    [
      "application.saveBuildType",
      () => ({
        applicationId: app.applicationId,
        buildType: "dockerfile",
        dockerfile: "../../etc/passwd",
        dockerContextPath: ".",
        dockerBuildStage: "",
      }),
      "dockerfile",
    ],
    [
      "application.saveBuildType",
      () => ({
        applicationId: app.applicationId,
        buildType: "dockerfile",
        dockerContextPath: "src/../../..",
        dockerBuildStage: "",
      }),
      "dockerContextPath",
    ],
    [
      "application.saveBuildType",
      () => ({
        applicationId: app.applicationId,
        buildType: "static",
        publishDirectory: "../",
        dockerContextPath: null,
        dockerBuildStage: null,
      }),
      "publishDirectory",
    ],
    [
      "application.saveEnvironment",
      () => ({ applicationId: app.applicationId, createEnvFile: false, env: "GOOD=1\nBAD\nKEY=2" }),
      "env",
    ],
    [
      "application.saveEnvironment",
      () => ({ applicationId: app.applicationId, createEnvFile: false, env: "A;touch /tmp/x=1" }),
      "env",
    ],
    [
      "port.create",
      () => ({ applicationId: app.applicationId, publishedPort: 70000, targetPort: 80 }),
      "publishedPort",
    ],
  ])("%s refuses a bad value with a 400 naming the field (%#)", async (procedure, input, field) => {
    const response = await platform.mutate(procedure, input(), as());
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toContain(field);
    expect(existsSync(marker)).toBe(false);
  });

  it("a loopback Git URL is refused unless PLATFORM_OUTBOUND_ALLOW covers it", async () => {
    const strict = await startTestPlatform({}, { agents: { localAgent: false } });
    try {
      const session = await strict.registerOwner();
      const project = await strict.mutate("project.create", { name: "P" }, { token: session.token });
      const created = await strict.mutate(
        "application.create",
        { name: "a", environmentId: project.body.environment.environmentId },
        { token: session.token },
      );
      const refused = await strict.mutate(
        "application.saveGitProvider",
        { applicationId: created.body.applicationId, customGitUrl: git.url("web"), enableSubmodules: false },
        { token: session.token },
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["customGitUrl"]);
    } finally {
      await strict.close();
    }
    // With the flag (this platform), the same URL is accepted.
    await ok("application.saveGitProvider", {
      applicationId: app.applicationId,
      customGitUrl: git.url("web"),
      enableSubmodules: false,
    });
  });

  it("an image named on a metadata address is refused before the engine pulls it, even without credentials", async () => {
    const pulled = await createApp("metadata-image");
    await ok("application.saveDockerProvider", {
      applicationId: pulled.applicationId,
      dockerImage: "169.254.169.254/latest/app:1",
    });
    const refused = await deploy(pulled.applicationId);
    expect(refused.status).toBe("error");
    expect(refused.logs).toMatch(/The registry 169\.254\.169\.254 may not be reached: .*link-local/);
    await expect(dockerCli(["service", "inspect", pulled.appName])).rejects.toThrow();
  });

  it(
    "a legal but odd value stays harmless: a branch that does not exist fails the deployment, no marker appears",
    async () => {
      await ok("application.saveGitProvider", {
        applicationId: app.applicationId,
        customGitUrl: git.url("web"),
        customGitBranch: "no-such-branch",
        enableSubmodules: false,
      });
      await ok("application.saveBuildType", {
        applicationId: app.applicationId,
        buildType: "dockerfile",
        dockerfile: "Dockerfile",
        dockerContextPath: ".",
        dockerBuildStage: "",
      });
      await ok("application.saveEnvironment", {
        applicationId: app.applicationId,
        createEnvFile: false,
        env: `HARMLESS=$(touch ${marker}); touch ${marker}`,
      });
      const result = await deploy(app.applicationId);
      expect(result.status).toBe("error");
      expect(result.logs).toContain("no-such-branch");
      expect(existsSync(marker)).toBe(false);
    },
    DEPLOY_WAIT_MS,
  );

  it("the drop upload refuses a missing file, a non-archive, another organization's app and an oversized body", async () => {
    const missing = new FormData();
    missing.set("applicationId", app.applicationId);
    const noFile = await platform.app.request("/api/application.dropDeployment", {
      method: "POST",
      body: missing,
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(noFile.status).toBe(400);
    expect((await noFile.json()).error.data.fields).toEqual(["zip"]);

    const notArchive = await upload(app.applicationId, new TextEncoder().encode("#!/bin/sh\nrm -rf /\n"));
    expect(notArchive.status).toBe(400);
    expect(notArchive.body.error.data.fields).toEqual(["zip"]);

    const unauthenticated = await platform.app.request("/api/application.dropDeployment", {
      method: "POST",
      body: missing,
    });
    expect(unauthenticated.status).toBe(401);

    const stranger = await createUserDirectly(platform, { email: "stranger-drop@example.com" });
    const tarball = await gzipTarball();
    const otherOrganization = await upload(app.applicationId, tarball, stranger.token);
    expect(otherOrganization.status).toBe(404);

    const tooBig = await platform.app.request("/api/application.dropDeployment", {
      method: "POST",
      body: new Uint8Array(100 * 1024 * 1024 + 128 * 1024),
      headers: {
        authorization: `Bearer ${owner.token}`,
        "content-type": "multipart/form-data; boundary=x",
      },
    });
    expect(tooBig.status).toBe(413);
  });

  it(
    "an archive entry escaping its directory fails the deployment and writes nothing outside",
    async () => {
      const drop = await createApp("escape");
      await useDockerfile(drop.applicationId);
      const work = await mkdtemp(path.join(tmpdir(), "d2-escape-"));
      directories.push(work);
      const inner = path.join(work, "inner");
      await mkdir(inner);
      const escapeName = `d2-escaped-${process.pid}.txt`;
      await writeFile(path.join(work, escapeName), "escaped");
      await writeFile(path.join(inner, "Dockerfile"), SERVING_DOCKERFILE);
      const archive = path.join(work, "evil.tar.gz");
      // GNU tar keeps the ../ prefix with -P (absolute names).
      await run("tar", ["-czPf", archive, "-C", inner, "Dockerfile", `../${escapeName}`]);
      await rm(path.join(work, escapeName));
      const response = await upload(drop.applicationId, archive);
      expect(response.status).toBe(200);
      const result = await waitForDeployment(response.body.deploymentId);
      expect(result.status).toBe("error");
      expect(result.logs).toMatch(/escap|\.\.|outside/i);
      expect(existsSync(path.join(work, escapeName))).toBe(false);
    },
    DEPLOY_WAIT_MS,
  );
});

describe("secrets", () => {
  it(
    "build secrets and registry passwords appear in no response and no deployment log",
    async () => {
      const buildSecret = "build-secret-value-7f3a9c";
      const registryPassword = "registry-password-9b2e41";
      await git.createRepo("secret", {
        Dockerfile: `FROM ${TEST_IMAGE}\nRUN --mount=type=secret,id=API_TOKEN test -s /run/secrets/API_TOKEN && cat /run/secrets/API_TOKEN\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
        "index.html": "secret app",
      });
      const app = await gitApp("secret", "secret");
      await ok("application.saveEnvironment", {
        applicationId: app.applicationId,
        createEnvFile: false,
        buildSecrets: `API_TOKEN=${buildSecret}`,
      });
      const built = await deploy(app.applicationId);
      expect(built.status, built.logs).toBe("done");
      expect(built.logs).not.toContain(buildSecret);
      expect(built.errorMessage ?? "").not.toContain(buildSecret);

      const pulled = await createApp("private-image");
      await ok("application.saveDockerProvider", {
        applicationId: pulled.applicationId,
        dockerImage: "127.0.0.1:1/private/app:1",
        username: "deployer",
        password: registryPassword,
        registryUrl: "127.0.0.1:1",
      });
      const failed = await deploy(pulled.applicationId);
      expect(failed.status).toBe("error");
      expect(failed.logs).not.toContain(registryPassword);
      expect(failed.errorMessage ?? "").not.toContain(registryPassword);

      for (const applicationId of [app.applicationId, pulled.applicationId]) {
        const one = JSON.stringify((await platform.query("application.one", { applicationId }, as())).body);
        expect(one).not.toContain(buildSecret);
        expect(one).not.toContain(registryPassword);
      }
      const logs = platform.logLines.join("\n");
      expect(logs).not.toContain(buildSecret);
      expect(logs).not.toContain(registryPassword);
    },
    DEPLOY_WAIT_MS * 2,
  );
});

describe("zero-downtime redeploy", () => {
  const client = uniqueName("d2-netclient");

  afterAll(async () => {
    await dockerCli(["rm", "-f", client]).catch(() => {});
  });

  it(
    "a client polling the service by name on the platform network sees the new version without failed requests",
    async () => {
      await run("bash", [path.resolve(import.meta.dirname, "../../../../scripts/build-netclient-image.sh")]);
      await git.createRepo("rolling", { Dockerfile: SERVING_DOCKERFILE, "index.html": "rolling one" });
      const app = await gitApp("rolling", "rolling");
      // No published port: a host-mode port would force stop-first (two tasks cannot bind it).
      await ok("application.update", {
        applicationId: app.applicationId,
        healthCheckSwarm: {
          Test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/"],
          Interval: 500_000_000,
          Timeout: 1_000_000_000,
          Retries: 3,
        },
      });
      const first = await deploy(app.applicationId);
      expect(first.status, first.logs).toBe("done");

      // The service's virtual IP needs IPVS, which the test machine lacks (like the ingress
      // mesh); tasks.<name> is Swarm's DNS of the running tasks, which the update also goes by.
      const url = `http://tasks.${app.appName}:8080/`;
      await dockerCli([
        "run",
        "-d",
        "--name",
        client,
        "--network",
        "platform-network",
        "--label",
        "platform.test=d2",
        "platform-test/netclient:latest",
        "sh",
        "-c",
        `while true; do curl -fsS -m 2 ${url} || echo request-failed; echo; sleep 0.05; done`,
      ]);
      const answers = async () =>
        (await dockerCli(["logs", client]))
          .split("\n")
          .map((line) => line.trim())
          .filter(Boolean);
      const deadline = Date.now() + 60_000;
      while (!(await answers()).includes("rolling one") && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(await answers()).toContain("rolling one");

      await git.commit("rolling", { "index.html": "rolling two" }, "second version");
      const second = await deploy(app.applicationId, "redeploy");
      expect(second.status, second.logs).toBe("done");
      while (
        (await answers()).filter((line) => line === "rolling two").length < 20 &&
        Date.now() < deadline + 60_000
      ) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const lines = await answers();
      await dockerCli(["rm", "-f", client]);
      const failed = lines.filter(
        (line) => line.includes("request-failed") || line.startsWith("curl:"),
      ).length;
      const served = lines.filter((line) => line === "rolling one" || line === "rolling two").length;
      console.log(`zero-downtime redeploy: ${served} requests served, ${failed} failed`);
      expect(lines.filter((line) => line === "rolling two").length).toBeGreaterThanOrEqual(20);
      expect(failed).toBe(0);
    },
    DEPLOY_WAIT_MS * 2,
  );
});

describe("registries", () => {
  let registry: Record<string, string>;

  beforeAll(async () => {
    const { stdout } = await run("bash", [
      path.resolve(import.meta.dirname, "../../../../scripts/start-test-registry.sh"),
    ]);
    registry = Object.fromEntries(
      stdout
        .split("\n")
        .filter((line) => line.startsWith("TEST_REGISTRY"))
        .map((line) => line.split("=", 2) as [string, string]),
    );
  }, 120_000);

  it(
    "pushes the built image to buildRegistryId, and a docker source pulls it with registryId's credentials",
    async () => {
      const address = registry.TEST_REGISTRY!;
      const password = registry.TEST_REGISTRY_PASSWORD!;
      const created = await ok("registry.create", {
        registryName: "local",
        registryUrl: address,
        username: registry.TEST_REGISTRY_USERNAME,
        password,
        registryType: "selfHosted",
        imagePrefix: "d2",
      });

      await git.createRepo("pushed", {
        Dockerfile: SERVING_DOCKERFILE,
        "index.html": "pulled from the registry",
      });
      const builder = await gitApp("pushed", "pushed");
      await ok("application.update", {
        applicationId: builder.applicationId,
        buildRegistryId: created.registryId,
      });
      const built = await deploy(builder.applicationId);
      expect(built.status, built.logs).toBe("done");
      expect(built.imageName?.startsWith(`${address}/d2/`)).toBe(true);
      expect(built.logs).toContain("Pushed");
      expect(built.logs).not.toContain(password);
      images.push(built.imageName!);

      // The image now exists only in the registry: the docker source must pull it with credentials.
      const pulledImage = built.imageName!;
      await dockerCli(["service", "rm", builder.appName]);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await dockerCli(["image", "rm", "-f", pulledImage]).catch(() => {});
      const runner = await createApp("pulled");
      await ok("application.saveDockerProvider", {
        applicationId: runner.applicationId,
        dockerImage: pulledImage,
      });
      await ok("application.update", { applicationId: runner.applicationId, registryId: created.registryId });
      const port = await publish(runner.applicationId);
      const pulled = await deploy(runner.applicationId);
      expect(pulled.status, pulled.logs).toBe("done");
      expect(pulled.logs).not.toContain(password);
      expect(await servedBody(port, "/", "pulled from the registry")).toBe("pulled from the registry");

      // The application's own credentials (saveDockerProvider username/password/registryUrl) work too.
      await dockerCli(["service", "rm", runner.appName]);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await dockerCli(["image", "rm", "-f", pulledImage]).catch(() => {});
      const own = await createApp("own-credentials");
      await ok("application.saveDockerProvider", {
        applicationId: own.applicationId,
        dockerImage: pulledImage,
        username: registry.TEST_REGISTRY_USERNAME,
        password,
        registryUrl: address,
      });
      const ownPort = await publish(own.applicationId);
      const withOwn = await deploy(own.applicationId);
      expect(withOwn.status, withOwn.logs).toBe("done");
      expect(withOwn.logs).not.toContain(password);
      expect(await servedBody(ownPort, "/", "pulled from the registry")).toBe("pulled from the registry");
    },
    DEPLOY_WAIT_MS * 2,
  );

  it(
    "with rollbackActive, pushes each successful deployment's image to rollbackRegistryId under its prefix, and deploys the local image",
    async () => {
      const address = registry.TEST_REGISTRY!;
      const username = registry.TEST_REGISTRY_USERNAME!;
      const password = registry.TEST_REGISTRY_PASSWORD!;
      const created = await ok("registry.create", {
        registryName: "rollbacks",
        registryUrl: address,
        username,
        password,
        registryType: "selfHosted",
        imagePrefix: "d2-rollbacks",
      });
      await git.createRepo("rollback", {
        Dockerfile: SERVING_DOCKERFILE,
        "index.html": "kept for rollbacks",
      });
      const app = await gitApp("rollback", "rollback");
      await ok("application.update", {
        applicationId: app.applicationId,
        rollbackActive: true,
        rollbackRegistryId: created.registryId,
      });
      const port = await publish(app.applicationId);
      const built = await deploy(app.applicationId);
      expect(built.status, built.logs).toBe("done");
      const pushed = /pushed as (\S+)$/m.exec(built.logs)?.[1] ?? "";
      expect(pushed.startsWith(`${address}/d2-rollbacks/`), built.logs).toBe(true);
      images.push(pushed);
      // The service runs the local build: the rollback copy is not the deployed image.
      expect(built.imageName?.startsWith("platform/")).toBe(true);
      expect(await servedBody(port, "/", "kept for rollbacks")).toBe("kept for rollbacks");
      const [repository, tag] = pushed.slice(address.length + 1).split(":");
      const tags = await fetch(`http://${address}/v2/${repository}/tags/list`, {
        headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
      });
      expect(await tags.json()).toMatchObject({ tags: [tag] });
      expect(built.logs).not.toContain(password);
      expect(platform.logLines.join("\n")).not.toContain(password);
    },
    DEPLOY_WAIT_MS * 2,
  );
});

describe("cancellation and services that were never deployed", () => {
  it(
    "cancelDeployment stops a running build on the agent: the deployment ends without deploying",
    async () => {
      await git.createRepo("slow", {
        Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo slow-build-started && sleep 600\nCMD ["true"]\n`,
      });
      const app = await gitApp("slow", "slow");
      const { deploymentId } = await ok("application.deploy", { applicationId: app.applicationId });
      const started = Date.now() + 120_000;
      let logs = "";
      while (!logs.includes("slow-build-started") && Date.now() < started) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        logs = (
          await platform.ctx.db
            .selectFrom("deployments")
            .select("logs")
            .where("deploymentId", "=", deploymentId)
            .executeTakeFirstOrThrow()
        ).logs;
      }
      expect(logs).toContain("slow-build-started");
      // The build step runs as a container process on this machine.
      const sleeping = async () =>
        (await run("ps", ["-eo", "args"])).stdout.split("\n").filter((line) => line.trim() === "sleep 600")
          .length;
      for (let attempt = 0; attempt < 80 && (await sleeping()) === 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(await sleeping()).toBeGreaterThan(0);
      const cancelled = await ok("application.cancelDeployment", { applicationId: app.applicationId });
      expect(cancelled.success).toBe(true);
      // Without the agent's cancelJob the build would sleep for 10 minutes, past this wait.
      const result = await waitForDeployment(deploymentId);
      expect(result.status).not.toBe("done");
      expect(result.logs).toMatch(/cancel/i);
      // The build step's process (a container process on this machine) is gone, not left sleeping.
      for (let attempt = 0; attempt < 80 && (await sleeping()) > 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(await sleeping()).toBe(0);
      const service = await dockerCli([
        "service",
        "ls",
        "--filter",
        `name=${app.appName}`,
        "--format",
        "{{.Name}}",
      ]);
      expect(service.split("\n")).not.toContain(app.appName);
    },
    DEPLOY_WAIT_MS,
  );

  it("start, stop and reload of an application that was never deployed are a 400", async () => {
    const app = await createApp("never");
    for (const [procedure, input] of [
      ["application.start", { applicationId: app.applicationId }],
      ["application.stop", { applicationId: app.applicationId }],
      ["application.reload", { applicationId: app.applicationId, appName: app.appName }],
    ] as const) {
      const response = await platform.mutate(procedure, input, as());
      expect(response.status, procedure).toBe(400);
    }
    expect(await applicationStatus(app.applicationId)).toBe("idle");
  });
});

describe("Git over SSH", () => {
  let sshdPid: number | undefined;

  afterAll(() => {
    if (sshdPid) process.kill(sshdPid);
  });

  it(
    "clones with the stored SSH key, which appears in no response and no log",
    async () => {
      const pair = await ok("sshKey.generate", { type: "ed25519" });
      const key = await ok("sshKey.create", {
        name: "deploy",
        privateKey: pair.privateKey,
        publicKey: pair.publicKey,
      });
      const sshDir = await mkdtemp(path.join(tmpdir(), "d2-sshd-"));
      directories.push(sshDir);
      await writeFile(path.join(sshDir, "authorized_keys"), `${pair.publicKey.trim()}\n`);
      const port = await freePort();
      const script = path.resolve(import.meta.dirname, "../../../../scripts/start-test-sshd.sh");
      const { stdout } = await run("bash", [script, "--dir", sshDir, "--port", String(port)]);
      sshdPid = Number(/SSHD_PID=(\d+)/.exec(stdout)?.[1]);

      await git.createRepo("viassh", { Dockerfile: SERVING_DOCKERFILE, "index.html": "cloned over ssh" });
      const app = await createApp("ssh");
      await ok("application.saveGitProvider", {
        applicationId: app.applicationId,
        customGitUrl: `ssh://root@127.0.0.1:${port}${git.root}/viassh.git`,
        customGitBranch: "main",
        customGitSSHKeyId: key.sshKeyId,
        enableSubmodules: false,
      });
      await useDockerfile(app.applicationId);
      const published = await publish(app.applicationId);
      const result = await deploy(app.applicationId);
      expect(result.status, result.logs).toBe("done");
      expect(await servedBody(published, "/", "cloned over ssh")).toBe("cloned over ssh");

      const keyLines = (pair.privateKey as string)
        .split("\n")
        .filter((line) => line.length >= 16 && !line.startsWith("-----"));
      expect(keyLines.length).toBeGreaterThan(0);
      const one = JSON.stringify(
        (await platform.query("application.one", { applicationId: app.applicationId }, as())).body,
      );
      const logs = platform.logLines.join("\n");
      for (const line of keyLines) {
        expect(result.logs).not.toContain(line);
        expect(one).not.toContain(line);
        expect(logs).not.toContain(line);
      }
    },
    DEPLOY_WAIT_MS,
  );
});
