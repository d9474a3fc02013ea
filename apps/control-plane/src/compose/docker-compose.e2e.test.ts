/**
 * composeType `docker-compose` (the default) end to end on the real Docker Engine with the
 * control plane's in-process agent: the stack deploys with Compose (`docker-compose` v1 here,
 * what Debian bookworm ships; `docker compose` where the CLI has it) as project <appName>, its
 * containers, network and volume carry the ownership labels, stop and start act on its
 * containers, and delete keeps the volume or, with deleteVolumes, removes it. The Swarm mode (`stack`) is e2e.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const DEPLOY_WAIT_MS = 120_000;
const BUSYBOX = "platform-test/busybox:latest";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
let directory: string;
let git: GitServer;
const appNames: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

/** The shells exit on SIGTERM (as PID 1 they would ignore it, and every stop would wait 10 s). */
const FILE = `services:
  web:
    image: ${BUSYBOX}
    command: ["sh", "-c", "trap 'exit 0' TERM; httpd -f -p 8080 -h /data & wait"]
    volumes:
      - data:/data
  worker:
    image: ${BUSYBOX}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    environment:
      LITERAL_HOME: "$\${HOME}"
      PRICE: "a$$b"
volumes:
  data: {}
`;

const inspect = async (kind: "container" | "network" | "volume", name: string, format: string) =>
  dockerCli([kind, "inspect", "--format", format, name]).catch(() => undefined);

async function createAndDeploy(): Promise<{ composeId: string; appName: string; logs: string }> {
  const appName = uniqueName("cd").replace(/_/g, "-");
  appNames.push(appName);
  // No composeType: docker-compose is the default, as in Dokploy.
  const created = await ok("compose.create", { name: "cd", appName, environmentId, composeFile: FILE });
  expect(created.composeType).toBe("docker-compose");
  const { deploymentId } = await ok("compose.deploy", { composeId: created.composeId });
  const deployed = await platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
  expect(deployed.status, deployed.logs).toBe("done");
  return { composeId: created.composeId, appName, logs: deployed.logs };
}

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", BUSYBOX]);
  directory = await mkdtemp(path.join(tmpdir(), "compose-v1-e2e-"));
  git = await startGitServer();
  // The local git server is on loopback, which the outbound guard refuses unless allowed.
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory: directory } } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Compose projects" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await git?.close();
  for (const appName of appNames) {
    const label = `label=com.docker.compose.project=${appName}`;
    const containers = await dockerCli(["ps", "-aq", "--filter", label]).catch(() => "");
    for (const id of containers.split("\n").filter(Boolean))
      await dockerCli(["rm", "-f", id]).catch(() => {});
    await dockerCli(["network", "rm", `${appName}_default`]).catch(() => {});
    await dockerCli(["volume", "rm", "-f", `${appName}_data`]).catch(() => {});
    await dockerCli(["image", "rm", "-f", `${appName}_web`]).catch(() => {});
  }
  await rm(directory, { recursive: true, force: true });
}, 60_000);

