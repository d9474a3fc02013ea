import { afterAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { deploymentErrorMessage, MAX_ERROR_MESSAGE_CHARS } from "./error-message.ts";

/**
 * A failed host-mode update as this platform reported it (error-message-docker.test.ts makes it
 * on the real engine): the pipeline's and the agent's words around the task error Docker gave
 * for a host port another container held.
 */
const HOST_MODE_FAILURE =
  "Deploy failed: the new version did not start, the previous one was restored: starting container " +
  "failed: container 6db0d817f604fa9242e306b1f951d4ac63197d67e117536bccef0b6b82f2eb0a: endpoint join " +
  "on GW Network failed: driver failed programming external connectivity on endpoint " +
  "gateway_46a602766030 (950f1a8f45c2f5e4e20d2d51fbce3f3e12598a0e9db11f45bd6c3cebf8513c40): " +
  "Bind for 0.0.0.0:34061 failed: port is already allocated";
const endpoint = "gateway_46a602766030 (950f1a8f45c2f5e4e20d2d51fbce3f3e12598a0e9db11f45bd6c3cebf8513c40)";

/** Every word of `message` (split at the gap) is a whole word of `original`. */
function expectWholeWords(message: string, original: string): void {
  const words = new Set(original.split(/\s+/));
  for (const word of message.split(/\s+/)) {
    if (word === "…") continue;
    expect(words.has(word), `"${word}" is not a whole word of the original`).toBe(true);
  }
}

describe("deploymentErrorMessage", () => {
  it("keeps a reason that fits as it is", () => {
    expect(HOST_MODE_FAILURE.length).toBeLessThan(MAX_ERROR_MESSAGE_CHARS);
    expect(deploymentErrorMessage(HOST_MODE_FAILURE)).toBe(HOST_MODE_FAILURE);
    expect(deploymentErrorMessage("Deployment cancelled")).toBe("Deployment cancelled");
  });

  it("cuts a long host-mode failure between words, keeping what failed and the cause", () => {
    // Short limits force the cut that a longer engine message meets at the real limit.
    for (const limit of [120, 160, 200, 250, 300]) {
      const message = deploymentErrorMessage(HOST_MODE_FAILURE, limit);
      expect(message.length).toBeLessThanOrEqual(limit);
      expect(message.startsWith("Deploy failed:")).toBe(true);
      expect(message.endsWith("port is already allocated")).toBe(true);
      expect(message).toContain(" … ");
      expectWholeWords(message, HOST_MODE_FAILURE);
    }
    expect(deploymentErrorMessage(HOST_MODE_FAILURE, 160)).toBe(
      "Deploy failed: the new version did not start, the … Bind for 0.0.0.0:34061 failed: port is already allocated",
    );
  });

  it("cuts at the real limit a failure whose engine message runs long", () => {
    const tasks = Array.from(
      { length: 12 },
      (_, slot) => `task ${slot + 1} (765ryf3nkt21): failed - starting container failed: ${endpoint}`,
    ).join("; ");
    const reason = `${HOST_MODE_FAILURE.replace("Bind for", `${tasks}; Bind for`)}`;
    expect(reason.length).toBeGreaterThan(MAX_ERROR_MESSAGE_CHARS);
    const message = deploymentErrorMessage(reason);
    expect(message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    expect(message.startsWith("Deploy failed: the new version did not start")).toBe(true);
    expect(message.endsWith("Bind for 0.0.0.0:34061 failed: port is already allocated")).toBe(true);
    expectWholeWords(message, reason);
  });

  it("keeps the first and the last lines of a long multi-line reason", () => {
    const output = Array.from({ length: 40 }, (_, i) => `step ${i + 1}/40 output line`);
    const reason = [
      "Build failed: the image build exited with code 1",
      ...output,
      "",
      "ERROR: npm ci failed",
    ].join("\r\n");
    const message = deploymentErrorMessage(reason);
    const lines = message.split("\n");
    expect(lines[0]).toBe("Build failed: the image build exited with code 1");
    expect(lines[1]).toBe("…");
    expect(lines.at(-1)).toBe("ERROR: npm ci failed");
    expect(lines.at(-2)).toBe("step 40/40 output line");
    expect(lines).toHaveLength(8);
  });

  it("cuts one word longer than the room, and never answers empty", () => {
    const digest = "a".repeat(500);
    const message = deploymentErrorMessage(`Pull failed: ${digest}`, 100);
    expect(message.length).toBeLessThanOrEqual(100);
    expect(message.startsWith("Pull failed:")).toBe(true);
    expect(deploymentErrorMessage(" \n \r\n")).toBe("The deployment failed");
  });
});

describe("a failed deployment's record", () => {
  let platform: TestPlatform | undefined;
  afterAll(() => platform?.close());

  it("stores the shortened errorMessage and keeps the whole reason in the log", async () => {
    const output = Array.from({ length: 30 }, (_, i) => `#${i + 1} building layer ${i + 1} of 30`);
    const reason = [
      `Build failed: ${"the engine said more than fits ".repeat(40)}`,
      ...output,
      HOST_MODE_FAILURE,
    ].join("\n");
    platform = await startTestPlatform(
      {},
      {
        deployments: {
          runner: async () => {
            throw new Error(reason);
          },
        },
      },
    );
    const owner = await platform.registerOwner();
    const as = { token: owner.token };
    const project = await platform.mutateOk("project.create", { name: "Errors" }, as);
    const { applicationId } = await platform.mutateOk(
      "application.create",
      { name: "web", environmentId: project.environment.environmentId },
      as,
    );
    const { deploymentId } = await platform.mutateOk("application.deploy", { applicationId }, as);
    const failed = await platform.waitForDeployment(deploymentId, 20_000);

    expect(failed.status).toBe("error");
    expect(failed.errorMessage).toBe(deploymentErrorMessage(reason));
    expect(failed.errorMessage!.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    expect(failed.errorMessage).toMatch(/^Build failed: the engine said/);
    expect(failed.errorMessage).toMatch(/port is already allocated$/);
    for (const line of reason.split("\n")) expect(failed.logs).toContain(line);
  });
});
