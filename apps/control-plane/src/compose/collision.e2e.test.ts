/**
 * Dokploy's randomize and isolatedDeployment on the real Docker Engine (Swarm) with the control
 * plane's in-process agent: compose.update accepts randomize/suffix and
 * isolatedDeployment/isolatedDeploymentsVolume and the next deploy applies them. A randomized
 * stack's services, volume and network carry the suffix; an isolated stack's services all join a
 * network of the stack's own and its volume carries the suffix; the same with Compose
 * (docker-compose), whose renamed containers go as orphans when the names change back. A
 * combination in which a field would do nothing is refused. compose.randomizeCompose and
 * compose.isolatedDeployment show the file as changed without storing anything, and
 * compose.loadMountsByService lists the named volume mounted into a service's running container.
 * compose.fetchSourceType reads a repository stack's file from a local git server (and is a 400
 * for a branch that is not there); compose.import replaces a stack's file, variables, mounts and
 * domains with a sent template's, after checking them.
 */
import {
  dockerCli,
  removeComposeProjects,
  removeSwarmStacks,
  requireDocker,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const DEPLOY_WAIT_MS = 240_000;
const BUSYBOX = "platform-test/busybox:latest";

let platform: TestPlatform;
let git: GitServer;
let owner: Session;
let environmentId: string;
const stacks: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());
async function q(name: string, input: Record<string, unknown>) {
  const response = await platform.query(name, input, as());
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as any;
}

const FILE = `services:
  web:
    image: ${BUSYBOX}
    command: ["sh", "-c", "while true; do sleep 5; done"]
    volumes:
      - data:/data
    networks: [back]
  worker:
    image: ${BUSYBOX}
    command: ["sh", "-c", "while true; do sleep 5; done"]
    depends_on: [web]
    networks: [back]
volumes:
  data: {}
networks:
  back: {}
`;

async function createStack(prefix: string, composeType: "stack" | "docker-compose" = "stack") {
  const appName = uniqueName(prefix).replace(/_/g, "-");
  stacks.push(appName);
  const created = await ok("compose.create", {
    name: prefix,
    appName,
    environmentId,
    composeType,
    composeFile: FILE,
  });
  return { composeId: created.composeId as string, appName };
}

async function deploy(composeId: string) {
  const { deploymentId } = await ok("compose.deploy", { composeId });
  const deployment = await platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
  expect(deployment.status, JSON.stringify(deployment)).toBe("done");
  return deployment.logs as string;
}

/** The names of the networks a Swarm service's tasks join. */
async function serviceNetworks(service: string): Promise<string[]> {
  const ids = (
    await dockerCli([
      "service",
      "inspect",
      service,
      "--format",
      "{{range .Spec.TaskTemplate.Networks}}{{.Target}} {{end}}",
    ])
  )
    .split(/\s+/)
    .filter(Boolean);
  const names: string[] = [];
  for (const id of ids)
    names.push((await dockerCli(["network", "inspect", id, "--format", "{{.Name}}"])).trim());
  return names.sort();
}

const exists = (kind: "service" | "volume" | "network", name: string) =>
  dockerCli([kind, "inspect", name]).then(
    () => true,
    () => false,
  );

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 90 s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", BUSYBOX]);
  git = await startGitServer();
  // The local git server is on loopback, which the outbound guard refuses unless allowed.
  platform = await startTestPlatform({ PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" });
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Collisions" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await git?.close();
  await removeComposeProjects(stacks);
  await removeSwarmStacks(stacks);
}, 120_000);

