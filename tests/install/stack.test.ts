/**
 * The production stack on this machine's Swarm, installed by deploy/install.sh as a user would
 * (as root, one command) from locally built images: the control plane's image
 * (scripts/build-control-plane-image.sh), Postgres and NATS from Debian's packages
 * (scripts/build-stack-images.sh) and a routing stand-in for Traefik
 * (scripts/build-traefik-router-image.sh). Everything the install names is this test's own
 * (stack, overlay network, secrets, volumes, directories, free ports published in host mode) and
 * is removed at the end; traffic goes to 127.0.0.1 only.
 * The control plane runs as two copies (`--replicas 2`), reached through Traefik only: on its own
 * port (Traefik's entry point platform-api) and, once it has taken its domain
 * (settings.assignDomainServer), by Host; it deploys an application on its own machine's
 * agent, routed by a domain too. Each component survives `docker service update --force` with
 * the data intact, and `install.sh --upgrade` to a newer image (one more migration) backs the
 * database up first, applies the migration and keeps the data, while a client calls
 * `project.all` and `application.one` in a loop through the whole upgrade: the copies are
 * replaced one at a time and not one call fails.
 * install.sh is killed with SIGKILL at several moments of the first install and of the upgrade
 * (tests/install/interrupt.ts); each time, running it again converges, without a secret or a
 * network made twice and without a new Postgres password the data volume would not accept.
 */
import { execFile, execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_IMAGE } from "../../apps/agent/src/testing/docker.ts";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { parseStaticConfig } from "../../packages/traefik-config/src/index.ts";
import { installKilledAt } from "./interrupt.ts";
import {
  built,
  docker,
  eventually,
  FinalFailure,
  installArguments,
  removeStack,
  repoRoot,
  request,
  stackImages,
} from "./stack-fixtures.ts";
import { buildImageWithMigration } from "./upgraded-image.ts";

const execFileAsync = promisify(execFile);
const id = randomBytes(4).toString("hex");
const stack = `platform-stack-test-${id}`;
const network = `${stack}-network`;
const controlPlaneHost = `platform-${id}.stack-test.example`;
const applicationHost = `web-${id}.stack-test.example`;
const appName = `stack-test-web-${id}`;
const SERVED_PAGE = "platform test image";
const CONTROL_PLANE_IMAGE = "platform-test/control-plane:stack-test";
const NEWER_IMAGE = `platform-test/control-plane:stack-test-${id}-newer`;
const COMPONENTS = ["postgres", "nats", "traefik", "control-plane"] as const;
/** Copies of the control plane. */
const REPLICAS = 2;
const SECRETS = [
  "database-url",
  "nats-account-seed",
  "nats-conf",
  "nats-creds",
  "postgres-password",
  "secret-key",
  "setup-token",
];
/** The migration only the newer image has: it records what it found, so its effect shows it ran on the data. */
const UPGRADE_MIGRATION = "20991231-0001-install-upgrade-test";
const UPGRADE_MIGRATION_SOURCE = `import { type Kysely, sql } from "kysely";
// biome-ignore lint/suspicious/noExplicitAny: a test migration
export async function up(db: Kysely<any>): Promise<void> {
  await sql\`create table install_upgrade_test (projects text not null)\`.execute(db);
  await sql\`insert into install_upgrade_test select coalesce(string_agg(name, ',' order by name), '') from projects\`.execute(db);
}
`;
/** The docker command that deploys the stack (not `stack deploy --help`). */
const STACK_DEPLOY = /^stack deploy .*-c /;

let mainDirectory: string;
let agentsDirectory: string;
/** Fixed, so that the image is not rebuilt for it on each run (its checksum is an input). */
const RELEASE_ARM64_AGENT = "the stack test's arm64 agent executable\n";
let backupDirectory: string;
let ports: { http: number; https: number; controlPlane: number; nats: number };
let images: { postgres: string; nats: string; traefik: string };
let installed = false;

