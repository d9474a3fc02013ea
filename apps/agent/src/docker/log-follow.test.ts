/**
 * Following runtime logs (followServiceLogs / renewLogFollow) against the real Docker Engine: a
 * compose-labelled container printing a numbered line every 0.2 s. New lines are published as
 * LogChunks of encoded ServiceLogs; asking again from a line's time gives that line again first
 * (Docker's since is inclusive: the control plane drops it); a stopped follower publishes
 * nothing more; a follower whose lease is not renewed stops by itself; another owner's container
 * is NOT_FOUND; a removed container ends the stream with a final chunk.
 */
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  decodeServiceLogs,
  type LogChunk,
  makeCommandRequest,
  type ServiceLogLine,
} from "@platform/agent-protocol";
import { composeOwner, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentCore } from "../core.ts";
import { removeContainer, requireDocker, runTestContainer, uniqueName } from "../testing/docker.ts";
import { dockerSince } from "./log-follow.ts";

const serverId = "follow-test";
const stackName = uniqueName("agent-follow-stack");
const owner = composeOwner("org-follow", uniqueName("compose"));
const stranger = composeOwner("org-other", owner.resource.slice("compose:".length));
let core: AgentCore;
let containerId = "";
const chunks = new Map<string, LogChunk[]>();

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 30_000)));
}

const follow = (logStreamId: string, args: Record<string, unknown> = {}) =>
  send({
    command: "followServiceLogs",
    followServiceLogs: { owner, containerId, stackName, logStreamId, tail: 0, leaseSeconds: 30, ...args },
  });

const linesOf = (streamId: string): ServiceLogLine[] =>
  (chunks.get(streamId) ?? []).flatMap((chunk) => decodeServiceLogs(chunk.data).lines);

beforeAll(async () => {
  const docker = await requireDocker();
  core = new AgentCore({
    serverId,
    docker,
    mainDirectory: "/nonexistent",
    toolSearchPath: "/nonexistent",
    publishLogChunk: (chunk) => chunks.set(chunk.streamId, [...(chunks.get(chunk.streamId) ?? []), chunk]),
  });
  containerId = await runTestContainer(
    `${stackName}-web-1`,
    ["sh", "-c", 'i=0; while true; do echo "seq $i"; i=$((i+1)); sleep 0.2; done'],
    { ...ownershipLabels(owner), "com.docker.compose.project": stackName },
  );
}, 60_000);

afterAll(async () => {
  core?.logFollowers.stopAll();
  if (containerId) await removeContainer(containerId);
});

describe("followServiceLogs", () => {
  it("publishes new lines; from a line's time the line comes again first; stop ends the stream", async () => {
    expect((await follow("f1")).result).toBe("logFollowStarted");
    await vi.waitFor(() => expect(linesOf("f1").length).toBeGreaterThanOrEqual(5), { timeout: 20_000 });
    const lines = linesOf("f1");
    expect(lines[0]).toMatchObject({ source: `${stackName}-web-1`, stream: "stdout" });
    expect(lines[0]!.text).toMatch(/^seq \d+$/);
    const numbers = lines.map((line) => Number(line.text.slice(4)));
    expect(numbers).toEqual(numbers.map((_, index) => numbers[0]! + index));

    const from = lines[2]!;
    expect((await follow("f2", { sinceTime: from.time })).result).toBe("logFollowStarted");
    await vi.waitFor(() => expect(linesOf("f2").length).toBeGreaterThanOrEqual(3), { timeout: 20_000 });
    expect(linesOf("f2")[0]).toEqual(from);

    for (const streamId of ["f1", "f2"]) {
      const stopped = await send({
        command: "renewLogFollow",
        renewLogFollow: { logStreamId: streamId, stop: true },
      });
      expect(stopped).toMatchObject({ result: "logFollowLease", logFollowLease: { following: false } });
    }
    const count = chunks.get("f1")!.length;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(chunks.get("f1")!.length).toBe(count);
    expect(core.logFollowers.size).toBe(0);
  }, 60_000);

  it("a follower whose lease is not renewed stops by itself; a renewed one goes on", async () => {
    await follow("lease", { leaseSeconds: 5 });
    await follow("renewed", { leaseSeconds: 5 });
    for (let second = 0; second < 7; second++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const renewed = await send({ command: "renewLogFollow", renewLogFollow: { logStreamId: "renewed" } });
      expect(renewed).toMatchObject({ logFollowLease: { following: true } });
    }
    const expired = await send({ command: "renewLogFollow", renewLogFollow: { logStreamId: "lease" } });
    expect(expired).toMatchObject({ result: "logFollowLease", logFollowLease: { following: false } });
    core.logFollowers.stop("renewed");
  }, 30_000);

  it("refuses another owner's container (NOT_FOUND) and bad arguments", async () => {
    const foreign = await follow("x1", { owner: stranger });
    expect(foreign.result === "error" && foreign.error.code).toBe("NOT_FOUND");
    for (const args of [
      { logStreamId: "a.b" },
      { leaseSeconds: 1 },
      { tail: 10_001 },
      { sinceTime: "yesterday" },
    ]) {
      const reply = await send({
        command: "followServiceLogs",
        followServiceLogs: { owner, containerId, stackName, logStreamId: "x2", leaseSeconds: 30, ...args },
      });
      expect(reply.result === "error" && reply.error.code, JSON.stringify(args)).toBe("INVALID_ARGUMENT");
    }
    expect(core.logFollowers.size).toBe(0);
    expect(dockerSince("2026-11-24T10:00:00.5Z")).toBe("1795514400.500000000");
  });

  it("ends the stream with a final chunk when the container is removed", async () => {
    await follow("gone");
    await vi.waitFor(() => expect(linesOf("gone").length).toBeGreaterThan(0), { timeout: 20_000 });
    await removeContainer(containerId);
    containerId = "";
    await vi.waitFor(() => expect(chunks.get("gone")!.at(-1)!.final).toBe(true), { timeout: 20_000 });
    expect(core.logFollowers.size).toBe(0);
  }, 40_000);
});