describe("composeType docker-compose", () => {
  it(
    "deploys with Compose as project appName with labelled containers, network and volume; stops, starts; delete keeps the volume unless deleteVolumes",
    async () => {
      const first = await createAndDeploy();
      const { appName } = first;
      expect(first.logs).toMatch(
        new RegExp(`docker(-| )compose -p ${appName} -f \\S+ up -d --remove-orphans`),
      );
      const resource = `compose:${first.composeId}`;
      for (const service of ["web", "worker"]) {
        const container = `${appName}_${service}`;
        expect(await inspect("container", container, "{{.State.Status}}")).toBe("running");
        expect(await inspect("container", container, '{{index .Config.Labels "platform.resource"}}')).toBe(
          resource,
        );
        expect(
          await inspect("container", container, '{{index .Config.Labels "com.docker.compose.project"}}'),
        ).toBe(appName);
      }
      // `$$` is a literal `$` for the container, never a variable of the agent's environment.
      const env = JSON.parse(
        (await inspect("container", `${appName}_worker`, "{{json .Config.Env}}")) ?? "[]",
      );
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text the container gets, not a template
      expect(env).toEqual(expect.arrayContaining(["LITERAL_HOME=${HOME}", "PRICE=a$b"]));
      expect(await inspect("network", `${appName}_default`, '{{index .Labels "platform.resource"}}')).toBe(
        resource,
      );
      expect(await inspect("volume", `${appName}_data`, '{{index .Labels "platform.resource"}}')).toBe(
        resource,
      );

      await ok("compose.stop", { composeId: first.composeId });
      expect(await inspect("container", `${appName}_web`, "{{.State.Status}}")).toBe("exited");
      expect((await platform.query("compose.one", { composeId: first.composeId }, as())).body).toMatchObject({
        composeStatus: "idle",
      });
      await ok("compose.start", { composeId: first.composeId });
      expect(await inspect("container", `${appName}_web`, "{{.State.Status}}")).toBe("running");

      await ok("compose.delete", { composeId: first.composeId });
      expect(await inspect("container", `${appName}_web`, "{{.Id}}")).toBeUndefined();
      expect(await inspect("network", `${appName}_default`, "{{.Id}}")).toBeUndefined();
      expect(await inspect("volume", `${appName}_data`, "{{.Name}}")).toBe(`${appName}_data`);

      const second = await createAndDeploy();
      expect(await inspect("volume", `${second.appName}_data`, "{{.Name}}")).toBe(`${second.appName}_data`);
      await ok("compose.delete", { composeId: second.composeId, deleteVolumes: true });
      expect(await inspect("container", `${second.appName}_web`, "{{.Id}}")).toBeUndefined();
      expect(await inspect("volume", `${second.appName}_data`, "{{.Name}}")).toBeUndefined();
    },
    DEPLOY_WAIT_MS * 2,
  );

  it(
    "freshVolumes (compose.deploy/redeploy) removes the stack's own volumes before deploying; a volume not labelled as the organization's stays; without it the data stays",
    async () => {
      const { composeId, appName } = await createAndDeploy();
      const volume = `${appName}_data`;
      const marker = () =>
        dockerCli(["exec", `${appName}_web`, "cat", "/data/marker"]).then(
          (text) => text.trim(),
          () => undefined,
        );
      await dockerCli(["exec", `${appName}_web`, "sh", "-c", "echo kept > /data/marker"]);
      // Someone else's volume carrying the project's label (no ownership labels): never removed.
      const foreign = `${appName}_foreign`;
      await dockerCli(["volume", "create", "--label", `com.docker.compose.project=${appName}`, foreign]);
      try {
        const plain = await ok("compose.redeploy", { composeId });
        const plainRun = await platform.waitForDeployment(plain.deploymentId, DEPLOY_WAIT_MS);
        expect(plainRun.status, plainRun.logs).toBe("done");
        expect(await marker()).toBe("kept");

        const fresh = await ok("compose.deploy", { composeId, freshVolumes: true });
        const freshRun = await platform.waitForDeployment(fresh.deploymentId, DEPLOY_WAIT_MS);
        expect(freshRun.status, freshRun.logs).toBe("done");
        expect(freshRun.logs).toContain(`Removed volume(s): ${volume}`);
        expect(freshRun.logs).toContain(foreign);
        expect(await inspect("container", `${appName}_web`, "{{.State.Status}}")).toBe("running");
        expect(await inspect("volume", volume, '{{index .Labels "platform.resource"}}')).toBe(
          `compose:${composeId}`,
        );
        expect(await marker()).toBeUndefined();
        expect(await inspect("volume", foreign, "{{.Name}}")).toBe(foreign);

        const refused = await platform.mutate("compose.redeploy", { composeId, freshVolumes: "yes" }, as());
        expect(refused.status).toBe(400);
        expect(JSON.stringify(refused.body)).toContain("freshVolumes");
      } finally {
        await dockerCli(["volume", "rm", "-f", foreign]).catch(() => {});
      }
      await ok("compose.delete", { composeId, deleteVolumes: true });
    },
    DEPLOY_WAIT_MS * 4,
  );

  it(
    "deploys a stack from a branch of a repository: the file at composePath, its build context the repository's",
    async () => {
      const commit = await git.createRepo("stack", {
        "deploy/docker-compose.yml": `services:
  web:
    build: ./web
    command: ["sh", "-c", "trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait"]
`,
        "deploy/web/Dockerfile": `FROM ${BUSYBOX}\nCOPY index.html /www/index.html\n`,
        "deploy/web/index.html": "served from the repository\n",
      });
      const appName = uniqueName("cg").replace(/_/g, "-");
      appNames.push(appName);
      const created = await ok("compose.create", {
        name: "from git",
        appName,
        environmentId,
        sourceType: "git",
      });
      await ok("compose.update", {
        composeId: created.composeId,
        customGitUrl: git.url("stack"),
        customGitBranch: "main",
        composePath: "deploy/docker-compose.yml",
      });
      const { deploymentId } = await ok("compose.deploy", { composeId: created.composeId });
      const deployed = await platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
      expect(deployed.status, deployed.logs).toBe("done");
      expect(deployed.logs).toContain(`Read deploy/docker-compose.yml at commit ${commit}`);
      const served = await dockerCli(["exec", `${appName}_web`, "wget", "-qO-", "http://127.0.0.1:8080/"]);
      expect(served.trim()).toBe("served from the repository");

      // A path the branch does not hold fails the deployment naming it; what runs stays.
      await ok("compose.update", { composeId: created.composeId, composePath: "missing/compose.yml" });
      const missing = await ok("compose.deploy", { composeId: created.composeId });
      const failed = await platform.waitForDeployment(missing.deploymentId, DEPLOY_WAIT_MS);
      expect(failed.status).toBe("error");
      expect(failed.errorMessage).toContain("missing/compose.yml is not a file of main");
      expect(await inspect("container", `${appName}_web`, "{{.State.Status}}")).toBe("running");
      await ok("compose.delete", { composeId: created.composeId });
    },
    DEPLOY_WAIT_MS * 2,
  );
});
