/**
 * patch.* end to end: the control plane with its in-process agent on the real Docker Engine and a
 * Git repository served on 127.0.0.1. Patches saved through the API (an application's and a
 * compose stack's) are applied by the agent to the fresh clone before the build: one replaces a
 * file, one creates a file, one deletes a file, a disabled one is left out, as the running
 * container serves and the deployment log says. Paths that would leave the clone, NUL and
 * over-long content are 400s naming the field with nothing stored; another organization's
 * service or patch is a 404.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeDeployedApps,
  requireDocker,
  TEST_IMAGE,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { freePort, servedBody } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PATCH_CONTENT_BYTES } from "../patches/validation.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const DEPLOY_WAIT_MS = 180_000;

/** Serves site/ with busybox httpd; lists what it copied so that a deleted file shows missing. */
const DOCKERFILE = `FROM ${TEST_IMAGE}
COPY site/ /www/
RUN ls /www > /www/listing.txt
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
`;

let platform: TestPlatform;
let git: GitServer;
let owner: Session;
let stranger: Session;
let environmentId: string;
let app: { applicationId: string; appName: string };
const services: string[] = [];
const directories: string[] = [];

const as = (session = owner) => ({ token: session.token });
const ok = (name: string, input: Record<string, unknown>, session = owner) =>
  platform.mutateOk(name, input, as(session));

const rows = () =>
  platform.ctx.db
    .selectFrom("patches")
    .selectAll()
    .where("applicationId", "=", app.applicationId)
    .orderBy("filePath")
    .execute();

beforeAll(async () => {
  await requireDocker();
  git = await startGitServer();
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-patches-"));
  directories.push(mainDirectory);
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory, toolSearchPath: "/nonexistent" } } },
  );
  owner = await platform.registerOwner();
  stranger = await createUserDirectly(platform, { email: `stranger-${process.pid}@example.com` });
  const project = await ok("project.create", { name: "Patches" });
  environmentId = project.environment.environmentId;
  await git.createRepo("site", {
    Dockerfile: DOCKERFILE,
    "site/index.html": "from the repository",
    "site/old.html": "to be deleted",
    "site/kept.html": "kept as it is",
  });
  const appName = uniqueName("patches");
  services.push(appName);
  app = await ok("application.create", { name: "patched", environmentId, appName });
  await ok("application.saveGitProvider", {
    applicationId: app.applicationId,
    customGitUrl: git.url("site"),
    customGitBranch: "main",
    customGitBuildPath: "/",
    enableSubmodules: false,
  });
  await ok("application.saveBuildType", {
    applicationId: app.applicationId,
    buildType: "dockerfile",
    dockerfile: "Dockerfile",
    dockerContextPath: ".",
    dockerBuildStage: "",
  });
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await git?.close();
  await removeDeployedApps(services);
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 120_000);

