/**
 * Audit fact "nonRootUser": whether some account other than root can log in and use sudo,
 * i.e. is in the sudo group (as a member or by primary group) with a login shell.
 */
import type { NonRootUserAudit } from "@platform/agent-protocol";
import type { AuditContext } from "./context.ts";
import { isLoginShell, readGroups, readPasswd } from "./users.ts";

export async function auditNonRootUser({ files }: AuditContext): Promise<NonRootUserAudit> {
  const sudoGroup = (await readGroups(files)).find((group) => group.name === "sudo");
  if (!sudoGroup) return { hasValidSudoUser: false };
  const hasValidSudoUser = (await readPasswd(files)).some(
    (user) =>
      user.uid !== 0 &&
      (sudoGroup.members.includes(user.name) || user.gid === sudoGroup.gid) &&
      isLoginShell(user.shell),
  );
  return { hasValidSudoUser };
}
