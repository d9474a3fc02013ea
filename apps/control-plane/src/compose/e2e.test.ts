/**
 * Compose stacks end to end on the real Docker Engine (Swarm) with the control plane's
 * in-process agent and the local test images: a raw file with three services (a web server and
 * a worker of the busybox test image, and the redis test image with a named volume) deploys with
 * `docker stack deploy`; the web service answers on the platform network under the name its
 * domains are routed to; stop, start, redeploy and move work; delete without deleteVolumes keeps
 * the volume and with it removes it. A stack of another organization with the same service names
 * (made here with `docker stack deploy` and that organization's labels, as the platform would) is
 * untouched throughout, and a stack whose name is taken by someone else's objects is refused.
 * Templates: a local HTTP catalogue in Dokploy's layout (PLATFORM_TEMPLATES_URL) is listed beside
 * the built-in one, and a template of each deploys with compose.deployTemplate, its images
 * replaced by the test images (PLATFORM_TEMPLATE_IMAGES), its file mount written by the agent and
 * served, its env and generated domain stored.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeComposeProjects,
  removeSwarmStacks,
  requireDocker,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const DEPLOY_WAIT_MS = 240_000;
const BUSYBOX = "platform-test/busybox:latest";
const REDIS = process.env.PLATFORM_TEST_REDIS_IMAGE ?? "platform-test/db-redis:7";
const NETCLIENT = "platform-test/netclient:latest";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
const stacks: string[] = [];
const directories: string[] = [];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());
/** A query that must answer 200. */
async function q(name: string, input: Record<string, unknown>, auth = as()) {
  const response = await platform.query(name, input, auth);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as any;
}

/** The three-service file: web answers `hello from <marker>` on 8080. */
function threeServices(marker: string): string {
  return `services:
  web:
    image: ${BUSYBOX}
    command: ["sh", "-c", "mkdir -p /www && echo hello from ${marker} > /www/index.html && exec httpd -f -p 8080 -h /www"]
  worker:
    image: ${BUSYBOX}
    command: ["sh", "-c", "while true; do sleep 5; done"]
    environment:
      LITERAL_HOME: "$\${HOME}"
      PRICE: "a$$b"
  db:
    image: ${REDIS}
    volumes:
      - data:/data
volumes:
  data: {}
`;
}

function newAppName(prefix: string): string {
  const name = uniqueName(prefix).replace(/_/g, "-");
  stacks.push(name);
  return name;
}

async function createStack(prefix: string, composeFile: string) {
  const appName = newAppName(prefix);
  const created = await ok("compose.create", {
    name: prefix,
    appName,
    environmentId,
    composeType: "stack",
    composeFile,
  });
  return { composeId: created.composeId as string, appName };
}

async function settle(operation: string, composeId: string) {
  const { deploymentId } = await ok(`compose.${operation}`, { composeId });
  return platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
}

