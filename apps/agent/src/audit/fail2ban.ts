/**
 * Audit fact "fail2ban": whether the package is installed and its service enabled and active,
 * and the sshd jail's `enabled` and `mode`. Jail files are read in fail2ban's order (jail.conf,
 * jail.d/*.conf, jail.local, jail.d/*.local; later overrides earlier), with [DEFAULT] as the
 * fallback for the [sshd] section.
 */
import type { Fail2banAudit } from "@platform/agent-protocol";
import type { AuditContext } from "./context.ts";
import { configLines, type HostFiles } from "./host-files.ts";

const FAIL2BAN_DIR = "/etc/fail2ban";
const TRUE_WORDS = new Set(["true", "yes", "on", "1"]);

/** Files fail2ban reads for its jails, in order. */
async function jailFiles(files: HostFiles): Promise<string[]> {
  const inJailD = await files.list(`${FAIL2BAN_DIR}/jail.d`);
  return [
    `${FAIL2BAN_DIR}/jail.conf`,
    ...inJailD.filter((name) => name.endsWith(".conf")).map((name) => `${FAIL2BAN_DIR}/jail.d/${name}`),
    `${FAIL2BAN_DIR}/jail.local`,
    ...inJailD.filter((name) => name.endsWith(".local")).map((name) => `${FAIL2BAN_DIR}/jail.d/${name}`),
  ];
}

/** section -> key -> value over all jail files. */
async function jailSettings(files: HostFiles): Promise<Map<string, Map<string, string>>> {
  const sections = new Map<string, Map<string, string>>();
  for (const file of await jailFiles(files)) {
    let section: Map<string, string> | undefined;
    for (const line of configLines(await files.read(file), /(^|\s)[#;]/)) {
      const header = /^\[([^\]]+)\]$/.exec(line);
      if (header) {
        const name = header[1]!.trim();
        section = sections.get(name) ?? new Map();
        sections.set(name, section);
        continue;
      }
      const setting = /^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$/.exec(line);
      if (setting && section) section.set(setting[1]!.toLowerCase(), setting[2]!.trim());
    }
  }
  return sections;
}

export async function auditFail2ban({
  files,
  services,
  installedPackages,
}: AuditContext): Promise<Fail2banAudit> {
  if (!installedPackages.has("fail2ban")) {
    return { installed: false, enabled: false, active: false, sshEnabled: "false", sshMode: "normal" };
  }
  const settings = await jailSettings(files);
  const lookup = (key: string) => settings.get("sshd")?.get(key) ?? settings.get("DEFAULT")?.get(key);
  return {
    installed: true,
    enabled: await services.isEnabled("fail2ban"),
    active: await services.isActive("fail2ban"),
    sshEnabled: TRUE_WORDS.has((lookup("enabled") ?? "false").toLowerCase()) ? "true" : "false",
    sshMode: lookup("mode")?.toLowerCase() || "normal",
  };
}
