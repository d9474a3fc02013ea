/**
 * GET /api/runtime.logs (following a service's runtime log as server-sent events) end to end on
 * the real Docker Engine (Swarm), NATS with JWT auth, the control plane's in-process agent and an
 * agent daemon process:
 * - an application, a compose stack's container and a postgres service, each printing a known
 *   line every second: new lines arrive in the stream (the time each took is printed, not asserted);
 * - an application on the agent process's server printing a sequence number every 0.2 s: the
 *   agent is killed with SIGKILL mid-stream and started again; the stream goes on, and the numbers
 *   it carried are every number from its first to its last, each once (no loss, no repeat);
 * - Last-Event-ID resumes after the given line, with no repeat;
 * - the stream ends (`end` {reason: removed}) when the service is removed;
 * - another organization's service and a member without the grant get 404 (a member granted
 *   the application follows it), bad inputs a 400
 *   naming the field, and nothing is followed for them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, removeDeployedApps, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import { applicationOwner, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type AgentProcess,
  insertTestServer,
  killAgentProcess,
  listen,
  serverRow,
  startAgentProcess,
} from "../agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../agents/testing/nats-jwt.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const BUSYBOX = "platform-test/busybox:latest";
const POSTGRES = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";
const DEPLOY_WAIT_MS = 240_000;

let platform: TestPlatform;
let nats: JwtNats;
let http: { url: string; close(): Promise<void> };
let owner: Session;
let stranger: Session;
let environmentId: string;
let serverA: string;
let agentA: AgentProcess | undefined;
const directories: string[] = [];
const appName = uniqueName("follow-app");
const stackName = uniqueName("follow-stack");
const remoteAppName = uniqueName("follow-remote");
const databaseNames: string[] = [];
const ok = (name: string, input: Record<string, unknown>, session = owner) =>
  platform.mutateOk(name, input, { token: session.token });

interface LogEvent {
  id?: string;
  event: string;
  data: string;
  receivedAtMs?: number;
}

/** How long after Docker took the line in it reached the client (printed, never asserted). */
function latency(stream: EventStream, text: string): string {
  const event = stream.events.find((candidate) => candidate.data.includes(text))!;
  return `${event.receivedAtMs! - Date.parse(event.id!)} ms`;
}

/** A GET /api/runtime.logs stream: its events as they come, until closed. */
class EventStream {
  readonly events: LogEvent[] = [];
  status = 0;
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();

