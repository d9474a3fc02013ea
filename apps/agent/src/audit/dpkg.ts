/**
 * Installed Debian packages, read from /var/lib/dpkg/status: a package counts as installed when
 * its Status is "install ok installed" (a removed package whose config files remain does not).
 */
import type { HostFiles } from "./host-files.ts";

export async function installedPackages(files: HostFiles): Promise<Set<string>> {
  const installed = new Set<string>();
  const status = await files.read("/var/lib/dpkg/status");
  for (const paragraph of (status ?? "").split(/\n\s*\n/)) {
    const name = /^Package:\s*(\S+)/m.exec(paragraph)?.[1];
    const state = /^Status:\s*(.+)$/m.exec(paragraph)?.[1]?.trim();
    if (name && state === "install ok installed") installed.add(name);
  }
  return installed;
}
