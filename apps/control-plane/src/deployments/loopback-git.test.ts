import { describe, expect, it } from "vitest";
import { gitAddressProblem, gitUrlHost, gitUrlProblem } from "../applications/validation.ts";
import { ConfigError, loadConfig } from "../config.ts";

describe("PLATFORM_ALLOW_LOOPBACK_GIT", () => {
  it("is off unless set to true, and refuses other values naming the variable", () => {
    expect(loadConfig({}).allowLoopbackGit).toBe(false);
    expect(loadConfig({ PLATFORM_ALLOW_LOOPBACK_GIT: "false" }).allowLoopbackGit).toBe(false);
    expect(loadConfig({ PLATFORM_ALLOW_LOOPBACK_GIT: "true" }).allowLoopbackGit).toBe(true);
    expect(() => loadConfig({ PLATFORM_ALLOW_LOOPBACK_GIT: "yes" })).toThrow(ConfigError);
    expect(() => loadConfig({ PLATFORM_ALLOW_LOOPBACK_GIT: "yes" })).toThrow(/PLATFORM_ALLOW_LOOPBACK_GIT/);
  });
});

describe("loopback Git hosts", () => {
  const loopback = [
    "http://127.0.0.1:8080/repo.git",
    "http://localhost/repo.git",
    "ssh://git@[::1]:22/repo.git",
    "git@127.0.0.2:repo.git",
    "http://2130706433/repo.git",
  ];

  it.each(loopback)("%s is refused by default and allowed with the flag", (url) => {
    expect(gitUrlProblem(url)).not.toBeNull();
    expect(gitUrlProblem(url, { allowLoopback: true })).toBeNull();
  });

  it.each([
    "http://169.254.169.254/latest",
    "http://0.0.0.0/repo",
    "http://[ff02::1]/repo",
    "ext::sh -c touch% /tmp/x",
    "--upload-pack=touch /tmp/x",
    "file:///etc/passwd",
  ])("%s stays refused with the flag", (url) => {
    expect(gitUrlProblem(url, { allowLoopback: true })).not.toBeNull();
  });

  it("checks resolved addresses the same way", () => {
    expect(gitAddressProblem("127.0.0.1")).toMatch(/loopback/);
    expect(gitAddressProblem("127.0.0.1", { allowLoopback: true })).toBeNull();
    expect(gitAddressProblem("169.254.169.254", { allowLoopback: true })).toMatch(/link-local/);
    expect(gitAddressProblem("10.1.2.3")).toBeNull();
  });

  it("finds the host of URL and scp-like forms", () => {
    expect(gitUrlHost("https://git.example.com:8443/a/b.git")).toBe("git.example.com");
    expect(gitUrlHost("git@gitea.lan:team/app.git")).toBe("gitea.lan");
    expect(gitUrlHost("ssh://git@[::1]/x.git")).toBe("::1");
  });
});
