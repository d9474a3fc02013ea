import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TestNatsServer } from "../apps/agent/src/testing/nats-server.ts";
import { killLeftovers, processesMarkedWith, TEST_RUN_VARIABLE } from "./leftover-processes.ts";

/** Processes whose command line names `needle`. */
function processesNaming(needle: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("fixtures that outlive their test (issue 38 item 7)", () => {
  it("this run is marked, and a process a test starts carries the mark until it is killed", async () => {
    const runId = process.env[TEST_RUN_VARIABLE];
    expect(runId, "the global setup marks the run").toMatch(/^[0-9a-f-]{36}$/);
    const child = spawn("sleep", ["300"], { stdio: "ignore" });
    await new Promise((resolve) => child.once("spawn", resolve));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    expect(processesMarkedWith(runId!).map(({ pid }) => pid)).toContain(child.pid);
    // The run's other processes (fixtures of files running beside this one, a worker's esbuild
    // service) carry the run's mark too: the killing is proven on a mark of this test's own.
    const ownRun = randomUUID();
    const marked = spawn("sleep", ["301"], {
      stdio: "ignore",
      env: { ...process.env, [TEST_RUN_VARIABLE]: ownRun },
    });
    await new Promise((resolve) => marked.once("spawn", resolve));
    const markedExited = new Promise((resolve) => marked.once("exit", resolve));
    expect(killLeftovers(ownRun)).toEqual([`pid ${marked.pid}: sleep 301`]);
    await markedExited;
    expect(processesMarkedWith(ownRun)).toEqual([]);
    child.kill("SIGKILL");
    await exited;
  });

  it("TestNatsServer.resume() while the server runs starts no second process, and stop() leaves none", async () => {
    const nats = await TestNatsServer.start("");
    try {
      await nats.resume();
      await nats.resume();
      expect(processesNaming(nats.configFile)).toHaveLength(1);
    } finally {
      await nats.stop();
    }
    expect(processesNaming(nats.configFile)).toEqual([]);
  });
});