describe("saving patches", () => {
  it("create, saveFileAsPatch and markFileForDeletion store the service's patches; byEntityId lists them by path", async () => {
    const replaced = await ok("patch.create", {
      applicationId: app.applicationId,
      filePath: "site/index.html",
      content: "an early draft",
      type: "update",
    });
    expect(replaced).toMatchObject({
      filePath: "site/index.html",
      type: "update",
      enabled: true,
      applicationId: app.applicationId,
      composeId: null,
    });
    // saveFileAsPatch of the same path changes that patch (one patch per file of a service).
    const saved = await ok("patch.saveFileAsPatch", {
      id: app.applicationId,
      type: "application",
      filePath: "./site//index.html",
      content: "patched by the platform",
    });
    expect(saved.patchId).toBe(replaced.patchId);
    expect(saved.content).toBe("patched by the platform");
    await ok("patch.saveFileAsPatch", {
      id: app.applicationId,
      type: "application",
      filePath: "site/new.html",
      content: "created by a patch",
      patchType: "create",
    });
    await ok("patch.markFileForDeletion", {
      id: app.applicationId,
      type: "application",
      filePath: "site/old.html",
    });
    const disabled = await ok("patch.create", {
      applicationId: app.applicationId,
      filePath: "site/kept.html",
      content: "must not be applied",
      enabled: false,
    });
    expect(disabled.enabled).toBe(false);

    const listed = await platform.query(
      "patch.byEntityId",
      { id: app.applicationId, type: "application" },
      as(),
    );
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(
      listed.body.map((patch: { filePath: string; type: string }) => [patch.filePath, patch.type]),
    ).toEqual([
      ["site/index.html", "update"],
      ["site/kept.html", "update"],
      ["site/new.html", "create"],
      ["site/old.html", "delete"],
    ]);
    const one = await platform.query("patch.one", { patchId: replaced.patchId }, as());
    expect(one.body.content).toBe("patched by the platform");
  });

  it("update changes a patch's fields; toggleEnabled turns it off and on; delete removes it", async () => {
    const draft = await ok("patch.create", {
      applicationId: app.applicationId,
      filePath: "site/draft.html",
      content: "draft",
    });
    const updated = await ok("patch.update", {
      patchId: draft.patchId,
      filePath: "site/draft2.html",
      content: "second draft",
      type: "create",
      enabled: false,
    });
    expect(updated).toMatchObject({
      filePath: "site/draft2.html",
      content: "second draft",
      type: "create",
      enabled: false,
    });
    expect((await ok("patch.toggleEnabled", { patchId: draft.patchId, enabled: true })).enabled).toBe(true);
    const clash = await platform.mutate(
      "patch.update",
      { patchId: draft.patchId, filePath: "site/new.html" },
      as(),
    );
    expect(clash.status).toBe(409);
    expect(clash.body.error.data.fields).toEqual(["filePath"]);
    const deleted = await ok("patch.delete", { patchId: draft.patchId });
    expect(deleted.patchId).toBe(draft.patchId);
    expect((await platform.query("patch.one", { patchId: draft.patchId }, as())).status).toBe(404);
  });

  it.each([
    ["a '..' part", { filePath: "site/../../etc/passwd" }, "filePath"],
    ["an absolute path", { filePath: "/etc/passwd" }, "filePath"],
    ["a Windows drive", { filePath: "C:\\Windows\\x" }, "filePath"],
    ["a NUL", { filePath: "site/a\u0000b.html" }, "filePath"],
    ["a newline", { filePath: "site/a\nb.html" }, "filePath"],
    ["a path inside .git", { filePath: ".git/hooks/post-checkout" }, "filePath"],
    ["an empty path", { filePath: "./" }, "filePath"],
    ["a path over 1024 characters", { filePath: `site/${"a".repeat(1100)}` }, "filePath"],
    ["content over the limit", { content: "x".repeat(MAX_PATCH_CONTENT_BYTES + 1) }, "content"],
    ["content with a NUL", { content: "a\u0000b" }, "content"],
    ["an unknown type", { type: "rename" }, "type"],
  ])("%s is a 400 naming the field, nothing stored", async (_what, change, field) => {
    const before = await rows();
    const input = { applicationId: app.applicationId, filePath: "site/x.html", content: "x", ...change };
    const created = await platform.mutate("patch.create", input, as());
    expect(created.status, JSON.stringify(created.body)).toBe(400);
    expect(created.body.error.data.fields).toContain(field);
    const saved = await platform.mutate(
      "patch.saveFileAsPatch",
      { id: app.applicationId, type: "application", filePath: "site/x.html", content: "x", ...change },
      as(),
    );
    if (field !== "type") {
      expect(saved.status).toBe(400);
      expect(saved.body.error.data.fields).toContain(field);
    }
    expect(await rows()).toEqual(before);
  });

  it("the service's patches together stay within one build command's budget (400 naming content)", async () => {
    const big = "y".repeat(MAX_PATCH_CONTENT_BYTES);
    const first = await ok("patch.create", {
      applicationId: app.applicationId,
      filePath: "big/1.txt",
      content: big,
    });
    const second = await platform.mutate(
      "patch.create",
      { applicationId: app.applicationId, filePath: "big/2.txt", content: big },
      as(),
    );
    expect(second.status, JSON.stringify(second.body)).toBe(400);
    expect(second.body.error.data.fields).toEqual(["content"]);
    await ok("patch.delete", { patchId: first.patchId });
  });

  it("needs exactly one of applicationId and composeId; a compose stack has patches of its own", async () => {
    const neither = await platform.mutate("patch.create", { filePath: "a.txt", content: "a" }, as());
    expect(neither.status).toBe(400);
    expect(neither.body.error.data.fields).toContain("applicationId");
    const stackName = uniqueName("patches-stack");
    const compose = await ok("compose.create", {
      name: stackName,
      appName: stackName,
      environmentId,
      composeFile: "services:\n  web:\n    image: nginx:alpine\n",
    });
    const both = await platform.mutate(
      "patch.create",
      { filePath: "a.txt", content: "a", applicationId: app.applicationId, composeId: compose.composeId },
      as(),
    );
    expect(both.status).toBe(400);
    const ofStack = await ok("patch.create", {
      composeId: compose.composeId,
      filePath: "site/index.html",
      content: "s",
    });
    expect(ofStack).toMatchObject({ composeId: compose.composeId, applicationId: null });
    const listed = await platform.query("patch.byEntityId", { id: compose.composeId, type: "compose" }, as());
    expect(listed.body.map((patch: { patchId: string }) => patch.patchId)).toEqual([ofStack.patchId]);
    // The application's list does not hold the stack's patch of the same path.
    const ofApp = await platform.query(
      "patch.byEntityId",
      { id: app.applicationId, type: "application" },
      as(),
    );
    expect(ofApp.body.some((patch: { patchId: string }) => patch.patchId === ofStack.patchId)).toBe(false);
  });

  it("another organization's service or patch is a 404 to every procedure, nothing changed", async () => {
    const before = await rows();
    const [patch] = before;
    const patchId = patch!.patchId;
    const service = { id: app.applicationId, type: "application" };
    const calls: [string, Record<string, unknown>, "query" | "mutate"][] = [
      ["patch.one", { patchId }, "query"],
      ["patch.byEntityId", service, "query"],
      ["patch.create", { applicationId: app.applicationId, filePath: "evil.txt", content: "x" }, "mutate"],
      ["patch.update", { patchId, content: "evil" }, "mutate"],
      ["patch.delete", { patchId }, "mutate"],
      ["patch.toggleEnabled", { patchId, enabled: false }, "mutate"],
      ["patch.saveFileAsPatch", { ...service, filePath: "evil.txt", content: "x" }, "mutate"],
      ["patch.markFileForDeletion", { ...service, filePath: "site/index.html" }, "mutate"],
    ];
    for (const [name, input, kind] of calls) {
      const answer =
        kind === "query"
          ? await platform.query(name, input, as(stranger))
          : await platform.mutate(name, input, as(stranger));
      expect(answer.status, name).toBe(404);
    }
    expect(await rows()).toEqual(before);
  });
});

