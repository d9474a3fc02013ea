/**
 * Preview deployments on the real Docker Engine, the four providers at once (the fixture of
 * previews.test.ts, with the Git stand-ins serving the request's branch): a signed request event
 * of each provider builds and deploys its preview as a Swarm service of its own; the GitHub one
 * is requested through the routing stand-in for Traefik (scripts/build-traefik-router-image.sh)
 * reading the agent's Traefik files, by the preview's host. A second commit on GitHub updates
 * what it serves; each comment ends "Deployed"; close removes the service, its file and host.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { dockerCli, removeDeployedApps, requireDocker, TEST_IMAGE } from "@platform/agent/testing/docker.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StandIns, standInEnv, startStandIns } from "../git-providers/testing/fixtures.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createPreviewApps, KINDS, type Kind, type PreviewApp, requestEvent, sendEvent } from "./testing.ts";

const run = promisify(execFile);
const DEPLOY_WAIT_MS = 180_000;
const ROUTER_IMAGE = "platform-test/traefik-router:latest";
// A preview builds with previewBuildArgs (NOTE) and previewBuildSecrets (PREVIEW_TOKEN, whose
// digest only is kept): the build fails without the secret.
const DOCKERFILE = `FROM ${TEST_IMAGE}
COPY index.html /www/index.html
ARG NOTE=unset
RUN --mount=type=secret,id=PREVIEW_TOKEN,required=true echo "$NOTE" > /www/note.txt && sha256sum /run/secrets/PREVIEW_TOKEN | cut -c1-64 > /www/token.sha
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
`;

const PREVIEW_TOKEN = "preview-token-value-4b2c";

let platform: TestPlatform;
let stands: StandIns;
let owner: Session;
let directory: string;
let apps: Record<Kind, PreviewApp>;
const router = `pv-router-${process.pid}`;
const appNames = Object.fromEntries(KINDS.map((kind) => [kind, `pv-e2e-${kind}-${process.pid}`])) as Record<
  Kind,
  string
>;
const previewNames: string[] = [];

beforeAll(async () => {
  await requireDocker();
  await run("bash", [path.join(import.meta.dirname, "../../../../scripts/build-traefik-router-image.sh")], {
    timeout: 300_000,
  });
  stands = await startStandIns();
  directory = await mkdtemp(path.join(tmpdir(), "previews-e2e-"));
  platform = await startTestPlatform(standInEnv(stands), {
    agents: { localAgent: { mainDirectory: directory } },
  });
  owner = await platform.registerOwner();
  const project = await platform.mutateOk("project.create", { name: "Previews e2e" }, { token: owner.token });
  for (const kind of KINDS) {
    await stands[kind].git.createRepo("web", { Dockerfile: DOCKERFILE, "index.html": `${kind} main` });
    await stands[kind].git.commit("web", { "index.html": `${kind} release` }, "release", "release");
    await stands[kind].git.commit("web", { "index.html": `${kind} preview one` }, "feature", "feature");
  }
  apps = await createPreviewApps(platform, owner.token, stands, {
    environmentId: project.environment.environmentId,
    appNames,
    wildcard: "preview.test",
  });
  for (const kind of KINDS) {
    await platform.mutateOk(
      "application.update",
      {
        applicationId: apps[kind].applicationId,
        previewBuildArgs: "NOTE=from-preview-build-args",
        previewBuildSecrets: `PREVIEW_TOKEN=${PREVIEW_TOKEN}`,
      },
      { token: owner.token },
    );
  }
}, 360_000);

afterAll(async () => {
  await dockerCli(["rm", "-f", router]).catch(() => {});
  await platform?.close();
  for (const stand of Object.values(stands ?? {})) await stand.close();
  await removeDeployedApps(previewNames);
  if (directory) await rm(directory, { recursive: true, force: true });
}, 120_000);

async function previewOf(kind: Kind) {
  return platform.ctx.db
    .selectFrom("previewDeployments")
    .selectAll()
    .where("applicationId", "=", apps[kind].applicationId)
    .executeTakeFirst();
}

async function newestDeployment(previewDeploymentId: string) {
  const row = await platform.ctx.db
    .selectFrom("deployments")
    .select("deploymentId")
    .where("previewDeploymentId", "=", previewDeploymentId)
    .orderBy("createdAt", "desc")
    .executeTakeFirstOrThrow();
  return platform.waitForDeployment(row.deploymentId, DEPLOY_WAIT_MS);
}

/** The routing stand-in on the platform network, reading the agent's dynamic files; its port. */
async function startRouter(): Promise<number> {
  const staticFile = path.join(directory, "router-static.yml");
  await writeFile(
    staticFile,
    `entryPoints:\n  web:\n    address: ":80"\nproviders:\n  file:\n    directory: /etc/traefik/dynamic\n    watch: true\n`,
  );
  await dockerCli([
    "run",
    "-d",
    "--name",
    router,
    "--label",
    "platform.test=previews",
    "--network",
    "platform-network",
    "-p",
    "127.0.0.1::80",
    "-v",
    `${path.join(directory, "traefik", "dynamic")}:/etc/traefik/dynamic:ro`,
    "-v",
    `${staticFile}:/etc/traefik/traefik.yml:ro`,
    ROUTER_IMAGE,
    "traefik",
    "--configFile=/etc/traefik/traefik.yml",
  ]);
  const mapping = await dockerCli(["port", router, "80/tcp"]);
  return Number(mapping.split("\n")[0]!.split(":").at(-1));
}

