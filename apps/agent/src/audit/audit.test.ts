/**
 * The security audit on fixture root directories with known answers (fixtures/<name>/ holds
 * the files of a host: sshd configuration with includes, ufw, APT, fail2ban, accounts and the
 * dpkg status database), with fixed service states.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HostFiles } from "./host-files.ts";
import { securityAudit } from "./index.ts";
import { auditNonRootUser } from "./non-root-user.ts";
import { staticProbe } from "./services.ts";
import { readSshdConfig } from "./ssh.ts";

const fixture = (name: string) => path.join(import.meta.dirname, "fixtures", name);

describe("securityAudit", () => {
  it("reports a hardened server", async () => {
    const services = staticProbe({
      active: ["ssh", "unattended-upgrades", "fail2ban"],
      enabled: ["fail2ban"],
    });
    expect(await securityAudit(fixture("hardened"), services)).toEqual({
      ufw: { installed: true, active: true, defaultIncoming: "deny" },
      ssh: { enabled: true, keyAuth: true, permitRootLogin: "no", passwordAuth: "no", usePam: "yes" },
      nonRootUser: { hasValidSudoUser: true },
      unattendedUpgrades: { installed: true, active: true, updateEnabled: 1, upgradeEnabled: 1 },
      fail2ban: { installed: true, enabled: true, active: true, sshEnabled: "true", sshMode: "aggressive" },
    });
  });

  it("reports a fresh Debian install with nothing hardened", async () => {
    const services = staticProbe({ active: ["sshd"] });
    expect(await securityAudit(fixture("fresh-debian"), services)).toEqual({
      // ufw was removed; only its configuration files remain.
      ufw: { installed: false, active: false, defaultIncoming: "unknown" },
      ssh: { enabled: true, keyAuth: false, permitRootLogin: "yes", passwordAuth: "yes", usePam: "yes" },
      nonRootUser: { hasValidSudoUser: false },
      unattendedUpgrades: { installed: false, active: false, updateEnabled: 0, upgradeEnabled: 0 },
      fail2ban: { installed: false, enabled: false, active: false, sshEnabled: "false", sshMode: "normal" },
    });
  });

  it("reports overrides, Match blocks, aliases and inactive services as sshd, APT and fail2ban read them", async () => {
    const services = staticProbe({});
    expect(await securityAudit(fixture("mixed"), services)).toEqual({
      ufw: { installed: true, active: false, defaultIncoming: "reject" },
      ssh: {
        enabled: false,
        keyAuth: true,
        permitRootLogin: "prohibit-password",
        passwordAuth: "yes",
        usePam: "no",
      },
      nonRootUser: { hasValidSudoUser: true },
      unattendedUpgrades: { installed: true, active: false, updateEnabled: 7, upgradeEnabled: 0 },
      fail2ban: { installed: true, enabled: false, active: false, sshEnabled: "false", sshMode: "ddos" },
    });
  });

  it("reports an empty root (no OpenSSH server, no accounts) without failing", async () => {
    const result = await securityAudit(fixture("does-not-exist"), staticProbe({}));
    expect(result.ssh).toEqual({
      enabled: false,
      keyAuth: false,
      permitRootLogin: "unknown",
      passwordAuth: "unknown",
      usePam: "unknown",
    });
    expect(result.nonRootUser?.hasValidSudoUser).toBe(false);
  });
});

describe("audit details", () => {
  let scratch: string | undefined;
  afterEach(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
    scratch = undefined;
  });

  async function host(files: Record<string, string>): Promise<HostFiles> {
    scratch = await mkdtemp(path.join(tmpdir(), "agent-audit-"));
    for (const [hostPath, content] of Object.entries(files)) {
      const target = path.join(scratch, hostPath);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    return new HostFiles(scratch);
  }

  it("a sudo member whose shell is nologin is not a valid sudo user", async () => {
    const files = await host({
      "/etc/passwd": "root:x:0:0:root:/root:/bin/bash\nops:x:1001:1001::/home/ops:/usr/sbin/nologin\n",
      "/etc/group": "sudo:x:27:root,ops\n",
    });
    const context = { files, services: staticProbe({}), installedPackages: new Set<string>() };
    expect(await auditNonRootUser(context)).toEqual({ hasValidSudoUser: false });
  });

  it("follows relative and nested Includes in order and stops at include loops", async () => {
    const files = await host({
      "/etc/ssh/sshd_config": "Include conf.d/*.conf\nPermitRootLogin yes\n",
      "/etc/ssh/conf.d/a.conf": "Include /etc/ssh/nested\nUsePAM no\n",
      "/etc/ssh/conf.d/b.conf": "UsePAM yes\nInclude /etc/ssh/sshd_config\n",
      "/etc/ssh/nested": "PermitRootLogin forced-commands-only\n",
    });
    const settings = await readSshdConfig(files);
    expect(settings.get("permitrootlogin")).toBe("forced-commands-only");
    expect(settings.get("usepam")).toBe("no");
  });

  it("keeps every path inside the audit root", async () => {
    const files = await host({ "/etc/passwd": "root:x:0:0::/root:/bin/sh\n" });
    expect(files.resolve("/../../etc/passwd")).toBe(path.join(files.root, "etc/passwd"));
    expect(await files.read("../../../../etc/hostname")).toBeUndefined();
  });
});
