/** Processes of the embedded PostgreSQL, for the tests and benchmarks that look at them. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** The pid in the embedded server's postmaster.pid, under a control plane's data directory. */
export const postmasterPid = (platformDataDir: string): number =>
  Number(readFileSync(path.join(platformDataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);

/** `pid` and every process below it (from /proc). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {}
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i] as number) ?? []));
  return tree;
}
