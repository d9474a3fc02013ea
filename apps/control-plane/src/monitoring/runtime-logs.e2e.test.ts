/**
 * Runtime logs end to end on the real Docker Engine (Swarm) with the control plane's in-process
 * agent: an application of the busybox test image printing a known line every second shows it
 * in application.readLogs (filtered by `search`, bounded by `tail`), its deployment's log in
 * deployment.readLogs; a compose stack's container in compose.readLogs (and, of a container that
 * printed about 1 MB, at most the agent's 768 KiB bound: the newest lines); a service of each database
 * kind (the local test images; mongo is the stand-in) in <kind>.readLogs. compose.readLogs (whose composeId the generated attack suite does not
 * cover) is a 404 for another organization, for a member not granted the stack, and for a
 * container that is not the stack's. Bad inputs are 400s naming the field.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeDatabaseServices,
  removeDeployedApps,
  requireDocker,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const BUSYBOX = "platform-test/busybox:latest";
const IMAGES = {
  PLATFORM_DEFAULT_IMAGE_POSTGRES: process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15",
  PLATFORM_DEFAULT_IMAGE_MARIADB: process.env.PLATFORM_TEST_MARIADB_IMAGE ?? "platform-test/db-mariadb:11",
  PLATFORM_DEFAULT_IMAGE_MYSQL: process.env.PLATFORM_TEST_MARIADB_IMAGE ?? "platform-test/db-mariadb:11",
  PLATFORM_DEFAULT_IMAGE_REDIS: process.env.PLATFORM_TEST_REDIS_IMAGE ?? "platform-test/db-redis:7",
  PLATFORM_DEFAULT_IMAGE_MONGO: process.env.PLATFORM_TEST_MONGO_IMAGE ?? "platform-test/db-mongo-standin:8",
  PLATFORM_DEFAULT_IMAGE_LIBSQL:
    process.env.PLATFORM_TEST_LIBSQL_IMAGE ?? "platform-test/db-libsql-standin:0.24",
};
const DEPLOY_WAIT_MS = 240_000;
/** `<RFC 3339 time> <task or container> | <text>` */
const LINE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z \S+ \| .*$/;

let platform: TestPlatform;
let owner: Session;
let mainDirectory: string;
let environmentId: string;
const appName = uniqueName("logs-app");
const stackName = uniqueName("logs-stack");
const databaseNames: string[] = [];
const as = (session = owner) => ({ token: session.token });
const ok = (name: string, input: Record<string, unknown>, session = owner) =>
  platform.mutateOk(name, input, as(session));

async function settle(procedure: string, input: Record<string, unknown>) {
  const { deploymentId } = (await ok(procedure, input)) ?? {};
  const row = await platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
  expect(row.status, row.logs ?? "").toBe("done");
  return row;
}