describe("a deployment applies the enabled patches to the clone before the build", () => {
  it("replaces, creates and deletes files in the built image and logs each; a disabled patch is left out", async () => {
    const port = await freePort();
    await ok("port.create", { applicationId: app.applicationId, publishedPort: port, targetPort: 8080 });
    const { deploymentId } = await ok("application.deploy", { applicationId: app.applicationId });
    const deployment = await platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
    expect(deployment.status, deployment.logs).toBe("done");
    expect(deployment.logs).toContain("Applying 3 patch(es)");
    expect(deployment.logs).toContain("patch: replaced site/index.html");
    expect(deployment.logs).toContain("patch: created site/new.html");
    expect(deployment.logs).toContain("patch: deleted site/old.html");
    expect(deployment.logs).not.toContain("site/kept.html");

    expect(await servedBody(port, "/", "patched by the platform")).toBe("patched by the platform");
    expect(await servedBody(port, "/new.html", "created by a patch")).toBe("created by a patch");
    expect(await servedBody(port, "/kept.html", "kept as it is")).toBe("kept as it is");
    const listing = (await servedBody(port, "/listing.txt", "")).split(/\s+/);
    expect(listing).toEqual(expect.arrayContaining(["index.html", "kept.html", "new.html"]));
    expect(listing).not.toContain("old.html");
    const missing = await fetch(`http://127.0.0.1:${port}/old.html`);
    expect(missing.status).toBe(404);

    // The image itself holds the patched file (what the container serves comes from it).
    const image = deployment.imageName as string;
    const index = await dockerCli(["run", "--rm", "--entrypoint", "cat", image, "/www/index.html"]);
    expect(index).toBe("patched by the platform");
  }, 240_000);
});

