/**
 * Audit fact "unattendedUpgrades": whether the package is installed and its service active, and
 * the APT::Periodic settings that drive it (Update-Package-Lists, Unattended-Upgrade), read from
 * /etc/apt/apt.conf.d/* in name order where, as in APT, a later file overrides an earlier one.
 */
import type { UnattendedUpgradesAudit } from "@platform/agent-protocol";
import type { AuditContext } from "./context.ts";
import { configLines, type HostFiles } from "./host-files.ts";

const APT_CONF_DIR = "/etc/apt/apt.conf.d";

/** Flat `Name "value";` settings of APT's configuration directory (last one wins). */
async function aptSettings(files: HostFiles): Promise<Map<string, string>> {
  const settings = new Map<string, string>();
  for (const name of await files.list(APT_CONF_DIR)) {
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.endsWith(".dpkg-old") || name.endsWith(".dpkg-dist"))
      continue;
    for (const line of configLines(await files.read(`${APT_CONF_DIR}/${name}`), /(#|\/\/)/)) {
      const match = /^([A-Za-z0-9:_-]+)\s+"([^"]*)"\s*;/.exec(line);
      if (match) settings.set(match[1]!.toLowerCase(), match[2]!);
    }
  }
  return settings;
}

function days(value: string | undefined): number {
  if (value === undefined) return 0;
  if (value.toLowerCase() === "always") return 1;
  const parsed = Number.parseInt(value, 10);
  return Number.isFinite(parsed) ? parsed : 0;
}

export async function auditUnattendedUpgrades({
  files,
  services,
  installedPackages,
}: AuditContext): Promise<UnattendedUpgradesAudit> {
  const installed = installedPackages.has("unattended-upgrades");
  const settings = await aptSettings(files);
  return {
    installed,
    active: installed && (await services.isActive("unattended-upgrades")),
    updateEnabled: days(settings.get("apt::periodic::update-package-lists")),
    upgradeEnabled: days(settings.get("apt::periodic::unattended-upgrade")),
  };
}