describe("randomize", () => {
  it(
    "suffixes the deployed services, volume and network; randomizeCompose shows a file without storing it",
    async () => {
      const { composeId, appName } = await createStack("cr");
      const shown = parse(await ok("compose.randomizeCompose", { composeId, suffix: "pre" }));
      expect(Object.keys(shown.services)).toEqual(["web-pre", "worker-pre"]);
      expect(shown.services["worker-pre"].depends_on).toEqual(["web-pre"]);
      expect(Object.keys(shown.volumes)).toEqual(["data-pre"]);
      const random = parse(await ok("compose.randomizeCompose", { composeId }));
      expect(Object.keys(random.services)[0]).toMatch(/^web-[0-9a-f]{8}$/);
      expect((await q("compose.one", { composeId })).composeFile).toBe(FILE);
      const refused = await platform.mutate(
        "compose.randomizeCompose",
        { composeId, suffix: "No Way" },
        as(),
      );
      expect(refused.status).toBe(400);

      // A combination in which a field would do nothing is refused, naming it.
      for (const [input, fields] of [
        [{ randomize: true }, ["suffix"]],
        [{ randomize: true, suffix: "r1", isolatedDeployment: true }, ["randomize", "isolatedDeployment"]],
        [{ isolatedDeploymentsVolume: true }, ["isolatedDeploymentsVolume"]],
        [{ suffix: "Not_Ok" }, ["suffix"]],
      ] as const) {
        const response = await platform.mutate("compose.update", { composeId, ...input }, as());
        expect(response.status, JSON.stringify(input)).toBe(400);
        expect(response.body.error.data.fields).toEqual(fields);
      }
      const updated = await ok("compose.update", { composeId, randomize: true, suffix: "r1" });
      expect(updated).toMatchObject({ randomize: true, suffix: "r1", composeFile: FILE });
      expect(await q("compose.loadServices", { composeId })).toEqual(["web-r1", "worker-r1"]);
      expect(await deploy(composeId)).toContain("Names suffixed with -r1 (randomize)");
      expect(await exists("service", `${appName}_web-r1`)).toBe(true);
      expect(await exists("service", `${appName}_worker-r1`)).toBe(true);
      expect(await exists("service", `${appName}_web`)).toBe(false);
      expect(await exists("volume", `${appName}_data-r1`)).toBe(true);
      expect(await serviceNetworks(`${appName}_web-r1`)).toEqual([`${appName}_back-r1`]);

      // The named volume Docker mounted into the running container of web-r1.
      const mounts = await eventually(
        () => q("compose.loadMountsByService", { composeId, serviceName: "web-r1" }) as Promise<any[]>,
        (list) => list.length > 0,
        "a running web-r1 container",
      );
      expect(mounts).toEqual([
        expect.objectContaining({ Type: "volume", Name: `${appName}_data-r1`, Destination: "/data" }),
      ]);
      expect(await q("compose.loadMountsByService", { composeId, serviceName: "worker-r1" })).toEqual([]);
    },
    DEPLOY_WAIT_MS + 60_000,
  );
});

describe("isolated deployment", () => {
  it(
    "puts every service on the stack's own network and suffixes its volume; isolatedDeployment shows the file",
    async () => {
      const { composeId, appName } = await createStack("ci");
      // Off: the file as written.
      expect(parse(await ok("compose.isolatedDeployment", { composeId }))).toEqual(parse(FILE));
      const refused = await platform.mutate("compose.update", { composeId, isolatedDeployment: "yes" }, as());
      expect(refused.status).toBe(400);

      await ok("compose.update", { composeId, isolatedDeployment: true, isolatedDeploymentsVolume: true });
      const shown = parse(await ok("compose.isolatedDeployment", { composeId, suffix: "blue" }));
      expect(shown.services.web.networks).toEqual(["back", "blue"]);
      expect(Object.keys(shown.volumes)).toEqual(["data-blue"]);
      expect((await q("compose.one", { composeId })).suffix).toBe("");

      expect(await deploy(composeId)).toContain(
        `Isolated deployment: every service joins the stack's network ${appName}`,
      );
      const own = `${appName}_${appName}`;
      expect(await exists("network", own)).toBe(true);
      expect(await serviceNetworks(`${appName}_web`)).toEqual([`${appName}_back`, own].sort());
      expect(await serviceNetworks(`${appName}_worker`)).toEqual([`${appName}_back`, own].sort());
      expect(await exists("volume", `${appName}_data-${appName}`)).toBe(true);
      const labels = JSON.parse(await dockerCli(["network", "inspect", own, "--format", "{{json .Labels}}"]));
      expect(labels["platform.resource"]).toBe(`compose:${composeId}`);
    },
    DEPLOY_WAIT_MS + 60_000,
  );
});