/** The public API through Traefik: by the control plane's domain, or on the control plane's port (entry point platform-api). */
function api(via: "traefik" | "direct", token?: string) {
  const port = via === "traefik" ? ports.http : ports.controlPlane;
  const host = via === "traefik" ? controlPlaneHost : `127.0.0.1:${port}`;
  const call = async (method: "GET" | "POST", name: string, input: Record<string, unknown>) => {
    const query = new URLSearchParams(
      Object.entries(input).map(([key, value]) => [
        key,
        typeof value === "object" ? JSON.stringify(value) : String(value),
      ]),
    ).toString();
    const answer =
      method === "GET"
        ? await request(port, host, "GET", `/api/${name}${query ? `?${query}` : ""}`, { token })
        : await request(port, host, "POST", `/api/${name}`, { body: input, token });
    expect(answer.status, `${name} via ${via}: ${answer.text.slice(0, 500)}`).toBe(200);
    return answer.body;
  };
  return {
    query: (name: string, input: Record<string, unknown> = {}) => call("GET", name, input),
    mutate: (name: string, input: Record<string, unknown> = {}) => call("POST", name, input),
  };
}

/** The arguments of deploy/install.sh with this test's names, ports and images. */
function installArgs(...extra: string[]): string[] {
  return installArguments(
    path.join(repoRoot, "deploy/install.sh"),
    { stack, network, ports, mainDirectory, backupDirectory, images },
    "--replicas",
    String(REPLICAS),
    ...extra,
  );
}

