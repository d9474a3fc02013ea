/**
 * The node commands' checks that need no engine (the real Swarm is in tests/e2e/cluster.test.ts):
 * bad ids, roles, availabilities, labels and tokens are refused before the engine is called, and
 * an engine error that echoes the join token is answered without it.
 */
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { CommandError } from "../command-error.ts";
import { joinSwarm, removeNode, updateNode } from "./nodes.ts";

const TOKEN = "SWMTKN-1-0123456789abcdefghij-klmnopqrstuvwxyz";
const untouched = new Proxy({} as Docker, {
  get: () => {
    throw new Error("the engine must not be called");
  },
});
const update = { nodeId: "abc123", availability: "", role: "", labels: {}, setLabels: false };

async function refusal(promise: Promise<unknown>): Promise<CommandError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(CommandError);
  return error as CommandError;
}

describe("node commands", () => {
  it("refuse malformed input before calling the engine", async () => {
    for (const promise of [
      updateNode(untouched, { ...update, nodeId: "../x" }),
      updateNode(untouched, { ...update, availability: "gone" }),
      updateNode(untouched, { ...update, role: "leader" }),
      updateNode(untouched, { ...update, labels: { "bad key": "x" }, setLabels: true }),
      updateNode(untouched, { ...update, labels: { zone: "a\nb" }, setLabels: true }),
      removeNode(untouched, "NOT-AN-ID"),
      joinSwarm(untouched, { token: "nope", remoteAddress: "10.0.0.1:2377", advertiseAddress: "" }),
      joinSwarm(untouched, { token: TOKEN, remoteAddress: "10.0.0.1:2377; rm", advertiseAddress: "" }),
    ]) {
      expect((await refusal(promise)).code).toBe("INVALID_ARGUMENT");
    }
  });

  it("never answers the join token in an engine error", async () => {
    const docker = {
      info: async () => ({ Swarm: { LocalNodeState: "inactive" } }),
      swarmJoin: async () => {
        throw Object.assign(new Error("join failed"), { json: { message: `invalid join token ${TOKEN}` } });
      },
    } as unknown as Docker;
    const error = await refusal(
      joinSwarm(docker, { token: TOKEN, remoteAddress: "10.0.0.1:2377", advertiseAddress: "" }),
    );
    expect(error.code).toBe("FAILED");
    expect(error.message).not.toContain(TOKEN);
    expect(error.message).toContain("<token>");
  });

  it("refuses to leave a Swarm of several nodes, or one running services, to join another", async () => {
    const several = {
      info: async () => ({ Swarm: { LocalNodeState: "active", ControlAvailable: true, Nodes: 2 } }),
    } as unknown as Docker;
    expect(
      (
        await refusal(
          joinSwarm(several, { token: TOKEN, remoteAddress: "10.0.0.1:2377", advertiseAddress: "" }),
        )
      ).code,
    ).toBe("FAILED_PRECONDITION");
    const busy = {
      info: async () => ({ Swarm: { LocalNodeState: "active", ControlAvailable: true, Nodes: 1 } }),
      listServices: async () => [{ Spec: { Name: "shop", Labels: {} } }],
    } as unknown as Docker;
    const error = await refusal(
      joinSwarm(busy, { token: TOKEN, remoteAddress: "10.0.0.1:2377", advertiseAddress: "" }),
    );
    expect(error.code).toBe("FAILED_PRECONDITION");
    expect(error.message).toMatch(/runs 1 service/);
  });
});
