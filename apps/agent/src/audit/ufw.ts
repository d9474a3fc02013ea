/**
 * Audit fact "ufw": whether the ufw package is installed, whether the firewall is enabled
 * (ENABLED=yes in /etc/ufw/ufw.conf, which `ufw enable` sets and the boot service honours) and
 * the default incoming policy of /etc/default/ufw as `ufw status verbose` words it.
 */
import type { UfwAudit } from "@platform/agent-protocol";
import type { AuditContext } from "./context.ts";
import { shellAssignments } from "./host-files.ts";

const POLICY_WORDS: Record<string, string> = { DROP: "deny", REJECT: "reject", ACCEPT: "allow" };

export async function auditUfw({ files, installedPackages }: AuditContext): Promise<UfwAudit> {
  if (!installedPackages.has("ufw")) return { installed: false, active: false, defaultIncoming: "unknown" };
  const ufwConf = shellAssignments(await files.read("/etc/ufw/ufw.conf"));
  const defaults = shellAssignments(await files.read("/etc/default/ufw"));
  const policy = defaults.get("DEFAULT_INPUT_POLICY")?.toUpperCase() ?? "";
  return {
    installed: true,
    active: ufwConf.get("ENABLED")?.toLowerCase() === "yes",
    defaultIncoming: POLICY_WORDS[policy] ?? "unknown",
  };
}
