/**
 * Orphaned VXLAN links left by Docker's overlay driver. The driver creates each overlay network's
 * VXLAN link (`vx-<vni>-<network>`) in the host's network namespace and moves it into the
 * network's sandbox at once. Under churn the engine sometimes leaves one behind in the host
 * namespace (moby/libnetwork#1765, moby/moby#42548): from then on every task joining a network
 * with that VNI is rejected with "error creating vxlan interface: file exists", until the link
 * is deleted by hand. The agent deletes such links itself: a `vx-` VXLAN link still in the host
 * namespace on two looks a second apart is an orphan (a link being set up lives microseconds).
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The engine's error for a task whose network's VXLAN link is held by an orphan. */
export const ORPHAN_VXLAN_ERROR = /error creating vxlan interface: file exists/i;

const DOCKER_VXLAN_NAME = /^vx-[0-9a-f]{6}-[0-9a-z]+$/;
const SYS_NET = "/sys/class/net";

/** Docker's VXLAN links in this network namespace, each with its interface index. */
async function dockerVxlanLinks(): Promise<Map<string, string>> {
  const links = new Map<string, string>();
  let names: string[];
  try {
    names = await readdir(SYS_NET);
  } catch {
    return links;
  }
  for (const name of names.filter((entry) => DOCKER_VXLAN_NAME.test(entry))) {
    try {
      const uevent = await readFile(`${SYS_NET}/${name}/uevent`, "utf8");
      if (!/^DEVTYPE=vxlan$/m.test(uevent)) continue;
      links.set(name, (await readFile(`${SYS_NET}/${name}/ifindex`, "utf8")).trim());
    } catch {
      // Gone between the listing and the read: moved into its sandbox, not an orphan.
    }
  }
  return links;
}

/**
 * Deletes Docker's VXLAN links that stay in this namespace across `settleMs`; returns their
 * names. Needs root and iproute2's `ip` (the agent runs as root); a link that cannot be deleted
 * is left and not returned.
 */
export async function removeOrphanVxlanLinks(settleMs = 1000): Promise<string[]> {
  const first = await dockerVxlanLinks();
  if (first.size === 0) return [];
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const second = await dockerVxlanLinks();
  const removed: string[] = [];
  for (const [name, index] of second) {
    if (first.get(name) !== index) continue;
    try {
      await run("ip", ["link", "delete", name], { timeout: 10_000 });
      removed.push(name);
    } catch {
      // Not root, no iproute2, or the engine moved it meanwhile.
    }
  }
  return removed;
}

/**
 * Looks for orphans every `intervalMs` (a directory listing when there are none), so that a
 * link the engine left behind outside any deployment (a proxy update, a backup's container) is
 * gone before the next task needs its VNI. Returns the stop function.
 */
export function sweepOrphanVxlanLinks(intervalMs: number, onRemoved: (names: string[]) => void): () => void {
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      const removed = await removeOrphanVxlanLinks();
      if (removed.length > 0) onRemoved(removed);
    } finally {
      running = false;
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
