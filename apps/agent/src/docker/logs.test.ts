/**
 * readServiceLogs against the real Docker Engine (Swarm mode): a two-replica service and a
 * compose-labelled container, each printing known lines; the answer names each line's task or
 * container and time, filters by a literal phrase, keeps the newest `tail`, escapes control
 * characters, and answers NOT_FOUND for what is not the owner's.
 */
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  makeCommandRequest,
  type ServiceLogs,
} from "@platform/agent-protocol";
import { composeOwner, databaseOwner, ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import {
  dockerCli,
  removeContainer,
  requireDocker,
  runTestContainer,
  TEST_IMAGE,
  uniqueName,
} from "../testing/docker.ts";

const serverId = "logs-test";
let docker: Docker;
let core: AgentCore;
const owner = databaseOwner("org-logs", uniqueName("db"));
const stranger = databaseOwner("org-other", owner.resource.slice("database:".length));
const serviceName = uniqueName("agent-logs-svc");
const stackName = uniqueName("agent-logs-stack");
const stackOwner = composeOwner("org-logs", uniqueName("compose"));
const containerName = `${stackName}-web-1`;
let containerId = "";
const floodName = `${stackName}-flood-1`;
let floodId = "";
/** The agent's bound on an answer's text (MAX_ANSWER_BYTES in logs.ts). */
const ANSWER_BYTES = 768 * 1024;
const FLOOD_LINES = 1000;

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 30_000)));
}

async function readLogs(args: Record<string, unknown>): Promise<ServiceLogs> {
  const reply = await send({
    command: "readServiceLogs",
    readServiceLogs: { owner, swarmServiceName: serviceName, tail: 100, ...args },
  });
  if (reply.result !== "serviceLogs") throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
  return reply.serviceLogs;
}

async function errorCode(args: Record<string, unknown>): Promise<string> {
  const reply = await send({ command: "readServiceLogs", readServiceLogs: { tail: 100, ...args } });
  return reply.result === "error" ? reply.error.code : reply.result;
}

const labelArgs = (labels: Record<string, string>) =>
  Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);

beforeAll(async () => {
  docker = await requireDocker();
  core = new AgentCore({ serverId, docker, mainDirectory: "/nonexistent", toolSearchPath: "/nonexistent" });
  await dockerCli([
    "service",
    "create",
    "--detach",
    "--no-resolve-image",
    "--replicas",
    "2",
    "--name",
    serviceName,
    ...labelArgs(ownershipLabels(owner)),
    TEST_IMAGE,
    "sh",
    "-c",
    'i=0; while true; do echo "tick $i from $HOSTNAME"; echo "WARN slow $i" >&2; i=$((i+1)); sleep 0.2; done',
  ]);
  containerId = await runTestContainer(
    containerName,
    [
      "sh",
      "-c",
      "echo old line; sleep 6; while true; do printf 'new \\033[31mred\\033[0m line\\n'; sleep 0.5; done",
    ],
    { ...ownershipLabels(stackOwner), "com.docker.compose.project": stackName },
  );
  // About 1 MB in 1,000 numbered lines of 1,000 bytes, then one line of 12,000 bytes (below Docker's 16 KiB split).
  floodId = await runTestContainer(
    floodName,
    [
      "sh",
      "-c",
      `pad=$(printf '%1000s' | tr ' ' x); i=0; while [ $i -lt ${FLOOD_LINES} ]; do echo "flood $i $pad"; i=$((i+1)); done; printf '%12000s\\n' | tr ' ' y; echo flood-end; sleep 3600`,
    ],
    { ...ownershipLabels(stackOwner), "com.docker.compose.project": stackName },
  );
  // Both replicas have printed a few lines.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const logs = await readLogs({ search: "tick" }).catch(() => undefined);
    if (logs && logs.lines.length >= 40 && new Set(logs.lines.map((line) => line.source)).size === 2) break;
    if (Date.now() > deadline) throw new Error("the service's two tasks did not print in time");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 90_000);

afterAll(async () => {
  await dockerCli(["service", "rm", serviceName]).catch(() => {});
  if (containerId) await removeContainer(containerId);
  if (floodId) await removeContainer(floodId);
});

describe("readServiceLogs of a Swarm service", () => {
  it("answers every task's lines, oldest first, each with its task, time and stream", async () => {
    const { lines, truncated } = await readLogs({ tail: 40 });
    expect(truncated).toBe(false);
    expect(lines.length).toBe(40);
    const sources = new Set(lines.map((line) => line.source));
    expect(sources.size).toBe(2);
    for (const source of sources)
      expect(source).toMatch(new RegExp(`^${serviceName}\\.[12]\\.[a-z0-9]{12}$`));
    for (const line of lines) expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/);
    expect([...lines].map((line) => line.time)).toEqual(lines.map((line) => line.time).sort());
    expect(lines.some((line) => line.stream === "stderr" && line.text.startsWith("WARN slow"))).toBe(true);
    expect(lines.some((line) => line.stream === "stdout" && line.text.startsWith("tick "))).toBe(true);
  });

  it("keeps only the lines containing the phrase, case-insensitively and literally", async () => {
    const { lines } = await readLogs({ search: "warn SLOW" });
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.text).toMatch(/^WARN slow \d+$/);
    // A regular expression is a plain phrase here: nothing contains ".*".
    expect((await readLogs({ search: "tick.*" })).lines).toEqual([]);
  });

  it("keeps the newest `tail` lines", async () => {
    const { lines } = await readLogs({ tail: 3 });
    expect(lines).toHaveLength(3);
    const newest = await readLogs({ tail: 100 });
    expect(lines.at(-1)!.time <= newest.lines.at(-1)!.time).toBe(true);
  });

  it("answers NOT_FOUND for another owner's service and a missing one, and refuses a bad tail", async () => {
    expect(await errorCode({ owner: stranger, swarmServiceName: serviceName })).toBe("NOT_FOUND");
    expect(await errorCode({ owner, swarmServiceName: `${serviceName}-missing` })).toBe("NOT_FOUND");
    expect(await errorCode({ owner, swarmServiceName: serviceName, tail: 0 })).toBe("INVALID_ARGUMENT");
    expect(await errorCode({ owner, swarmServiceName: serviceName, tail: 10_001 })).toBe("INVALID_ARGUMENT");
    expect(await errorCode({ swarmServiceName: serviceName })).toBe("INVALID_ARGUMENT");
    expect(await errorCode({ owner, swarmServiceName: "bad name;rm" })).toBe("INVALID_ARGUMENT");
  });
});