async function runningTasks(service: string): Promise<number> {
  const out = await dockerCli([
    "service",
    "ps",
    service,
    "--filter",
    "desired-state=running",
    "--format",
    "{{.CurrentState}}",
  ]);
  return out.split("\n").filter((line) => line.startsWith("Running")).length;
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const exists = (kind: "service" | "volume" | "network", name: string) =>
  dockerCli([kind, "inspect", name]).then(
    () => true,
    () => false,
  );

/** What the web service answers on the platform network (tasks.<name>: no IPVS here). */
async function fetchWeb(upstream: string): Promise<string> {
  return (
    await dockerCli([
      "run",
      "--rm",
      "--network",
      "platform-network",
      NETCLIENT,
      "curl",
      "-fsS",
      "-m",
      "3",
      `http://tasks.${upstream}:8080/`,
    ])
  ).trim();
}

/** A stack of another organization, deployed as the platform would (its labels), by hand. */
async function deployForeignStack(appName: string, organizationId: string): Promise<void> {
  const labels = ownershipLabels({ organizationId, resource: `compose:${organizationId}-stack` });
  const labelLines = Object.entries(labels)
    .map(([key, value]) => `        ${key}: "${value}"`)
    .join("\n");
  const file = `version: "3.8"
services:
  web:
    image: ${BUSYBOX}
    command: ["sh", "-c", "while true; do sleep 5; done"]
    deploy:
      labels:
${labelLines}
  worker:
    image: ${BUSYBOX}
    command: ["sh", "-c", "while true; do sleep 5; done"]
    deploy:
      labels:
${labelLines}
`;
  const directory = await mkdtemp(path.join(tmpdir(), "foreign-stack-"));
  directories.push(directory);
  await writeFile(path.join(directory, "docker-compose.yml"), file);
  await dockerCli(["stack", "deploy", "-c", path.join(directory, "docker-compose.yml"), appName]);
  await eventually(async () => (await runningTasks(`${appName}_web`)) === 1, `${appName}_web running`);
}

async function serviceIds(appName: string): Promise<string> {
  return dockerCli(["service", "ls", "-q", "--filter", `label=com.docker.stack.namespace=${appName}`]);
}

const STATIC_HTTPD = "platform-test/static-httpd:latest";
/** The remote catalogue (Dokploy's layout): one template whose page is a file mount. */
const catalogue: Record<string, string> = {
  "/meta.json": JSON.stringify([
    {
      id: "hello-files",
      name: "Hello files",
      version: "1.0.0",
      description: "Serves its file mount.",
      logo: "hello.svg",
      links: {},
      tags: ["test"],
    },
  ]),
  "/blueprints/hello-files/docker-compose.yml": `services:
  web:
    image: example/hello-files:1.0
    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]
    environment:
      GREETING: \${GREETING}
    volumes:
      - ../files/www/index.html:/www/index.html:ro
`,
  "/blueprints/hello-files/template.toml": `[variables]
main_domain = "\${domain}"
greeting = "hello-\${hash:8}"

[[config.domains]]
serviceName = "web"
port = 8080
host = "\${main_domain}"

[config]
env = ["GREETING=\${greeting}"]

[[config.mounts]]
filePath = "./www/index.html"
content = "served from \${greeting}"
`,
};
let catalogueServer: Server | undefined;

beforeAll(async () => {
  await requireDocker();
  for (const image of [BUSYBOX, REDIS, NETCLIENT, STATIC_HTTPD]) await dockerCli(["image", "inspect", image]);
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "compose-e2e-"));
  directories.push(mainDirectory);
  catalogueServer = createServer((request, response) => {
    const body = catalogue[request.url ?? ""];
    response.writeHead(body === undefined ? 404 : 200).end(body ?? "not found");
  });
  await new Promise<void>((resolve) => catalogueServer!.listen(0, "127.0.0.1", resolve));
  const { port } = catalogueServer.address() as AddressInfo;
  platform = await startTestPlatform(
    {
      PLATFORM_TEMPLATES_URL: `http://127.0.0.1:${port}`,
      PLATFORM_OUTBOUND_ALLOW: "127.0.0.1/32",
      PLATFORM_TEMPLATE_IMAGES: `example/hello-files=${BUSYBOX},corentinth/it-tools=${STATIC_HTTPD}`,
    },
    { agents: { localAgent: { mainDirectory } } },
  );
  owner = await platform.registerOwner();
  const project = await ok("project.create", { name: "Stacks" });
  environmentId = project.environment.environmentId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  catalogueServer?.close();
  await removeComposeProjects(stacks);
  await removeSwarmStacks(stacks);
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 120_000);