describe("browsing the repository for the patch editor", () => {
  it("ensureRepo clones the branch and answers the handle; readRepoDirectories lists the branch as a tree", async () => {
    const handle = await ok("patch.ensureRepo", { id: app.applicationId, type: "application" });
    expect(handle).toBe(`application/${app.appName}`);
    const tree = await platform.query(
      "patch.readRepoDirectories",
      { id: app.applicationId, type: "application", repoPath: handle },
      as(),
    );
    expect(tree.status, JSON.stringify(tree.body)).toBe(200);
    expect(tree.body).toEqual([
      { name: "Dockerfile", path: "Dockerfile", type: "file" },
      {
        name: "site",
        path: "site",
        type: "directory",
        children: [
          { name: "index.html", path: "site/index.html", type: "file" },
          { name: "kept.html", path: "site/kept.html", type: "file" },
          { name: "old.html", path: "site/old.html", type: "file" },
        ],
      },
    ]);
    for (const repoPath of ["/etc/dokploy/patch-repos/application/x", "../..", "compose/other"]) {
      const refused = await platform.query(
        "patch.readRepoDirectories",
        { id: app.applicationId, type: "application", repoPath },
        as(),
      );
      expect(refused.status, repoPath).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["repoPath"]);
    }
  });

  it("readRepoFile answers a path's patch content, else the repository's file (a delete shows what it deletes)", async () => {
    const read = async (filePath: string) =>
      platform.query("patch.readRepoFile", { id: app.applicationId, type: "application", filePath }, as());
    expect((await read("site/index.html")).body).toBe("patched by the platform");
    expect((await read("Dockerfile")).body).toBe(DOCKERFILE);
    expect((await read("site/old.html")).body).toBe("to be deleted");
    const missing = await read("site/nowhere.html");
    expect(missing.status).toBe(400);
    expect(missing.body.error.data.fields).toEqual(["filePath"]);
    const escaping = await read("../../etc/passwd");
    expect(escaping.status).toBe(400);
    expect(escaping.body.error.data.fields).toEqual(["filePath"]);
  });

  it("another organization's service is a 404; cleanPatchRepos answers true (no repository is kept)", async () => {
    const service = { id: app.applicationId, type: "application" };
    expect((await platform.mutate("patch.ensureRepo", service, as(stranger))).status).toBe(404);
    const tree = await platform.query(
      "patch.readRepoDirectories",
      { ...service, repoPath: `application/${app.appName}` },
      as(stranger),
    );
    expect(tree.status).toBe(404);
    const file = await platform.query(
      "patch.readRepoFile",
      { ...service, filePath: "Dockerfile" },
      as(stranger),
    );
    expect(file.status).toBe(404);
    expect(await ok("patch.cleanPatchRepos", {})).toBe(true);
    // A serverId must be one of the organization's servers.
    expect(
      (await platform.mutate("patch.cleanPatchRepos", { serverId: "no-such-server" }, as())).status,
    ).toBe(404);
  });
});