  static async open(query: Record<string, string>, session: Session, headers: Record<string, string> = {}) {
    const stream = new EventStream();
    const url = `${http.url}/api/runtime.logs?${new URLSearchParams(query)}`;
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${session.token}`, ...headers },
      signal: stream.abort.signal,
    });
    stream.status = response.status;
    if (response.status !== 200) {
      stream.events.push({ event: "http", data: await response.text() });
      return stream;
    }
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    stream.done = stream.read(response.body!);
    return stream;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: LogEvent = { event: "message", data: "", receivedAtMs: Date.now() };
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) event.id = line.slice(4);
            else if (line.startsWith("event: ")) event.event = line.slice(7);
            else if (line.startsWith("data: ")) event.data = line.slice(6);
          }
          if (block.split("\n").some((line) => !line.startsWith(":"))) this.events.push(event);
        }
      }
    } catch {
      // Aborted by close().
    }
  }

  logs(): string[] {
    return this.events.filter((event) => event.event === "log").map((event) => event.data);
  }

  /** Waits until a log line contains `text`; answers how long that took. */
  async waitFor(text: string | ((events: LogEvent[]) => boolean), timeout = 90_000): Promise<number> {
    const started = Date.now();
    await vi.waitFor(
      () => {
        const found =
          typeof text === "string" ? this.logs().some((line) => line.includes(text)) : text(this.events);
        if (!found) throw new Error(`not yet: ${JSON.stringify(this.events.slice(-5))}`);
      },
      { timeout, interval: 50 },
    );
    return Date.now() - started;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

async function settle(procedure: string, input: Record<string, unknown>) {
  const { deploymentId } = (await ok(procedure, input)) ?? {};
  const row = await platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
  expect(row.status, row.logs ?? "").toBe("done");
}

/** The number in the newest line with `marker`, or -1. */
const newestNumber = (stream: EventStream, marker: string) => {
  const numbers = stream
    .logs()
    .map((line) => new RegExp(`\\| ${marker} (\\d+)$`).exec(line))
    .filter((match) => match !== null)
    .map((match) => Number(match[1]));
  return numbers.length ? numbers[numbers.length - 1]! : -1;
};

beforeAll(async () => {
  await requireDocker();
  await dockerCli(["image", "inspect", POSTGRES]);
  nats = await startJwtNats();
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "log-follow-e2e-"));
  directories.push(mainDirectory);
  platform = await startTestPlatform(
    { ...nats.env, PLATFORM_DEFAULT_IMAGE_POSTGRES: POSTGRES },
    { agents: { localAgent: { mainDirectory, heartbeatIntervalMs: 500 } } },
  );
  http = await listen(platform);
  owner = await platform.registerOwner();
  environmentId = (await ok("project.create", { name: "Follow" })).environment.environmentId;
}, 60_000);

afterAll(async () => {
  await killAgentProcess(agentA);
  await removeDeployedApps([appName, remoteAppName, ...databaseNames]);
  await dockerCli(["stack", "rm", stackName]).catch(() => {});
  await http?.close();
  await platform?.close();
  await nats?.stop();
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 90_000);

describe("following runtime logs on real Docker", () => {
  let applicationId: string;

  it("an application's line printed every second arrives in the stream", async () => {
    ({ applicationId } = await ok("application.create", { name: "ticker", appName, environmentId }));
    await ok("application.saveDockerProvider", { applicationId, dockerImage: BUSYBOX });
    await ok("application.update", {
      applicationId,
      command: "sh -c 'i=0; while true; do echo \"follow-marker $i\"; i=$((i+1)); sleep 1; done'",
    });
    await settle("application.deploy", { applicationId });
    const stream = await EventStream.open({ applicationId, tail: "5" }, owner);
    expect(stream.status, JSON.stringify(stream.events)).toBe(200);
    await stream.waitFor("follow-marker");
    // A line printed after the stream was open (the tail's lines came first).
    const next = newestNumber(stream, "follow-marker") + 1;
    await stream.waitFor(`follow-marker ${next}`);
    console.log(
      `application line ${next} reached the client ${latency(stream, `follow-marker ${next}`)} after it was printed`,
    );
    const last = stream.events.find((event) => event.data.endsWith(`follow-marker ${next}`))!;
    expect(last.event).toBe("log");
    expect(last.data).toMatch(new RegExp(`^\\S+Z ${appName}\\.1\\.[a-z0-9]{12} \\| follow-marker ${next}$`));
    expect(last.data.startsWith(`${last.id} `)).toBe(true);
    await stream.close();
  }, 300_000);

  it("Last-Event-ID resumes after that line, repeating none", async () => {
    const first = await EventStream.open({ applicationId, tail: "3" }, owner);
    await first.waitFor((events) => events.filter((event) => event.event === "log").length >= 3);
    await first.close();
    const lastSeen = first.events.filter((event) => event.event === "log").at(-1)!;
    const seen = newestNumber(first, "follow-marker");
    const resumed = await EventStream.open({ applicationId }, owner, { "Last-Event-ID": lastSeen.id! });
    await resumed.waitFor(`follow-marker ${seen + 2}`);
    const numbers = resumed.logs().map((line) => Number(/follow-marker (\d+)$/.exec(line)![1]));
    // The next line first: none lost, none repeated (tail ignored when resuming).
    expect(numbers.slice(0, 2)).toEqual([seen + 1, seen + 2]);
    await resumed.close();
  }, 120_000);

  it("refuses another organization, a member without the grant and bad inputs", async () => {
    // A member of the owner's organization who made their own: there, the service is another's.
    stranger = await platform.addMember(owner, "member", "follow-stranger@example.com");
    const created = await ok("organization.create", { name: "Elsewhere" }, stranger);
    await ok("organization.setActive", { organizationId: created.id }, stranger);
    const foreign = await EventStream.open({ applicationId }, stranger);
    expect(foreign.status, JSON.stringify(foreign.events)).toBe(404);
    for (const [query, field] of [
      [{ applicationId, tail: "10001" }, "tail"],
      [{ applicationId, tail: "-1" }, "tail"],
      [{ applicationId, search: "a;rm -rf /" }, "search"],
      [{}, "applicationId"],
      [{ applicationId, postgresId: "x" }, "postgresId"],
      [{ applicationId, containerId: "abc" }, "containerId"],
      [{ composeId: "x" }, "containerId"],
    ] as const) {
      const refused = await EventStream.open(query as Record<string, string>, owner);
      expect(refused.status, JSON.stringify(refused.events)).toBe(400);
      expect(refused.events[0]!.data).toContain(field);
    }
    const badId = await EventStream.open({ applicationId }, owner, { "Last-Event-ID": "yesterday" });
    expect(badId.status).toBe(400);
    expect(badId.events[0]!.data).toContain("Last-Event-ID");
  }, 60_000);

  it("a compose stack's container's line arrives in the stream", async () => {
    const { composeId } = await ok("compose.create", {
      name: "ticker",
      appName: stackName,
      environmentId,
      composeType: "stack",
      composeFile: `services:
  ticker:
    image: ${BUSYBOX}
    command: ["sh", "-c", "i=0; while true; do echo compose-follow $$i; i=$$((i+1)); sleep 1; done"]
`,
    });
    await settle("compose.deploy", { composeId });
    let containerId = "";
    await vi.waitFor(
      async () => {
        containerId = (
          await dockerCli(["ps", "-q", "--filter", `label=com.docker.stack.namespace=${stackName}`])
        ).split("\n")[0]!;
        expect(containerId).not.toBe("");
      },
      { timeout: 60_000, interval: 1000 },
    );
    const stream = await EventStream.open({ composeId, containerId, tail: "1" }, owner);
    expect(stream.status, JSON.stringify(stream.events)).toBe(200);
    await stream.waitFor("compose-follow");
    const next = newestNumber(stream, "compose-follow") + 1;
    await stream.waitFor(`compose-follow ${next}`);
    console.log(
      `compose line ${next} reached the client ${latency(stream, `compose-follow ${next}`)} after it was printed`,
    );
    await stream.close();
    // The stack's container, for another organization: 404.
    const foreign = await EventStream.open({ composeId, containerId }, stranger);
    expect(foreign.status).toBe(404);
    // A member granted the application only: its log, not the stack's.
    const member = await platform.addMember(owner, "member", "follow-member@example.com");
    await ok("user.assignPermissions", { id: member.user.userId, accessedServices: [applicationId] });
    const ungranted = await EventStream.open({ composeId, containerId }, member);
    expect(ungranted.status, JSON.stringify(ungranted.events)).toBe(404);
    const granted = await EventStream.open({ applicationId, tail: "1" }, member);
    expect(granted.status).toBe(200);
    await granted.waitFor("follow-marker");
    await granted.close();
  }, 300_000);

  it("a postgres service's lines arrive in the stream", async () => {
    const name = uniqueName("follow-pg");
    databaseNames.push(name);
    const { postgresId } = await ok("postgres.create", {
      name: "pg",
      appName: name,
      environmentId,
      databaseName: "app",
      databaseUser: "app",
      databasePassword: "Follow#pass1",
    });
    await settle("postgres.deploy", { postgresId });
    const stream = await EventStream.open({ postgresId, tail: "1000" }, owner);
    expect(stream.status, JSON.stringify(stream.events)).toBe(200);
    await stream.waitFor("ready to accept connections");
    // A new line: a failed login is logged by the server.
    const containerId = (
      await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${name}`])
    ).split("\n")[0]!;
    await dockerCli([
      "exec",
      containerId,
      "psql",
      "-U",
      "app",
      "-d",
      "no_such_database",
      "-c",
      "select 1",
    ]).catch(() => {});
    await stream.waitFor('database "no_such_database" does not exist');
    console.log(
      `postgres line reached the client ${latency(stream, "no_such_database")} after it was printed`,
    );
    await stream.close();
  }, 300_000);

  it("an agent killed mid-stream and started again: the stream goes on, losing and repeating no line", async () => {
    serverA = await insertTestServer(platform, owner.user.organizationId, "follow-server");
    const { token } = await platform.ctx.agents.createEnrollmentToken(serverA);
    const stateDir = await mkdtemp(path.join(tmpdir(), "log-follow-agent-"));
    directories.push(stateDir);
    agentA = startAgentProcess({ stateDir, controlPlaneUrl: http.url, enrollmentToken: token });
    await vi.waitFor(async () => expect((await serverRow(platform, serverA)).serverStatus).toBe("active"), {
      timeout: 30_000,
      interval: 200,
    });
    const { applicationId: remoteId } = await ok("application.create", {
      name: "remote",
      appName: remoteAppName,
      environmentId,
      serverId: serverA,
    });
    // The service as a deployment makes it (its owner's labels), printing 5 numbers a second.
    await dockerCli([
      "service",
      "create",
      "--detach",
      "--no-resolve-image",
      "--name",
      remoteAppName,
      ...Object.entries(ownershipLabels(applicationOwner(owner.user.organizationId, remoteId))).flatMap(
        ([key, value]) => ["--label", `${key}=${value}`],
      ),
      BUSYBOX,
      "sh",
      "-c",
      'i=0; while true; do echo "seq $i"; i=$((i+1)); sleep 0.2; done',
    ]);
    const stream = await EventStream.open({ applicationId: remoteId, tail: "0" }, owner);
    expect(stream.status, JSON.stringify(stream.events)).toBe(200);
    await stream.waitFor((events) => events.filter((event) => event.event === "log").length >= 5);

    await killAgentProcess(agentA, "SIGKILL");
    const atKill = newestNumber(stream, "seq");
    // The service keeps printing while no agent runs.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    agentA = startAgentProcess({ stateDir });
    await stream.waitFor(`seq ${atKill + 40}`, 120_000);

    const numbers = stream.logs().map((line) => Number(/\| seq (\d+)$/.exec(line)![1]));
    const first = numbers[0]!;
    const expected = Array.from({ length: numbers.length }, (_, index) => first + index);
    expect(numbers).toEqual(expected);

    // Removing the service ends the stream.
    await dockerCli(["service", "rm", remoteAppName]);
    await stream.waitFor((events) => events.some((event) => event.event === "end"), 60_000);
    expect(JSON.parse(stream.events.at(-1)!.data)).toEqual({ reason: "removed" });
    await stream.close();
  }, 300_000);
});