describe("a three-service stack", () => {
  it(
    "deploys, answers, stops, starts, redeploys, moves and is deleted keeping or removing its volume; another organization's stack is untouched",
    async () => {
      const foreign = newAppName("cf");
      await deployForeignStack(foreign, "another-organization");
      const foreignIds = await serviceIds(foreign);

      const { composeId, appName } = await createStack("ce", threeServices("stack one"));
      const converted = parse(await q("compose.getConvertedCompose", { composeId }, as()));
      expect(converted.version).toBe("3.8");
      expect(Object.keys(converted.services).sort()).toEqual(["db", "web", "worker"]);
      expect(converted.services.web.deploy.labels["platform.resource"]).toBe(`compose:${composeId}`);
      expect(converted.volumes.data.labels["platform.resource"]).toBe(`compose:${composeId}`);
      expect(await q("compose.loadServices", { composeId, type: "stack" }, as())).toEqual([
        "web",
        "worker",
        "db",
      ]);

      // The web service's domain: it joins the platform network under the name its route names.
      const domain = await ok("domain.create", {
        domainType: "compose",
        composeId,
        serviceName: "web",
        host: `${appName}.example.test`,
        port: 8080,
        https: false,
        certificateType: "none",
      });
      expect(domain.serviceName).toBe("web");
      expect(await q("domain.byComposeId", { composeId })).toHaveLength(1);
      const refused = await platform.mutate(
        "domain.create",
        {
          domainType: "compose",
          composeId,
          serviceName: "nope",
          host: `x-${appName}.example.test`,
          certificateType: "none",
        },
        as(),
      );
      expect(refused.status).toBe(400);
      const routed = parse(await q("compose.getConvertedCompose", { composeId }));
      expect(Object.keys(routed.services.web.networks)).toContain("platform-network");
      expect(routed.networks["platform-network"]).toEqual({ external: true, name: "platform-network" });

      const deployed = await settle("deploy", composeId);
      expect(deployed.status, deployed.logs).toBe("done");
      expect(deployed.logs).toContain("docker stack deploy --prune --with-registry-auth");
      for (const service of ["web", "worker", "db"])
        expect(await runningTasks(`${appName}_${service}`)).toBe(1);
      expect(await exists("volume", `${appName}_data`)).toBe(true);
      // `$$` is a literal `$` for the service, never a variable of the agent's environment.
      const env = JSON.parse(
        await dockerCli([
          "service",
          "inspect",
          "--format",
          "{{json .Spec.TaskTemplate.ContainerSpec.Env}}",
          `${appName}_worker`,
        ]),
      );
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text the container gets, not a template
      expect(env).toEqual(expect.arrayContaining(["LITERAL_HOME=${HOME}", "PRICE=a$b"]));
      await eventually(
        async () => (await fetchWeb(`${appName}_web`)) === "hello from stack one",
        "web answers",
      );
      const one = await q("compose.one", { composeId }, as());
      expect(one.composeStatus).toBe("done");
      const history = await q("deployment.allByCompose", { composeId }, as());
      expect(history.map((row: { deploymentId: string }) => row.deploymentId)).toEqual([
        deployed.deploymentId,
      ]);
      expect(await q("deployment.allByType", { id: composeId, type: "compose" }, as())).toHaveLength(1);

      await ok("compose.stop", { composeId });
      await eventually(async () => (await runningTasks(`${appName}_web`)) === 0, "web stopped");
      expect((await q("compose.one", { composeId }, as())).composeStatus).toBe("idle");
      await ok("compose.start", { composeId });
      await eventually(async () => (await runningTasks(`${appName}_db`)) === 1, "db started");
      await eventually(
        async () => (await fetchWeb(`${appName}_web`)) === "hello from stack one",
        "web answers again",
      );

      await ok("compose.update", { composeId, composeFile: threeServices("stack two") });
      const redeployed = await settle("redeploy", composeId);
      expect(redeployed.status, redeployed.logs).toBe("done");
      await eventually(
        async () => (await fetchWeb(`${appName}_web`)) === "hello from stack two",
        "new version answers",
      );

      const other = await ok("environment.create", { projectId: await projectOf(), name: "other" });
      const moved = await ok("compose.move", { composeId, targetEnvironmentId: other.environmentId });
      expect(moved.environmentId).toBe(other.environmentId);

      const deleted = await ok("compose.delete", { composeId });
      expect(deleted.composeId).toBe(composeId);
      for (const service of ["web", "worker", "db"])
        expect(await exists("service", `${appName}_${service}`)).toBe(false);
      expect(await exists("volume", `${appName}_data`)).toBe(true);
      const missing = await platform.query("compose.one", { composeId }, as());
      expect(missing.status).toBe(404);

      // Untouched throughout: the same services, with the same ids.
      expect(await serviceIds(foreign)).toBe(foreignIds);
      expect(await runningTasks(`${foreign}_web`)).toBe(1);
    },
    DEPLOY_WAIT_MS * 3,
  );

  it(
    "delete with deleteVolumes removes the stack's volumes too",
    async () => {
      const { composeId, appName } = await createStack(
        "cv",
        `services:\n  db:\n    image: ${REDIS}\n    volumes:\n      - data:/data\nvolumes:\n  data: {}\n`,
      );
      const deployed = await settle("deploy", composeId);
      expect(deployed.status, deployed.logs).toBe("done");
      expect(await exists("volume", `${appName}_data`)).toBe(true);
      await ok("compose.delete", { composeId, deleteVolumes: true });
      expect(await exists("service", `${appName}_db`)).toBe(false);
      expect(await exists("volume", `${appName}_data`)).toBe(false);
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "a stack whose name is taken by another owner's objects fails naming why and leaves them alone",
    async () => {
      const { composeId, appName } = await createStack("ct", threeServices("taken"));
      await deployForeignStack(appName, "another-organization");
      const before = await serviceIds(appName);
      const deployed = await settle("deploy", composeId);
      expect(deployed.status).toBe("error");
      expect(deployed.errorMessage).toMatch(/do not belong to this compose service/);
      expect(await serviceIds(appName)).toBe(before);
    },
    DEPLOY_WAIT_MS,
  );

  it("refuses an invalid file naming where, and stores nothing", async () => {
    const appName = newAppName("ci");
    const refused = await platform.mutate(
      "compose.create",
      {
        name: "bad",
        appName,
        environmentId,
        composeType: "stack",
        composeFile: "services:\n  web:\n    image: x\n    restart: [1]\n",
      },
      as(),
    );
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("services.web.restart");
    const project = await q("project.all", {}, as());
    expect(JSON.stringify(project)).not.toContain(appName);
  });
});

describe("templates", () => {
  it(
    "lists the built-in and the remote catalogue and deploys a template of each with the test images",
    async () => {
      const listed = await q("compose.templates", {});
      const ids = listed.map((template: { id: string }) => template.id);
      expect(ids).toContain("it-tools");
      expect(ids).toContain("hello-files");
      expect(listed.find((template: { id: string }) => template.id === "hello-files").logo).toMatch(
        /\/blueprints\/hello-files\/hello\.svg$/,
      );
      const unknown = await platform.mutate("compose.deployTemplate", { environmentId, id: "no-such" }, as());
      expect(unknown.status).toBe(404);

      const hello = await ok("compose.deployTemplate", { environmentId, id: "hello-files" });
      stacks.push(hello.appName);
      expect(hello.appName).toMatch(/^stacks-hello-files-[a-z0-9]{6}$/);
      const greeting = /^GREETING=(hello-[a-z0-9]{8})$/m.exec(hello.env)?.[1];
      expect(greeting, hello.env).toBeDefined();
      const domains = await q("domain.byComposeId", { composeId: hello.composeId });
      expect(domains).toMatchObject([{ serviceName: "web", port: 8080 }]);
      expect(domains[0].host).toContain(hello.appName);
      const converted = parse(await q("compose.getConvertedCompose", { composeId: hello.composeId }));
      expect(converted.services.web.image).toBe(BUSYBOX);
      expect(converted.services.web.volumes).toEqual(["../files/www/index.html:/www/index.html:ro"]);

      const deployments = async (composeId: string) =>
        (await q("deployment.allByCompose", { composeId })) as { deploymentId: string }[];
      const [first] = await deployments(hello.composeId);
      const deployed = await platform.waitForDeployment(first!.deploymentId, DEPLOY_WAIT_MS);
      expect(deployed.status, deployed.logs).toBe("done");
      // Reached on the platform network by the alias its domain is routed to: the mount's content.
      await eventually(
        async () =>
          (
            await dockerCli([
              "run",
              "--rm",
              "--network",
              "platform-network",
              NETCLIENT,
              "curl",
              "-fsS",
              "-m",
              "3",
              `http://${hello.appName}_web:8080/`,
            ])
          ).trim() === `served from ${greeting}`,
        "the template's file mount is served",
      );

      const tools = await ok("compose.deployTemplate", { environmentId, id: "it-tools" });
      stacks.push(tools.appName);
      const [toolsRun] = await deployments(tools.composeId);
      const toolsDeployed = await platform.waitForDeployment(toolsRun!.deploymentId, DEPLOY_WAIT_MS);
      expect(toolsDeployed.status, toolsDeployed.logs).toBe("done");
      const image = await dockerCli([
        "ps",
        "--filter",
        `label=com.docker.compose.project=${tools.appName}`,
        "--format",
        "{{.Image}}",
      ]);
      expect(image.trim()).toBe(STATIC_HTTPD);

      for (const composeId of [hello.composeId, tools.composeId]) await ok("compose.delete", { composeId });
    },
    DEPLOY_WAIT_MS * 2,
  );
});

async function projectOf(): Promise<string> {
  const environment = await q("environment.one", { environmentId }, as());
  return environment.projectId as string;
}