describe("readServiceLogs of a compose stack's container", () => {
  const read = async (args: Record<string, unknown>) => {
    const reply = await send({
      command: "readServiceLogs",
      readServiceLogs: { owner: stackOwner, containerId, stackName, tail: 100, ...args },
    });
    if (reply.result !== "serviceLogs") throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
    return reply.serviceLogs;
  };

  it("answers the container's lines with its name, control characters escaped", async () => {
    const deadline = Date.now() + 20_000;
    let lines = (await read({})).lines;
    while (!lines.some((line) => line.text.startsWith("new")) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      lines = (await read({})).lines;
    }
    expect(lines[0]).toMatchObject({ source: containerName, stream: "stdout", text: "old line" });
    expect(lines.at(-1)!.text).toBe("new \\x1b[31mred\\x1b[0m line");
  });

  it("keeps only the lines of the last sinceSeconds", async () => {
    const { lines } = await read({ sinceSeconds: 2 });
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((line) => line.text === "old line")).toBe(false);
  });

  it("answers NOT_FOUND for a container of another stack or owner", async () => {
    const args = { owner: stackOwner, containerId, stackName };
    expect(await errorCode({ ...args, stackName: `${stackName}-other` })).toBe("NOT_FOUND");
    expect(await errorCode({ ...args, owner: { ...stackOwner, organizationId: "org-other" } })).toBe(
      "NOT_FOUND",
    );
    expect(await errorCode({ ...args, containerId: "no-such-container-here" })).toBe("NOT_FOUND");
    expect(await errorCode({ owner: stackOwner, containerId })).toBe("INVALID_ARGUMENT");
  });
});

describe("readServiceLogs of a container printing more than an answer holds", () => {
  it("answers at most the byte bound, the newest lines, a too long line cut, and says it cut", async () => {
    const read = async () => {
      const reply = await send({
        command: "readServiceLogs",
        readServiceLogs: { owner: stackOwner, containerId: floodId, stackName, tail: 10_000 },
      });
      if (reply.result !== "serviceLogs") throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
      return reply.serviceLogs;
    };
    let logs = await read();
    const deadline = Date.now() + 30_000;
    while (logs.lines.at(-1)?.text !== "flood-end" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      logs = await read();
    }
    const { lines, truncated } = logs;
    expect(lines.at(-1)!.text).toBe("flood-end");
    expect(truncated).toBe(true);
    // The answer as readLogs formats it (`<time> <source> | <text>\n`) stays within the bound.
    const bytes = lines.reduce(
      (sum, line) => sum + Buffer.byteLength(`${line.time} ${line.source} | ${line.text}\n`),
      0,
    );
    expect(bytes).toBeLessThanOrEqual(ANSWER_BYTES);
    // The newest lines, in order, with none missing between the first kept and the end.
    const long = lines.at(-2)!;
    expect(long.text).toMatch(/^y+$/);
    expect(Buffer.byteLength(long.text)).toBe(8 * 1024);
    const numbers = lines.slice(0, -2).map((line) => Number(/^flood (\d+) x{1000}$/.exec(line.text)![1]));
    expect(numbers.at(-1)).toBe(FLOOD_LINES - 1);
    expect(numbers[0]).toBeGreaterThan(0);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, index) => numbers[0]! + index));
  });
});
