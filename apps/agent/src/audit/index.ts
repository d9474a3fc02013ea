/**
 * The security audit (server.security): one module per fact, combined here. Reads files under
 * a root directory and asks a ServiceProbe about systemd units; changes nothing.
 */
import type { SecurityAuditResult } from "@platform/agent-protocol";
import { installedPackages } from "./dpkg.ts";
import { auditFail2ban } from "./fail2ban.ts";
import { HostFiles } from "./host-files.ts";
import { auditNonRootUser } from "./non-root-user.ts";
import type { ServiceProbe } from "./services.ts";
import { auditSsh } from "./ssh.ts";
import { auditUfw } from "./ufw.ts";
import { auditUnattendedUpgrades } from "./unattended-upgrades.ts";

export { HostFiles } from "./host-files.ts";
export { type ServiceProbe, staticProbe, systemctlProbe } from "./services.ts";

export async function securityAudit(hostRoot: string, services: ServiceProbe): Promise<SecurityAuditResult> {
  const files = new HostFiles(hostRoot);
  const context = { files, services, installedPackages: await installedPackages(files) };
  const [ufw, ssh, nonRootUser, unattendedUpgrades, fail2ban] = await Promise.all([
    auditUfw(context),
    auditSsh(context),
    auditNonRootUser(context),
    auditUnattendedUpgrades(context),
    auditFail2ban(context),
  ]);
  return { ufw, ssh, nonRootUser, unattendedUpgrades, fail2ban };
}
