/**
 * A test fixture must not outlive its test (issue 38 item 7): a `nats-server`, control plane,
 * agent, sshd or registry that a test starts and never stops keeps running after the suite, and
 * the next run finds it (or its port) in the way. The global setup marks the run with
 * PLATFORM_TEST_RUN, which every process a test starts inherits; at the end, any process still
 * carrying the mark is a leftover: it is named, killed, and fails the run.
 */
import { readdirSync, readFileSync } from "node:fs";

export const TEST_RUN_VARIABLE = "PLATFORM_TEST_RUN";

export interface LeftoverProcess {
  pid: number;
  command: string;
}

/** Processes (other than this one and vitest's own workers) whose environment carries `runId`. */
export function processesMarkedWith(runId: string): LeftoverProcess[] {
  const mark = `${TEST_RUN_VARIABLE}=${runId}`;
  const found: LeftoverProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environment = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (!environment.includes(mark)) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      if (command === "" || /\bvitest\b/.test(command)) continue;
      found.push({ pid, command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Kills the leftovers of `runId` and describes them (empty when there were none). */
export function killLeftovers(runId: string): string[] {
  return processesMarkedWith(runId).map(({ pid, command }) => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Exited meanwhile.
    }
    return `pid ${pid}: ${command.slice(0, 200)}`;
  });
}
