/**
 * containerAction and containerEvents against the real Docker Engine: start, stop, kill and
 * remove act on a container of the scope's organization; another organization's container, the
 * platform's own and an unmanaged one (without includeUnmanaged) are NOT_FOUND and left as they
 * were; the events answer only the scope's containers.
 */
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  makeCommandRequest,
} from "@platform/agent-protocol";
import { ORGANIZATION_LABEL } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { removeContainer, requireDocker, runTestContainer, uniqueName } from "../testing/docker.ts";

const serverId = "container-actions-test";
let docker: Docker;
let core: AgentCore;
const mine = uniqueName("actions-mine");
const theirs = uniqueName("actions-theirs");
const unmanaged = uniqueName("actions-unmanaged");
const internal = `platform-${uniqueName("actions-internal")}`;
const scope = { organizationId: "org-actions", includeUnmanaged: false };
// Exits at once on SIGTERM, so that stopping it does not wait for Docker's 10 s.
const sleep = ["sh", "-c", "trap 'exit 0' TERM; sleep 300 & wait"];

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 60_000)));
}

async function act(containerId: string, action: string, actScope = scope) {
  return send({
    command: "containerAction",
    containerAction: { containerId, action: action as "START", scope: actScope },
  });
}

async function state(name: string): Promise<string> {
  return (await docker.getContainer(name).inspect()).State.Status;
}

beforeAll(async () => {
  docker = await requireDocker();
  core = new AgentCore({ serverId, docker, mainDirectory: "/nonexistent", toolSearchPath: "/nonexistent" });
  await runTestContainer(mine, sleep, { [ORGANIZATION_LABEL]: "org-actions" });
  await runTestContainer(theirs, sleep, { [ORGANIZATION_LABEL]: "org-other" });
  await runTestContainer(unmanaged, sleep);
  await runTestContainer(internal, sleep);
}, 60_000);

afterAll(async () => {
  for (const name of [mine, theirs, unmanaged, internal]) await removeContainer(name);
});

describe("containerAction", () => {
  it("stops, starts and kills a container of the scope's organization", async () => {
    const stopped = await act(mine, "STOP");
    expect(stopped).toMatchObject({ result: "containerAction", containerAction: { state: "exited" } });
    expect(await state(mine)).toBe("exited");
    // Stopping a stopped container is what was asked: no error.
    expect((await act(mine, "STOP")).result).toBe("containerAction");

    const started = await act(mine, "START");
    expect(started).toMatchObject({ containerAction: { state: "running" } });
    expect(await state(mine)).toBe("running");

    const killed = await act(mine, "KILL");
    expect(killed).toMatchObject({ containerAction: { state: "exited" } });
    // Killing a container that is not running is refused and says so.
    const again = await act(mine, "KILL");
    expect(again).toMatchObject({ result: "error", error: { code: "FAILED_PRECONDITION" } });
  }, 60_000);

  it("answers NOT_FOUND for another organization's, the platform's own and (without includeUnmanaged) an unmanaged container, and stops none", async () => {
    for (const name of [theirs, internal, unmanaged]) {
      const reply = await act(name, "STOP");
      expect(reply).toMatchObject({ result: "error", error: { code: "NOT_FOUND" } });
      expect(await state(name)).toBe("running");
      const removed = await act(name, "REMOVE");
      expect(removed).toMatchObject({ result: "error", error: { code: "NOT_FOUND" } });
      expect(await state(name)).toBe("running");
    }
    // includeUnmanaged reaches the unmanaged one, never another organization's.
    expect(await act(theirs, "KILL", { ...scope, includeUnmanaged: true })).toMatchObject({
      error: { code: "NOT_FOUND" },
    });
    expect(await state(theirs)).toBe("running");
  }, 60_000);

  it("refuses a command without a scope or an action", async () => {
    const noScope = await send({
      command: "containerAction",
      containerAction: { containerId: mine, action: "STOP" },
    });
    expect(noScope).toMatchObject({ error: { code: "INVALID_ARGUMENT" } });
    const noAction = await send({
      command: "containerAction",
      containerAction: { containerId: mine, scope },
    });
    expect(noAction).toMatchObject({ error: { code: "INVALID_ARGUMENT" } });
  });

  it("lists the scope's container events only, newest first", async () => {
    const since = Math.floor(Date.now() / 1000) - 120;
    await act(mine, "START");
    const reply = await send({ command: "containerEvents", containerEvents: { scope, sinceUnix: since } });
    if (reply.result !== "containerEvents") throw new Error(JSON.stringify(reply));
    const { events } = reply.containerEvents;
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((event) => event.attributes[ORGANIZATION_LABEL] === "org-actions")).toBe(true);
    expect(events.some((event) => event.attributes.name === mine && event.action === "kill")).toBe(true);
    const times = events.map((event) => event.timeNano);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  }, 60_000);

  it("removes a container of the scope's organization (forced, even running)", async () => {
    const reply = await act(mine, "REMOVE");
    expect(reply).toMatchObject({ containerAction: { state: "removed" } });
    await expect(docker.getContainer(mine).inspect()).rejects.toMatchObject({ statusCode: 404 });
  }, 60_000);
});