describe("with Compose (docker-compose)", () => {
  it(
    "a randomized project's containers carry the suffix; an isolated one's join its own network",
    async () => {
      const { composeId, appName } = await createStack("cx", "docker-compose");
      await ok("compose.update", { composeId, randomize: true, suffix: "r2" });
      await deploy(composeId);
      const networksOf = async (container: string) =>
        Object.keys(
          JSON.parse(
            await dockerCli([
              "container",
              "inspect",
              container,
              "--format",
              "{{json .NetworkSettings.Networks}}",
            ]),
          ),
        ).sort();
      expect(await networksOf(`${appName}_web-r2`)).toEqual([`${appName}_back-r2`]);
      expect(await networksOf(`${appName}_worker-r2`)).toEqual([`${appName}_back-r2`]);
      expect(await exists("volume", `${appName}_data-r2`)).toBe(true);

      await ok("compose.update", { composeId, randomize: false, suffix: "", isolatedDeployment: true });
      await deploy(composeId);
      const own = `${appName}_${appName}`;
      expect(await networksOf(`${appName}_web`)).toEqual([`${appName}_back`, own].sort());
      expect(await networksOf(`${appName}_worker`)).toEqual([`${appName}_back`, own].sort());
      expect(await exists("volume", `${appName}_data`)).toBe(true);
      // The randomized containers were the project's orphans once the names changed back.
      const left = await dockerCli(["container", "inspect", `${appName}_web-r2`]).then(
        () => true,
        () => false,
      );
      expect(left).toBe(false);
    },
    DEPLOY_WAIT_MS * 2,
  );
});

describe("a stack's source and a sent template", () => {
  it("fetchSourceType reads a repository stack's file; isolatedDeployment shows the repository's file", async () => {
    await git.createRepo("collision-stack", { "deploy/compose.yml": FILE });
    const { composeId } = await createStack("cs");
    expect(await ok("compose.fetchSourceType", { composeId })).toBe("raw");
    await ok("compose.update", {
      composeId,
      sourceType: "git",
      customGitUrl: git.url("collision-stack"),
      customGitBranch: "main",
      composePath: "deploy/compose.yml",
      isolatedDeployment: true,
      suffix: "green",
    });
    expect(await ok("compose.fetchSourceType", { composeId })).toBe("git");
    const shown = parse(await ok("compose.isolatedDeployment", { composeId }));
    expect(shown.services.worker.networks).toEqual(["back", "green"]);
    expect(shown.networks).toEqual({ back: {}, green: {} });

    await ok("compose.update", { composeId, customGitBranch: "no-such-branch" });
    const refused = await platform.mutate("compose.fetchSourceType", { composeId }, as());
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.data.fields).toEqual(["sourceType"]);
  });

  it("import replaces the file, variables, mounts and domains with the template's; a refused file changes nothing", async () => {
    const { composeId, appName } = await createStack("cm");
    await ok("compose.update", { composeId, randomize: false });
    await ok("domain.create", {
      domainType: "compose",
      composeId,
      serviceName: "web",
      host: `${appName}.old.test`,
      port: 8080,
      https: false,
      certificateType: "none",
    });
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");
    const compose = `services:\n  app:\n    image: ${BUSYBOX}\n    environment:\n      GREETING: \${GREETING}\n`;
    const config = `[variables]
main_domain = "\${domain}"

[[config.domains]]
serviceName = "app"
port = 80
host = "\${main_domain}"

[config.env]
GREETING = "hello"

[[config.mounts]]
filePath = "/conf/site.txt"
content = "at \${main_domain}"
`;
    // A template whose domain names no service of its file: refused, the stack untouched.
    const badConfig = config.replace('serviceName = "app"', 'serviceName = "nope"');
    const refused = await platform.mutate(
      "compose.import",
      { composeId, base64: encode({ compose, config: badConfig }) },
      as(),
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect((await q("compose.one", { composeId })).composeFile).toBe(FILE);
    expect(await q("domain.byComposeId", { composeId })).toHaveLength(1);

    const answer = await ok("compose.import", { composeId, base64: encode({ compose, config }) });
    expect(answer).toEqual({ success: true, message: "Template imported successfully" });
    const stack = await q("compose.one", { composeId });
    expect(stack).toMatchObject({ composeFile: compose, sourceType: "raw", env: "GREETING=hello" });
    const domains = await q("domain.byComposeId", { composeId });
    expect(domains).toEqual([expect.objectContaining({ serviceName: "app", port: 80 })]);
    expect(domains[0].host).not.toBe(`${appName}.old.test`);
    const mounts = await platform.ctx.db
      .selectFrom("mounts")
      .select(["filePath", "content"])
      .where("composeId", "=", composeId)
      .execute();
    expect(mounts).toEqual([{ filePath: "conf/site.txt", content: `at ${domains[0].host}` }]);
    expect(parse(await q("compose.getConvertedCompose", { composeId })).services.app.environment).toEqual({
      GREETING: "hello",
    });
  });
});