async function fetchByHost(port: number, host: string, expected: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  let last = "";
  while (Date.now() < deadline) {
    try {
      // fetch() sets Host from the URL itself: a plain request carries the preview's.
      last = await new Promise<string>((resolve, reject) => {
        const request = http.get({ host: "127.0.0.1", port, path: "/", headers: { host } }, (response) => {
          let text = "";
          response.on("data", (chunk) => {
            text += chunk;
          });
          response.on("end", () => resolve(`${response.statusCode} ${text}`));
        });
        request.on("error", reject);
      });
      if (last.includes(expected)) return last;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const seen = await dockerCli(["exec", router, "ls", "-la", "/etc/traefik/dynamic"]).catch(String);
  const logs = await dockerCli(["logs", router]).catch(String);
  const files = await run("ls", ["-la", path.join(directory, "traefik", "dynamic")]).then(
    (r) => r.stdout,
    String,
  );
  return `${last}\nrouter sees:\n${seen}\nrouter log:\n${logs}\nlocal:\n${files}`;
}

describe("a preview of each provider's request, deployed on Docker", () => {
  it("builds the request's branch, serves it at its host, follows new commits, goes on close", async () => {
    const sha = await Promise.all(
      KINDS.map(async (kind) => {
        const { stdout } = await run("git", [
          "--git-dir",
          path.join(stands[kind].git.root, "web.git"),
          "rev-parse",
          "refs/heads/feature",
        ]);
        return stdout.trim();
      }),
    );
    for (const [index, kind] of KINDS.entries()) {
      const answer = await sendEvent(
        platform,
        apps[kind],
        requestEvent(kind, { action: "open", number: 7, branch: "feature", sha: sha[index]! }),
      );
      expect(answer.body.message, kind).toMatch(/preview created/);
    }
    const previews = await Promise.all(KINDS.map(async (kind) => (await previewOf(kind))!));
    previewNames.push(...previews.map((preview) => preview.appName));
    const rows = await Promise.all(previews.map((preview) => newestDeployment(preview.previewDeploymentId)));
    for (const [index, kind] of KINDS.entries()) {
      const row = rows[index]!;
      expect(row.status, `${kind}: ${row.errorMessage}\n${row.logs}`).toBe("done");
      expect(row.commitHash, kind).toBe(sha[index]);
      const labels = JSON.parse(
        await dockerCli([
          "service",
          "inspect",
          previews[index]!.appName,
          "--format",
          "{{json .Spec.Labels}}",
        ]),
      );
      expect(labels["platform.resource"], kind).toBe(`preview:${previews[index]!.previewDeploymentId}`);
      // previewEnv (GREETING=preview, createPreviewApps) is the preview's environment.
      const env = JSON.parse(
        await dockerCli([
          "service",
          "inspect",
          previews[index]!.appName,
          "--format",
          "{{json .Spec.TaskTemplate.ContainerSpec.Env}}",
        ]),
      );
      expect(env, kind).toContain("GREETING=preview");
      const built = await dockerCli([
        "run",
        "--rm",
        row.imageName!,
        "cat",
        "/www/note.txt",
        "/www/token.sha",
      ]);
      expect(built.trim().split("\n"), kind).toEqual([
        "from-preview-build-args",
        createHash("sha256").update(PREVIEW_TOKEN).digest("hex"),
      ]);
      const comment = [...stands[kind].comments.values()][0]!;
      await expect.poll(() => comment.bodies.at(-1), { timeout: 10_000 }).toContain("Deployed");
    }

    const github = previews[0]!;
    const host = `${github.appName}.preview.test`;
    const port = await startRouter();
    expect(await fetchByHost(port, host, "github preview one")).toContain("github preview one");

    const second = await stands.github.git.commit(
      "web",
      { "index.html": "github preview two" },
      "two",
      "feature",
    );
    const updated = await sendEvent(
      platform,
      apps.github,
      requestEvent("github", { action: "update", number: 7, branch: "feature", sha: second }),
    );
    expect(updated.body.message).toMatch(/preview updated/);
    const again = await newestDeployment(github.previewDeploymentId);
    expect(again.status, again.logs).toBe("done");
    expect(again.commitHash).toBe(second);
    expect(await fetchByHost(port, host, "github preview two")).toContain("github preview two");

    const closed = await sendEvent(
      platform,
      apps.github,
      requestEvent("github", { action: "close", number: 7, branch: "feature", sha: second }),
    );
    expect(closed.body.message).toBe("preview deleted");
    await expect(dockerCli(["service", "inspect", github.appName])).rejects.toThrow();
    expect(existsSync(path.join(directory, "traefik", "dynamic", `${github.appName}.yml`))).toBe(false);
    expect(await previewOf("github")).toBeUndefined();
  }, 420_000);
});
