/**
 * judgeDeployment and driftOf: what an observed service says about a deployment and about an
 * application (the fault tests in tests/faults/ check the same against real processes).
 */
import type { ObservedService } from "@platform/agent-protocol";
import { describe, expect, it } from "vitest";
import { judgeDeployment, unlessAborted } from "./observe.ts";
import { driftOf } from "./reconcile.ts";

const service = (fields: Partial<ObservedService>): ObservedService => ({
  name: "web",
  found: true,
  deploymentId: "d2",
  previousDeploymentId: "d1",
  image: "platform/web:d2",
  updateState: "completed",
  updateMessage: "update completed",
  desiredReplicas: 1,
  runningTasks: 1,
  taskError: "",
  outdatedTasks: 0,
  taskErrorDeploymentId: "",
  ownerMismatch: false,
  ...fields,
});

describe("judgeDeployment", () => {
  it("done once the update completed and every task of the new spec runs", () => {
    expect(judgeDeployment("d2", service({}), false)).toEqual({ kind: "done", runningTasks: 1 });
    // A new service gets no UpdateStatus.
    expect(judgeDeployment("d2", service({ updateState: "" }), false).kind).toBe("done");
  });

  it("pending while Swarm updates, or while old tasks still run, or tasks of the new spec do not run yet", () => {
    expect(judgeDeployment("d2", service({ updateState: "updating" }), false).kind).toBe("pending");
    expect(judgeDeployment("d2", service({ outdatedTasks: 1 }), false).kind).toBe("pending");
    // Right after the spec changed the old UpdateStatus (completed) is still there.
    expect(judgeDeployment("d2", service({ runningTasks: 0, outdatedTasks: 1 }), true).kind).toBe("pending");
  });

  it("failed with the task's error after a rollback to the previous spec, or a paused update", () => {
    const rolledBack = service({
      deploymentId: "d1",
      previousDeploymentId: "d2",
      updateState: "rollback_completed",
      updateMessage: "rollback completed",
      taskError: "driver failed programming external connectivity: port is already allocated",
    });
    expect(judgeDeployment("d2", rolledBack, false)).toEqual({
      kind: "failed",
      reason:
        "The new version did not start, the previous one was restored: driver failed programming external connectivity: port is already allocated",
    });
    expect(judgeDeployment("d2", service({ updateState: "paused" }), false).kind).toBe("failed");
    // Swarm keeps no PreviousSpec after a rollback: the failed task's label names the deployment.
    const withoutPrevious = { ...rolledBack, previousDeploymentId: "", taskErrorDeploymentId: "d2" };
    expect(judgeDeployment("d2", withoutPrevious, false).kind).toBe("failed");
    expect(judgeDeployment("d2", { ...rolledBack, updateState: "rollback_started" }, false).kind).toBe(
      "pending",
    );
  });

  it("a new service whose task fails, with no agent job left, is failed", () => {
    const failing = service({ updateState: "", runningTasks: 0, taskError: "starting container failed" });
    expect(judgeDeployment("d2", failing, false)).toEqual({
      kind: "failed",
      reason: "The new version did not start: starting container failed",
    });
    expect(judgeDeployment("d2", failing, true).kind).toBe("pending");
  });

  it("absent when neither the service nor an agent job shows the deployment", () => {
    expect(judgeDeployment("d3", service({}), false).kind).toBe("absent");
    expect(judgeDeployment("d3", service({ found: false }), false).kind).toBe("absent");
    expect(judgeDeployment("d3", undefined, false).kind).toBe("absent");
    expect(judgeDeployment("d3", service({}), true).kind).toBe("pending");
  });
});

describe("a service of that name belonging to someone else (issue 22, finding 9)", () => {
  const foreign = service({
    ownerMismatch: true,
    deploymentId: "",
    image: "",
    desiredReplicas: 0,
    runningTasks: 0,
  });

  it("fails the deployment and is reported as drift, never as the application's own service", () => {
    expect(judgeDeployment("d2", foreign, true)).toEqual({
      kind: "failed",
      reason: "A service of that name exists and does not belong to this application",
    });
    expect(driftOf(foreign, "s1")).toMatch(/does not belong to this application/);
  });
});

describe("driftOf", () => {
  it("names a missing, scaled-to-0 or short service, and nothing for a healthy or updating one", () => {
    expect(driftOf(service({}), "s1")).toBeUndefined();
    expect(driftOf(service({ updateState: "updating", runningTasks: 0 }), "s1")).toBeUndefined();
    expect(driftOf(service({ found: false }), "s1")).toMatch(/missing on server s1/);
    expect(driftOf(undefined, "s1")).toMatch(/missing/);
    expect(driftOf(service({ desiredReplicas: 0, runningTasks: 0 }), "s1")).toMatch(/scaled to 0/);
    expect(driftOf(service({ desiredReplicas: 2, runningTasks: 1, taskError: "OOM" }), "s1")).toBe(
      "The service runs 1 of 2 task(s): OOM",
    );
  });
});

describe("unlessAborted", () => {
  it("answers undefined at once for an aborted signal, and the promise's later failure is handled", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const controller = new AbortController();
      controller.abort();
      let reject: (error: Error) => void = () => {};
      const pending = new Promise<string>((_, fail) => {
        reject = fail;
      });
      expect(await unlessAborted(pending, controller.signal)).toBeUndefined();
      reject(new Error("the agent went away"));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("answers the settled promise while the signal is not aborted", async () => {
    const answer = await unlessAborted(Promise.resolve("done"), new AbortController().signal);
    expect(answer).toMatchObject({ value: "done" });
  });
});
