/**
 * Vitest global setup: before any test file runs, scripts/test-env.sh makes the whole test
 * environment ready (starting or installing only what is missing; about a second when all is
 * up). When it cannot, the run stops here with its one message naming what is missing, instead
 * of every test failing on its own connection error. PLATFORM_TEST_ENV=skip leaves it out.
 * Then the built control plane and agent, which tests start as processes
 * (scripts/built-entries.mjs), are built again when a source is newer (a second when none is).
 * Last, the run is marked, and its teardown fails it on a process a test left running
 * (tests/leftover-processes.ts).
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { killLeftovers, processesMarkedWith, TEST_RUN_VARIABLE } from "./leftover-processes.ts";

export default function setup(): () => Promise<void> {
  if (process.env.PLATFORM_TEST_ENV !== "skip") {
    const script = path.resolve(import.meta.dirname, "../scripts/test-env.sh");
    const result = spawnSync("bash", [script], { stdio: ["ignore", "inherit", "pipe"], encoding: "utf8" });
    if (result.status !== 0) {
      const message = (result.stderr || result.error?.message || "").trim();
      throw new Error(`The test environment is not ready.\n${message}`);
    }
  }
  const build = path.resolve(import.meta.dirname, "../scripts/build.mjs");
  const built = spawnSync(process.execPath, [build, "--if-stale"], {
    stdio: ["ignore", "inherit", "pipe"],
    encoding: "utf8",
  });
  if (built.status !== 0) {
    throw new Error(`The control plane and the agent could not be built.\n${(built.stderr ?? "").trim()}`);
  }
  // Marked after the environment is up: its services are meant to outlive the run.
  const runId = randomUUID();
  process.env[TEST_RUN_VARIABLE] = runId;
  return async () => {
    // The workers' own children (an esbuild service a file started in-process) exit a moment
    // after their worker, which is closed just before this runs.
    for (let waited = 0; waited < 3_000 && processesMarkedWith(runId).length > 0; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const leftovers = killLeftovers(runId);
    if (leftovers.length > 0) {
      throw new Error(
        `A test left ${leftovers.length} process(es) running after the suite (killed now):\n${leftovers.join("\n")}`,
      );
    }
  };
}