/** deploy/install.sh as root with this test's names, ports and images; its output. */
async function install(...extra: string[]): Promise<string> {
  const args = installArgs(...extra);
  const started = Date.now();
  try {
    const { stdout, stderr } = await execFileAsync("bash", args, { maxBuffer: 16 * 1024 * 1024 });
    console.log(`install.sh ${extra.join(" ")}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return stdout + stderr;
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`install.sh failed: ${failure.message}\n${failure.stdout ?? ""}${failure.stderr ?? ""}`);
  }
}

/** The names of this stack's secrets. */
async function secretNames(): Promise<string[]> {
  const names = await docker(
    "secret",
    "ls",
    "--format",
    "{{.Name}}",
    "--filter",
    `label=platform.stack=${stack}`,
  );
  return names ? names.split("\n").sort() : [];
}

/** The ids of this stack's secrets (a secret made again has a new one). */
async function secretIds(): Promise<string[]> {
  const ids = await docker("secret", "ls", "-q", "--filter", `label=platform.stack=${stack}`);
  return ids.split("\n").sort();
}

/** How many networks are named exactly `name`. */
async function networksNamed(name: string): Promise<number> {
  const names = await docker("network", "ls", "--format", "{{.Name}}");
  return names.split("\n").filter((line) => line === name).length;
}

async function stackServices(): Promise<string[]> {
  const names = await docker(
    "service",
    "ls",
    "--format",
    "{{.Name}}",
    "--filter",
    `label=com.docker.stack.namespace=${stack}`,
  );
  return names ? names.split("\n").sort() : [];
}

/** One value of a query run by psql in the stack's database container. */
async function databaseValue(query: string): Promise<string> {
  const container = (
    await docker("ps", "-q", "--filter", `label=com.docker.swarm.service.name=${stack}_postgres`)
  ).split("\n")[0];
  if (!container) throw new Error("the stack's database is not running");
  return docker("exec", container, "psql", "-U", "platform", "-d", "platform", "-tAc", query);
}

/** The control plane's running tasks: id and image. */
async function controlPlaneTasks(): Promise<{ id: string; image: string }[]> {
  const lines = await docker(
    "service",
    "ps",
    `${stack}_control-plane`,
    "--filter",
    "desired-state=running",
    "--format",
    "{{.ID}} {{.Image}} {{.CurrentState}}",
  );
  return lines
    .split("\n")
    .filter((line) => / Running /.test(`${line} `))
    .map((line) => {
      const [id, image] = line.split(" ");
      return { id: id!, image: image!.replace(/@sha256:.*$/, "") };
    });
}

/**
 * A client calling `project.all` and `application.one` one after the other through Traefik's
 * platform-api entry point until stopped, as fast as the session's rate limit lets it: how many calls it made and every failure (an answer
 * other than 200 or the expected data, or no answer).
 */
function callInALoop(token: string, applicationId: string) {
  let running = true;
  const failures: string[] = [];
  let calls = 0;
  const host = `127.0.0.1:${ports.controlPlane}`;
  const loop = (async () => {
    while (running) {
      for (const [pathname, check] of [
        ["/api/project.all", (body: any) => Array.isArray(body) && body.some((p) => p.name === "Stack test")],
        [
          `/api/application.one?applicationId=${applicationId}`,
          (body: any) => body?.applicationId === applicationId,
        ],
      ] as const) {
        calls++;
        try {
          const answer = await request(ports.controlPlane, host, "GET", pathname, { token });
          if (answer.status !== 200 || !check(answer.body)) {
            failures.push(`${pathname}: ${answer.status} ${answer.text.slice(0, 300)}`);
          }
        } catch (error) {
          failures.push(`${pathname}: ${(error as Error).message}`);
        }
        // 5 calls a second: under the per-session rate limit (SESSION_RATE_LIMIT, 600 a minute).
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { calls, failures };
    },
  };
}

/** The id of the running task of a component's service. */
async function runningTask(component: (typeof COMPONENTS)[number]): Promise<string> {
  const lines = await docker(
    "service",
    "ps",
    `${stack}_${component}`,
    "--filter",
    "desired-state=running",
    "--format",
    "{{.ID}} {{.CurrentState}}",
  );
  const running = lines.split("\n").find((line) => / Running /.test(`${line} `));
  if (!running) throw new Error(`no running task of ${component}: ${lines}`);
  return running.split(" ")[0]!;
}

beforeAll(async () => {
  execFileSync("node", ["scripts/build.mjs", "--if-stale"], { cwd: repoRoot, stdio: "ignore" });
  const { debian, ...dependencies } = stackImages();
  images = dependencies;
  // The release's agent executables go in with --agents (as the release workflow builds them
  // once for both images): this one stands for the arm64 agent this machine's build does not make.
  agentsDirectory = await mkdtemp(path.join(tmpdir(), "platform-stack-test-agents-"));
  await writeFile(path.join(agentsDirectory, "platform-agent-linux-arm64"), RELEASE_ARM64_AGENT);
  built(
    "build-control-plane-image.sh",
    "--base",
    debian,
    "--tag",
    CONTROL_PLANE_IMAGE,
    "--agents",
    agentsDirectory,
  );
  ports = {
    http: await freePort(),
    https: await freePort(),
    controlPlane: await freePort(),
    nats: await freePort(),
  };
  mainDirectory = await mkdtemp(path.join(tmpdir(), "platform-stack-test-main-"));
  backupDirectory = await mkdtemp(path.join(tmpdir(), "platform-stack-test-backups-"));
}, 1_500_000);

afterAll(async () => {
  await removeStack(stack, network, [appName]);
  await docker("image", "rm", NEWER_IMAGE).catch(() => "");
  if (agentsDirectory) await rm(agentsDirectory, { recursive: true, force: true });
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
  if (backupDirectory) await rm(backupDirectory, { recursive: true, force: true });
}, 180_000);

describe("the production stack (deploy/install.sh on this machine's Swarm)", () => {
  let token: string;
  let applicationId: string;

  /** The data the stack must keep: the user can log in, the application and its domain are there. */
  async function dataIsKept() {
    const session = await api("traefik").mutate("auth.login", {
      email: "owner@example.com",
      password: "correct-horse-battery",
    });
    expect(session.token).toEqual(expect.any(String));
    const application = await api("traefik", session.token).query("application.one", { applicationId });
    expect(application).toMatchObject({ appName, applicationStatus: "done" });
    expect(application.domains.map((domain: { host: string }) => domain.host)).toEqual([applicationHost]);
  }

  async function applicationServes() {
    const page = await request(ports.http, applicationHost, "GET", "/");
    expect(page.status, page.text).toBe(200);
    expect(page.text).toContain(SERVED_PAGE);
  }

  let secretsBeforeDeploy: string[];
  const workDirectory = () => path.join(tmpdir(), `platform-install-${stack}`);

  it("install.sh killed (SIGKILL) between the two Postgres secrets, before the deploy, during the services' creation", async () => {
    installed = true;
    const args = installArgs("--image", CONTROL_PLANE_IMAGE);
    // Between the database URL and the password: the URL alone is made again by the next run.
    await installKilledAt(args, { command: new RegExp(`^secret create .* ${stack}_postgres-password `) });
    expect(await secretNames()).toEqual([`${stack}_database-url`]);

    // Every secret and the network made, nothing deployed.
    const output = await installKilledAt(args, { command: STACK_DEPLOY });
    expect(output).toMatch(/generating the NATS operator, accounts/);
    expect(await secretNames()).toEqual(SECRETS.map((name) => `${stack}_${name}`));
    expect(await networksNamed(network)).toBe(1);
    expect(await stackServices()).toEqual([]);
    // Killed, it left no generated value on the disk: its work directory holds the stack file only.
    expect(readdirSync(workDirectory(), { recursive: true }).sort()).toEqual(["nats", "stack.yml"]);
    secretsBeforeDeploy = await secretIds();

    // During `docker stack deploy`: the Engine has created one of the four services.
    await installKilledAt(args, {
      api: { command: STACK_DEPLOY, request: /^POST (\/v[\d.]+)?\/services\/create/, count: 2 },
    });
    expect(await stackServices()).toHaveLength(1);
    expect(await secretIds()).toEqual(secretsBeforeDeploy);
  }, 600_000);

  it("installs in one command and the control plane answers, then through Traefik on its domain", async () => {
    const output = await install("--image", CONTROL_PLANE_IMAGE);
    expect(output).toMatch(/Platform is ready at http:\/\/127\.0\.0\.1:/);
    // No account exists yet: it prints the set-up token the first registration needs.
    const setupToken = /^Set-up token: (\S+)$/m.exec(output)?.[1];
    expect(setupToken, output).toMatch(/^[A-Za-z0-9]{16,}$/);
    expect(output).toContain(`/?setup=${setupToken}`);
    // The killed runs' secrets are kept (the database was initialized with that password), none
    // is made twice, and so are the networks.
    expect(output).not.toMatch(/generating/);
    expect(await secretIds()).toEqual(secretsBeforeDeploy);
    expect(await networksNamed(network)).toBe(1);
    expect(await networksNamed(`${stack}_internal`)).toBe(1);
    expect(await stackServices()).toEqual(COMPONENTS.map((component) => `${stack}_${component}`).sort());
    // Two copies of the control plane, updated one at a time, the new one healthy first.
    const spec = JSON.parse(
      await docker("service", "inspect", `${stack}_control-plane`, "--format", "{{json .Spec}}"),
    );
    expect(spec.Mode.Replicated.Replicas).toBe(REPLICAS);
    expect(spec.UpdateConfig).toMatchObject({ Parallelism: 1, Order: "start-first" });
    expect(spec.TaskTemplate.ContainerSpec.Healthcheck.Test.join(" ")).toContain("/health/ready");
    expect(spec.EndpointSpec?.Ports ?? []).toEqual([]);
    expect(await controlPlaneTasks()).toHaveLength(REPLICAS);
    expect(output).toMatch(/PostgreSQL is the one stateful part/);
    // The secrets are Docker secrets, not files left on the disk.
    expect(await secretNames()).toEqual(SECRETS.map((name) => `${stack}_${name}`));
    expect(existsSync(workDirectory())).toBe(false);
    expect(await readFile(path.join(mainDirectory, `install-${stack}.env`), "utf8")).not.toMatch(
      /password|seed/i,
    );
    // Traefik's static configuration is valid for Traefik v3 and keeps the User-Agent in the access log.
    const traefik = parseStaticConfig(
      await readFile(path.join(mainDirectory, "traefik/traefik.yml"), "utf8"),
    );
    expect(traefik).toMatchObject({
      ok: true,
      config: { accessLog: { format: "json", fields: { headers: { names: { "User-Agent": "keep" } } } } },
    });

    // It serves the agent executable given to the image's build (--agents), checksum included.
    const served = await request(
      ports.controlPlane,
      `127.0.0.1:${ports.controlPlane}`,
      "GET",
      "/agent/platform-agent-linux-arm64.sha256",
    );
    expect(served.status, served.text).toBe(200);
    expect(served.text).toBe(
      `${createHash("sha256").update(RELEASE_ARM64_AGENT).digest("hex")}  platform-agent-linux-arm64\n`,
    );

    // The control plane's port (through Traefik) has clients that are not the container's
    // loopback: without the set-up token, the first registration is refused (issue 37 finding 11).
    const owner = { email: "owner@example.com", password: "correct-horse-battery", name: "Owner" };
    const refused = await request(
      ports.controlPlane,
      `127.0.0.1:${ports.controlPlane}`,
      "POST",
      "/api/auth.register",
      {
        body: owner,
      },
    );
    expect(refused.status, refused.text).toBe(403);
    const session = await api("direct").mutate("auth.register", { ...owner, setupToken });
    token = session.token;
    // Before its domain is assigned, Traefik routes nothing to it.
    expect((await request(ports.http, controlPlaneHost, "GET", "/health")).status).toBe(404);
    await api("direct", token).mutate("settings.assignDomainServer", {
      host: controlPlaneHost,
      certificateType: "none",
      https: false,
    });
    const health = await eventually(
      async () => {
        const answer = await request(ports.http, controlPlaneHost, "GET", "/health/ready");
        expect(answer.status, answer.text).toBe(200);
        return answer.body;
      },
      30_000,
      "the control plane through Traefik",
    );
    expect(health).toMatchObject({ status: "ok" });
    const me = await api("traefik", token).query("user.get");
    expect(me.user?.email ?? me.email).toBe("owner@example.com");
  }, 600_000);

  it("deploys an application on its own machine's agent, served through Traefik by its domain", async () => {
    const client = api("traefik", token);
    const project = await client.mutate("project.create", { name: "Stack test" });
    const application = await client.mutate("application.create", {
      name: "web",
      appName,
      environmentId: project.environment.environmentId,
    });
    applicationId = application.applicationId;
    await client.mutate("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    await client.mutate("application.update", { applicationId, command: "httpd -f -p 8080 -h /www" });
    await client.mutate("domain.create", {
      domainType: "application",
      applicationId,
      host: applicationHost,
      path: "/",
      port: 8080,
      https: false,
      certificateType: "none",
    });
    await client.mutate("application.deploy", { applicationId });
    await eventually(
      async () => {
        const one = await client.query("application.one", { applicationId });
        if (one.applicationStatus === "error") {
          const deployments = await client.query("deployment.all", { applicationId });
          throw new FinalFailure(`the deployment failed: ${deployments[0]?.errorMessage}`);
        }
        expect(one.applicationStatus).toBe("done");
      },
      180_000,
      "the deployment",
    );
    // The agent attached it to the stack's network (Traefik reaches it by its name there).
    const networks = await docker(
      "service",
      "inspect",
      appName,
      "--format",
      "{{json .Spec.TaskTemplate.Networks}}",
    );
    const networkId = await docker("network", "inspect", network, "--format", "{{.Id}}");
    expect(networks).toContain(networkId);
    await eventually(applicationServes, 60_000, "the application through Traefik");
  }, 300_000);

  it.each(COMPONENTS)(
    "survives `docker service update --force` of %s with its data",
    async (component) => {
      const before = await runningTask(component);
      await docker("service", "update", "--force", "--detach", `${stack}_${component}`);
      await eventually(
        async () => expect(await runningTask(component)).not.toBe(before),
        180_000,
        `a new task of ${component}`,
      );
      await eventually(dataIsKept, 180_000, `the control plane after ${component} restarted`);
      await eventually(applicationServes, 60_000, `the application after ${component} restarted`);
    },
    420_000,
  );

  it("still deploys after every component restarted (NATS, the agent and the database work together)", async () => {
    const client = api("traefik", token);
    const before = await client.query("application.one", { applicationId });
    await client.mutate("application.redeploy", { applicationId });
    await eventually(
      async () => {
        const one = await client.query("application.one", { applicationId });
        expect(one.deployments.length).toBeGreaterThan(before.deployments.length);
        expect(one.deployments[0].status).toBe("done");
      },
      180_000,
      "the redeployment",
    );
    await applicationServes();
  }, 240_000);

  it("changes nothing when run again: the same secrets, service specs and running tasks", async () => {
    const state = async () => ({
      secrets: await docker("secret", "ls", "-q", "--filter", `label=platform.stack=${stack}`),
      specs: await Promise.all(
        COMPONENTS.map(async (component) =>
          JSON.parse(
            await docker("service", "inspect", `${stack}_${component}`, "--format", "{{json .Spec}}"),
          ),
        ),
      ),
    });
    const before = await state();
    const tasks = await Promise.all(COMPONENTS.map(runningTask));
    const output = await install("--image", CONTROL_PLANE_IMAGE);
    expect(output).not.toMatch(/generating|backing/);
    // Claimed: no set-up token any more.
    expect(output).not.toMatch(/Set-up token/);
    expect(await state()).toEqual(before);
    expect(output).toMatch(/deployed with these settings already: unchanged/);
    expect(await Promise.all(COMPONENTS.map(runningTask))).toEqual(tasks);
    await dataIsKept();
  }, 300_000);

  it("upgrades with --upgrade, killed (SIGKILL) during and after the backup and during the services' update, then run again: backed up, migrated, the data kept", async () => {
    expect(installed).toBe(true);
    // A newer release: the same control plane with one more migration.
    await buildImageWithMigration(
      CONTROL_PLANE_IMAGE,
      NEWER_IMAGE,
      UPGRADE_MIGRATION,
      UPGRADE_MIGRATION_SOURCE,
    );
    const applied = () =>
      databaseValue(`select count(*) from kysely_migration where name = '${UPGRADE_MIGRATION}'`);
    expect(await applied()).toBe("0");
    const args = installArgs("--upgrade", "--image", NEWER_IMAGE);
    // A client calls the API all through the upgrade (the killed runs may start the roll already).
    const client = callInALoop(token, applicationId);
    const before = await controlPlaneTasks();
    expect(before.map((task) => task.image)).toEqual(Array(REPLICAS).fill(CONTROL_PLANE_IMAGE));

    const dumps = () => readdirSync(backupDirectory).filter((name) => name.endsWith(".sql"));
    // While dumping: what it leaves is not named as a backup.
    await installKilledAt(args, { command: /^exec .* pg_dump / });
    expect(readdirSync(backupDirectory)).toEqual([expect.stringMatching(/\.sql\.partial$/)]);
    // After the backup, before the deploy.
    await installKilledAt(args, { command: STACK_DEPLOY });
    expect(dumps()).toHaveLength(1);
    // During `docker stack deploy`: the Engine has updated one of the four services.
    await installKilledAt(args, {
      api: { command: STACK_DEPLOY, request: /^POST (\/v[\d.]+)?\/services\/[^/]+\/update/, count: 2 },
    });

    const output = await install("--upgrade", "--image", NEWER_IMAGE);
    // install.sh returned once every copy ran the new image: the roll is over.
    const after = await controlPlaneTasks();
    expect(after.map((task) => task.image)).toEqual(Array(REPLICAS).fill(NEWER_IMAGE));
    expect(after.map((task) => task.id)).not.toContain(before[0]!.id);
    const { calls, failures } = await client.stop();
    console.log(`calls during the upgrade: ${calls}, failed: ${failures.length}`);
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan(20);
    // Every run made its backup before its deploy, whole (a killed dump would be left .partial).
    const backups = dumps().sort();
    // Three runs dumped (two within the same second share a name: the later dump replaces it).
    expect(backups.length).toBeGreaterThanOrEqual(2);
    expect(readdirSync(backupDirectory).filter((name) => name.endsWith(".partial"))).toEqual([]);
    for (const name of backups) {
      expect(name).toMatch(new RegExp(`^platform-${stack}-\\d{8}T\\d{6}Z\\.sql$`));
      const dump = await readFile(path.join(backupDirectory, name), "utf8");
      expect(dump).toContain("owner@example.com");
      expect(dump).toContain("-- PostgreSQL database dump complete");
    }
    const backup = /backing the database up to (\S+)/.exec(output)?.[1];
    expect(backup && path.basename(backup)).toBe(backups.at(-1));
    // The dump came before the deploy.
    expect(output.indexOf("backing the database up")).toBeLessThan(output.indexOf("deploying stack"));
    expect(existsSync(path.join(mainDirectory, `install-${stack}.env`))).toBe(true);
    expect(await readFile(path.join(mainDirectory, `install-${stack}.env`), "utf8")).toContain(NEWER_IMAGE);

    const image = await docker(
      "service",
      "inspect",
      `${stack}_control-plane`,
      "--format",
      "{{.Spec.TaskTemplate.ContainerSpec.Image}}",
    );
    expect(image).toBe(NEWER_IMAGE);
    await eventually(dataIsKept, 120_000, "the upgraded control plane");
    // The new release's migration ran once, on the data the old one left.
    expect(await applied()).toBe("1");
    expect(await databaseValue("select projects from install_upgrade_test")).toBe("Stack test");
    const projects = await api("traefik", token).query("project.all");
    expect(projects.map((project: { name: string }) => project.name)).toContain("Stack test");
    expect(await secretIds()).toEqual(secretsBeforeDeploy);
    await eventually(applicationServes, 60_000, "the application after the upgrade");
  }, 900_000);
});
