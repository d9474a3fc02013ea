/**
 * Which paths of a container docker.deleteContainerFile refuses, the same for the control
 * plane's input check and the agent's own: `/`, the top-level system directories, and anything
 * under the kernel filesystems /proc, /sys and /dev.
 */

/** Top-level directories that are never removed (a container's system, not its data). */
export const PROTECTED_TOP_LEVEL_DIRECTORIES: ReadonlySet<string> = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "home",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "media",
  "mnt",
  "opt",
  "proc",
  "root",
  "run",
  "sbin",
  "srv",
  "sys",
  "tmp",
  "usr",
  "var",
]);

/** Kernel filesystems: nothing under them is removed. */
const KERNEL_FILESYSTEMS: ReadonlySet<string> = new Set(["proc", "sys", "dev"]);

/** Why `path` (absolute or not; `.` and empty segments ignored) may not be deleted; undefined if it may. */
export function undeletablePathReason(path: string): string | undefined {
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  const top = segments[0];
  if (top === undefined) return "/ cannot be deleted";
  if (segments.length === 1 && PROTECTED_TOP_LEVEL_DIRECTORIES.has(top)) {
    return `the system directory /${top} cannot be deleted`;
  }
  if (KERNEL_FILESYSTEMS.has(top)) return `nothing under /${top} can be deleted`;
  return undefined;
}
