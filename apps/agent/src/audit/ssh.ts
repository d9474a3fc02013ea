/**
 * Audit fact "ssh": whether the OpenSSH server runs, and its effective PermitRootLogin,
 * PasswordAuthentication and UsePAM as `sshd -T` would print them. The configuration is read
 * like sshd reads it: /etc/ssh/sshd_config with its Include'd files expanded in place, the first
 * value of a keyword wins, and lines inside Match blocks (conditional) are not global settings.
 */
import path from "node:path";
import type { SshAudit } from "@platform/agent-protocol";
import type { AuditContext } from "./context.ts";
import { configLines, type HostFiles } from "./host-files.ts";
import { readPasswd } from "./users.ts";

const SSHD_CONFIG = "/etc/ssh/sshd_config";
const MAX_INCLUDE_DEPTH = 16;

/** sshd's compiled-in defaults (OpenSSH 9) for the keywords the audit reports. */
const DEFAULTS: Record<string, string> = {
  permitrootlogin: "prohibit-password",
  passwordauthentication: "yes",
  usepam: "no",
  pubkeyauthentication: "yes",
  authorizedkeysfile: ".ssh/authorized_keys .ssh/authorized_keys2",
};

/** Host paths matching an Include pattern (`*` and `?` in the file name), sorted like glob(3). */
async function expandInclude(files: HostFiles, pattern: string): Promise<string[]> {
  const absolute = path.posix.isAbsolute(pattern) ? pattern : path.posix.join("/etc/ssh", pattern);
  const directory = path.posix.dirname(absolute);
  const namePattern = path.posix.basename(absolute);
  if (!/[*?[]/.test(namePattern)) return [absolute];
  const regex = new RegExp(
    `^${namePattern
      .replace(/[.+^${}()|\\]/g, "\\$&")
      .replace(/\*/g, "[^/]*")
      .replace(/\?/g, "[^/]")}$`,
  );
  return (await files.list(directory))
    .filter((name) => regex.test(name) && !name.startsWith("."))
    .map((name) => path.posix.join(directory, name));
}

/** Global settings of an sshd configuration: lowercase keyword -> first value given. */
export async function readSshdConfig(
  files: HostFiles,
  configPath = SSHD_CONFIG,
): Promise<Map<string, string>> {
  const settings = new Map<string, string>();
  const readFile = async (hostPath: string, depth: number): Promise<void> => {
    if (depth > MAX_INCLUDE_DEPTH) return;
    let inMatchBlock = false;
    for (const line of configLines(await files.read(hostPath))) {
      const match = /^(\S+?)(?:\s*=\s*|\s+)(.*)$/.exec(line);
      if (!match) continue;
      const keyword = match[1]!.toLowerCase();
      const value = match[2]!.trim();
      if (keyword === "match") {
        inMatchBlock = value.toLowerCase() !== "all";
        continue;
      }
      if (inMatchBlock) continue;
      if (keyword === "include") {
        for (const pattern of value.split(/\s+/)) {
          for (const included of await expandInclude(files, pattern)) await readFile(included, depth + 1);
        }
        continue;
      }
      if (!settings.has(keyword)) settings.set(keyword, value.replace(/^"(.*)"$/, "$1"));
    }
  };
  await readFile(configPath, 0);
  return settings;
}

function effective(settings: Map<string, string>, keyword: string): string {
  const value = (settings.get(keyword) ?? DEFAULTS[keyword] ?? "").toLowerCase();
  // sshd -T prints the deprecated alias under its current name.
  return keyword === "permitrootlogin" && value === "without-password" ? "prohibit-password" : value;
}

/** Whether any login user (or root) has a non-empty authorized keys file sshd would read. */
async function anyAuthorizedKeys(files: HostFiles, settings: Map<string, string>): Promise<boolean> {
  const patterns = (settings.get("authorizedkeysfile") ?? DEFAULTS.authorizedkeysfile!)
    .split(/\s+/)
    .filter((pattern) => pattern.toLowerCase() !== "none");
  for (const user of await readPasswd(files)) {
    if (!user.home) continue;
    for (const pattern of patterns) {
      const expanded = pattern.replace(/%h/g, user.home).replace(/%u/g, user.name).replace(/%%/g, "%");
      const keysPath = path.posix.isAbsolute(expanded) ? expanded : path.posix.join(user.home, expanded);
      if ((await files.read(keysPath))?.trim()) return true;
    }
  }
  return false;
}

export async function auditSsh({ files, services }: AuditContext): Promise<SshAudit> {
  const enabled =
    (await services.isActive("ssh")) ||
    (await services.isActive("sshd")) ||
    (await services.isActive("ssh.socket"));
  if (!(await files.exists(SSHD_CONFIG))) {
    return {
      enabled,
      keyAuth: false,
      permitRootLogin: "unknown",
      passwordAuth: "unknown",
      usePam: "unknown",
    };
  }
  const settings = await readSshdConfig(files);
  const keyAuth =
    effective(settings, "pubkeyauthentication") !== "no" && (await anyAuthorizedKeys(files, settings));
  return {
    enabled,
    keyAuth,
    permitRootLogin: effective(settings, "permitrootlogin"),
    passwordAuth: effective(settings, "passwordauthentication"),
    usePam: effective(settings, "usepam"),
  };
}