/** The logs answered by `name` once `ready` holds (the workload may still be starting). */
async function logsWhen(
  name: string,
  input: Record<string, unknown>,
  ready: (logs: string) => boolean,
  what: string,
): Promise<string> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const response = await platform.query(name, input, as());
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const logs = response.body as string;
    if (ready(logs)) return logs;
    if (Date.now() > deadline) throw new Error(`${name} never showed ${what}; last answer:\n${logs}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

const logsContaining = (name: string, input: Record<string, unknown>, text: string) =>
  logsWhen(name, input, (logs) => logs.includes(text), text);

const linesOf = (logs: string) => logs.replace(/\n$/, "").split("\n");

/** The running container of the Swarm service `service`. */
async function containerOf(service: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const id = (
      await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${service}`])
    ).split("\n")[0]!;
    if (id) return id;
    if (Date.now() > deadline) throw new Error(`no container of ${service}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

beforeAll(async () => {
  await requireDocker();
  for (const image of Object.values(IMAGES)) await dockerCli(["image", "inspect", image]);
  mainDirectory = await mkdtemp(path.join(tmpdir(), "runtime-logs-e2e-"));
  platform = await startTestPlatform(IMAGES, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
  environmentId = (await ok("project.create", { name: "Logs" })).environment.environmentId;
}, 60_000);

afterAll(async () => {
  await removeDeployedApps([appName]);
  await removeDatabaseServices(databaseNames);
  await dockerCli(["stack", "rm", stackName]).catch(() => {});
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 90_000);

describe("runtime logs on real Docker", () => {
  let applicationId: string;
  let deploymentId: string;
  let composeId: string;
  let floodContainerId: string;

  it("application.readLogs shows the line the application prints every second", async () => {
    ({ applicationId } = await ok("application.create", { name: "ticker", appName, environmentId }));
    await ok("application.saveDockerProvider", { applicationId, dockerImage: BUSYBOX });
    await ok("application.update", {
      applicationId,
      command: "sh -c 'i=0; while true; do echo \"runtime-log-marker $i\"; i=$((i+1)); sleep 1; done'",
    });
    deploymentId = (await settle("application.deploy", { applicationId })).deploymentId;

    const logs = await logsContaining(
      "application.readLogs",
      { applicationId, tail: 100 },
      "runtime-log-marker 2",
    );
    for (const line of linesOf(logs)) expect(line).toMatch(LINE);
    expect(logs).toMatch(new RegExp(` ${appName}\\.1\\.[a-z0-9]{12} \\| runtime-log-marker 0\\n`));

    const read = async (input: Record<string, unknown>) =>
      linesOf(
        (await platform.query("application.readLogs", { applicationId, ...input }, as())).body as string,
      );
    // Like Dokploy's `docker logs --tail | grep -iF`: the phrase, literal and case-insensitive,
    // among the newest `tail` lines.
    const found = await read({ tail: 100, search: "MARKER 1" });
    expect(found.length).toBeGreaterThan(0);
    for (const line of found) expect(line).toMatch(/\| runtime-log-marker 1\d*$/);
    expect(await read({ tail: 2 })).toHaveLength(2);
    expect(
      (await platform.query("application.readLogs", { applicationId, search: "no such phrase" }, as())).body,
    ).toBe("");
    await logsContaining("application.readLogs", { applicationId }, "runtime-log-marker 6");
    const recent = await read({ since: "2s" });
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.length).toBeLessThan((await read({ since: "all" })).length);
  }, 300_000);

  it("refuses bad inputs with a 400 naming the field", async () => {
    for (const [input, field] of [
      [{ tail: 0 }, "tail"],
      [{ tail: 10_001 }, "tail"],
      [{ since: "5x" }, "since"],
      [{ search: "a;rm -rf /" }, "search"],
    ] as const) {
      const response = await platform.query("application.readLogs", { applicationId, ...input }, as());
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
  });

  it("deployment.readLogs answers the last `tail` lines of the deployment's log", async () => {
    const all = (await platform.query("deployment.readLogs", { deploymentId }, as())).body as string;
    expect(linesOf(all).length).toBeGreaterThan(2);
    const last = (await platform.query("deployment.readLogs", { deploymentId, tail: 2 }, as()))
      .body as string;
    expect(linesOf(last)).toEqual(linesOf(all).slice(-2));
  });

  it("compose.readLogs shows a stack container's lines, to no one else and of no other container", async () => {
    ({ composeId } = await ok("compose.create", {
      name: "ticker",
      appName: stackName,
      environmentId,
      composeType: "stack",
      composeFile: `services:
  ticker:
    image: ${BUSYBOX}
    command: ["sh", "-c", "while true; do echo compose-log-marker; sleep 1; done"]
  flood:
    image: ${BUSYBOX}
    command: ["sh", "-c", "pad=$$(printf '%1000s' | tr ' ' x); i=0; while [ $$i -lt 1000 ]; do echo flood-$$i-$$pad; i=$$((i+1)); done; echo flood-end; sleep 3600"]
`,
    }));
    await settle("compose.deploy", { composeId });
    floodContainerId = await containerOf(`${stackName}_flood`);
    const containerId = await containerOf(`${stackName}_ticker`);
    const query = { composeId, containerId, tail: 5, since: "1h", search: "LOG-marker" };
    const logs = await logsContaining("compose.readLogs", query, "compose-log-marker");
    expect(linesOf(logs)[0]).toMatch(new RegExp(` ${stackName}_ticker\\.1\\.\\S+ \\| compose-log-marker$`));
    // The stack prints a line a second: `tail` keeps the newest 5 once there are more.
    const full = await logsWhen(
      "compose.readLogs",
      { ...query, tail: 100 },
      (text) => linesOf(text).length > 6,
      "7 lines",
    );
    expect(linesOf(await logsWhen("compose.readLogs", query, () => true, "an answer"))).toHaveLength(5);
    expect(linesOf(full).length).toBeGreaterThan(5);

    // The application's container is the same organization's, but not of this stack.
    const appContainer = (
      await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${appName}`])
    ).split("\n")[0]!;
    const foreign = await platform.query("compose.readLogs", { composeId, containerId: appContainer }, as());
    expect(foreign.status, JSON.stringify(foreign.body)).toBe(404);

    const member = await platform.addMember(owner, "member", "logs-member@example.com");
    await ok("user.assignPermissions", { id: member.user.userId, accessedServices: [applicationId] });
    const ungranted = await platform.query("compose.readLogs", { composeId, containerId }, as(member));
    expect(ungranted.status, JSON.stringify(ungranted.body)).toBe(404);

    const stranger = await platform.addMember(owner, "member", "logs-stranger@example.com");
    const created = await ok("organization.create", { name: "Elsewhere" }, stranger);
    await ok("organization.setActive", { organizationId: created.id }, stranger);
    const other = await platform.query("compose.readLogs", { composeId, containerId }, as(stranger));
    expect(other.status, JSON.stringify(other.body)).toBe(404);
    expect(JSON.stringify(other.body)).not.toContain("compose-log-marker");
  }, 300_000);

  it("compose.readLogs of a container that printed about 1 MB answers at most 768 KiB, its newest lines", async () => {
    // The agent's bound on an answer (MAX_ANSWER_BYTES, agent docker/logs.ts): it fits a NATS message.
    const input = { composeId, containerId: floodContainerId, tail: 10_000 };
    const logs = await logsContaining("compose.readLogs", input, "| flood-end\n");
    expect(Buffer.byteLength(logs)).toBeLessThanOrEqual(768 * 1024);
    const lines = linesOf(logs);
    expect(lines.at(-1)).toMatch(/ \| flood-end$/);
    const numbers = lines.slice(0, -1).map((line) => Number(/ \| flood-(\d+)-x{1000}$/.exec(line)![1]));
    // The oldest went, the newest stayed, none missing between.
    expect(numbers[0]).toBeGreaterThan(0);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, index) => numbers[0]! + index));
    expect(numbers.at(-1)).toBe(999);
  });

  it("every database kind's readLogs shows its service's own lines", async () => {
    const credentials = { databaseName: "logs", databaseUser: "logs", databasePassword: "Logs#pass1" };
    const kinds = [
      ["postgres", "postgresId", credentials, "database system is ready to accept connections"],
      ["mysql", "mysqlId", { ...credentials, databaseRootPassword: "Root#pass1" }, "ready for connections"],
      [
        "mariadb",
        "mariadbId",
        { ...credentials, databaseRootPassword: "Root#pass1" },
        "ready for connections",
      ],
      ["redis", "redisId", { databasePassword: "Logs#pass1" }, "Ready to accept connections"],
      ["mongo", "mongoId", { databaseUser: "logs", databasePassword: "Logs#pass1" }, "db-mongo-standin"],
      [
        "libsql",
        "libsqlId",
        { databaseUser: "logs", databasePassword: "Logs#pass1", sqldNode: "primary" },
        "db-libsql-standin",
      ],
    ] as const;
    await Promise.all(
      kinds.map(async ([kind, idKey, fields, readyLine]) => {
        const appName = uniqueName(`logs-${kind}`);
        databaseNames.push(appName);
        const created = await ok(`${kind}.create`, { name: kind, appName, environmentId, ...fields });
        const id = created[idKey] as string;
        await settle(`${kind}.deploy`, { [idKey]: id });
        const logs = await logsContaining(
          `${kind}.readLogs`,
          { [idKey]: id, tail: 1000, since: "1h", search: readyLine.split(" ")[0] },
          readyLine,
        );
        for (const line of linesOf(logs)) expect(line).toMatch(new RegExp(` ${appName}\\.1\\.\\S+ \\| `));
        expect(logs).not.toContain("Logs#pass1");
      }),
    );
  }, 300_000);
});
