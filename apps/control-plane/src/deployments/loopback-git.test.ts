import { describe, expect, it } from "vitest";
import { gitAddressProblem, gitUrlHost, gitUrlProblem } from "../applications/validation.ts";
import { ConfigError, loadConfig } from "../config.ts";

describe("PLATFORM_OUTBOUND_ALLOW", () => {
  it("is empty by default, takes comma-separated CIDRs, and refuses other values naming the variable", () => {
    expect(loadConfig({}).outboundAllow.cidrs).toEqual([]);
    expect(
      loadConfig({ PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8, 10.1.0.0/16,::1" }).outboundAllow.cidrs,
    ).toEqual(["127.0.0.0/8", "10.1.0.0/16", "::1/128"]);
    for (const bad of ["yes", "127.0.0.0/33", "10.0.0.0/8/1", "gitea.lan", "::1/129", "10.0.0.0/x"]) {
      expect(() => loadConfig({ PLATFORM_OUTBOUND_ALLOW: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ PLATFORM_OUTBOUND_ALLOW: bad }), bad).toThrow(/PLATFORM_OUTBOUND_ALLOW/);
    }
  });

  it("replaces PLATFORM_ALLOW_LOOPBACK_GIT, which no longer allows anything", () => {
    const config = loadConfig({ PLATFORM_ALLOW_LOOPBACK_GIT: "true" });
    expect(config).not.toHaveProperty("allowLoopbackGit");
    expect(gitUrlProblem("http://127.0.0.1/repo.git", { outbound: config.outboundAllow })).not.toBeNull();
  });
});

describe("loopback and private Git hosts", () => {
  const loopbackAllowed = loadConfig({ PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8,::1" }).outboundAllow;
  const lanAllowed = loadConfig({ PLATFORM_OUTBOUND_ALLOW: "192.168.1.0/24" }).outboundAllow;
  const everything = loadConfig({ PLATFORM_OUTBOUND_ALLOW: "0.0.0.0/0,::/0" }).outboundAllow;

  it.each([
    "http://127.0.0.1:8080/repo.git",
    "http://localhost/repo.git",
    "ssh://git@[::1]:22/repo.git",
    "git@127.0.0.2:repo.git",
    "http://2130706433/repo.git",
  ])("%s is refused by default and allowed by a loopback CIDR", (url) => {
    expect(gitUrlProblem(url)).not.toBeNull();
    expect(gitUrlProblem(url, { outbound: loopbackAllowed })).toBeNull();
  });

  it("refuses a LAN Git server unless its range is allowed (private now needs the allow list)", () => {
    for (const url of ["http://192.168.1.20:3000/org/repo.git", "deploy@192.168.1.9:srv/repo.git"]) {
      expect(gitUrlProblem(url), url).toMatch(/private/);
      expect(gitUrlProblem(url, { outbound: loopbackAllowed }), url).toMatch(/private/);
      expect(gitUrlProblem(url, { outbound: lanAllowed }), url).toBeNull();
    }
    expect(gitUrlProblem("http://10.0.0.5/repo.git", { outbound: lanAllowed })).toMatch(/private/);
  });

  it.each([
    "http://169.254.169.254/latest",
    "http://[fd00:ec2::254]/latest",
    "http://[::ffff:169.254.169.254]/latest",
    "http://0.0.0.0/repo",
    "http://[ff02::1]/repo",
    "ext::sh -c touch% /tmp/x",
    "--upload-pack=touch /tmp/x",
    "file:///etc/passwd",
  ])("%s stays refused whatever the allow list says", (url) => {
    expect(gitUrlProblem(url, { outbound: everything })).not.toBeNull();
  });

  it("checks resolved addresses the same way", () => {
    expect(gitAddressProblem("127.0.0.1")).toMatch(/loopback/);
    expect(gitAddressProblem("127.0.0.1", { outbound: loopbackAllowed })).toBeNull();
    expect(gitAddressProblem("169.254.169.254", { outbound: everything })).toMatch(/link-local/);
    expect(gitAddressProblem("10.1.2.3")).toMatch(/private/);
    expect(gitAddressProblem("140.82.112.3")).toBeNull();
  });

  it("finds the host of URL and scp-like forms", () => {
    expect(gitUrlHost("https://git.example.com:8443/a/b.git")).toBe("git.example.com");
    expect(gitUrlHost("git@gitea.lan:team/app.git")).toBe("gitea.lan");
    expect(gitUrlHost("ssh://git@[::1]/x.git")).toBe("::1");
  });
});
