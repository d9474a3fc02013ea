/**
 * A drop upload built on a server other than the control plane's own: the remote agent cannot
 * read the control plane's disk, so it downloads the archive once from
 * GET /agent/artifacts/<one-time token> at PLATFORM_URL and checks its SHA-256.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { serve } from "@hono/node-server";
import { type RunningAgent, startAgent } from "@platform/agent";
import { removeDeployedApps, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { freePort, servedBody } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertTestServer } from "../agents/testing/agents.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { archiveSourceFor } from "./drop.ts";

const run = promisify(execFile);

let platform: TestPlatform;
let http: ReturnType<typeof serve> | undefined;
let remoteAgent: RunningAgent | undefined;
let owner: Session;
let baseUrl: string;
let work: string;
const appName = uniqueName("d2-remote");

beforeAll(async () => {
  await requireDocker();
  work = await mkdtemp(path.join(tmpdir(), "d2-remote-"));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  platform = await startTestPlatform({ PLATFORM_URL: baseUrl }, { agents: { localAgent: false } });
  http = serve({ fetch: platform.app.fetch, port, hostname: "127.0.0.1" });
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await remoteAgent?.stop();
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  await platform?.close();
  await removeDeployedApps([appName]);
  await rm(work, { recursive: true, force: true });
}, 60_000);

describe("archives for remote servers", () => {
  it("are offered once at /agent/artifacts/<token> with their SHA-256; the local agent gets a file:// URL", async () => {
    const file = path.join(work, "code.tar.gz");
    await writeFile(file, "not really an archive, only bytes");
    const expectedSha = createHash("sha256")
      .update(await readFile(file))
      .digest("hex");

    const remote = await archiveSourceFor(platform.ctx, "some-server", { path: file, format: "tar.gz" });
    expect(remote.url.startsWith(`${baseUrl}/agent/artifacts/`)).toBe(true);
    expect(remote.sha256).toBe(expectedSha);
    const first = await fetch(remote.url);
    expect(first.status).toBe(200);
    expect(await first.text()).toBe("not really an archive, only bytes");
    expect((await fetch(remote.url)).status).toBe(404);
    expect((await fetch(`${baseUrl}/agent/artifacts/guessed-token`)).status).toBe(404);

    const local = await archiveSourceFor(platform.ctx, "local", { path: file, format: "tar.gz" });
    expect(local.url).toBe(`file://${file}`);
  });

  it("a drop upload for an application on a remote server deploys there", async () => {
    const serverId = await insertTestServer(platform, owner.user.organizationId, "remote");
    remoteAgent = await startAgent({
      transport: platform.ctx.agents.client.transport,
      serverId,
      mainDirectory: work,
    });
    const project = await platform.mutate("project.create", { name: "Remote" }, { token: owner.token });
    const app = await platform.mutate(
      "application.create",
      { name: "remote", environmentId: project.body.environment.environmentId, appName, serverId },
      { token: owner.token },
    );
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    const { applicationId } = app.body;
    await platform.mutate(
      "application.saveBuildType",
      {
        applicationId,
        buildType: "dockerfile",
        dockerfile: "Dockerfile",
        dockerContextPath: ".",
        dockerBuildStage: "",
      },
      { token: owner.token },
    );
    const publishedPort = await freePort();
    await platform.mutate(
      "port.create",
      { applicationId, publishedPort, targetPort: 8080 },
      { token: owner.token },
    );

    const source = path.join(work, "source");
    await run("mkdir", ["-p", source]);
    await writeFile(path.join(source, "index.html"), "built on the remote server");
    await writeFile(
      path.join(source, "Dockerfile"),
      `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
    );
    const { stdout } = await run("tar", ["-cz", "-C", source, "Dockerfile", "index.html"], {
      encoding: "buffer",
    });
    const form = new FormData();
    form.set("applicationId", applicationId);
    form.set("zip", new Blob([new Uint8Array(stdout)]), "code.tar.gz");
    const uploaded = await fetch(`${baseUrl}/api/application.dropDeployment`, {
      method: "POST",
      body: form,
      headers: { authorization: `Bearer ${owner.token}` },
    });
    const body = await uploaded.json();
    expect(uploaded.status, JSON.stringify(body)).toBe(200);

    const row = await platform.waitForDeployment(body.deploymentId, 120_000);
    expect(row.status, row.logs).toBe("done");
    expect(row.logs).not.toMatch(/artifacts\/[A-Za-z0-9_-]{20,}/);

    expect(await servedBody(publishedPort, "/", "built on the remote server")).toBe(
      "built on the remote server",
    );
  }, 180_000);
});
