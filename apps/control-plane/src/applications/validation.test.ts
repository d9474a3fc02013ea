import { IMAGE_REFERENCE_PATTERN } from "@platform/names";
import { describe, expect, it } from "vitest";
import { type AllowList, parseAllowList } from "../outbound/guard.ts";
import {
  appNameSchema,
  branchNameProblem,
  cpuSchema,
  gitUrlProblem,
  memorySchema,
  relativeFileSchema,
  relativePathProblem,
} from "./validation.ts";

describe("application field rules", () => {
  it("accepts appNames of the spec pattern up to 63 characters", () => {
    for (const ok of ["web", "my-app.v2_1", "A".repeat(63)])
      expect(appNameSchema.safeParse(ok).success, ok).toBe(true);
    const never = ["..", ".", "-rf", "--help", ".env", "a..b", "platform-traefik", "Platform-agent"];
    for (const bad of ["", "a b", "a;rm -rf /", "$(id)", "a/b", "../x", "A".repeat(64), "é", ...never]) {
      expect(appNameSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it("accepts branch names git accepts and refuses the rest", () => {
    for (const ok of ["main", "feature/login", "release-1.2", "v1.0.0", "fix#12", "user@host", "a+b=c,d"]) {
      expect(branchNameProblem(ok), ok).toBeNull();
    }
    const bad = [
      "",
      "-main",
      "--upload-pack=touch /tmp/x",
      "a..b",
      "a b",
      "a\tb",
      "a\nb",
      "a\u0000b",
      "a~1",
      "a^",
      "a:b",
      "a?",
      "a*",
      "a[b",
      "a\\b",
      "main;id",
      "main&&id",
      "$(id)",
      "`id`",
      "a|b",
      "a>b",
      "@",
      "a@{1}",
      "/main",
      "main/",
      "a//b",
      "main.",
      ".hidden",
      "a/.b",
      "main.lock",
      "a/b.lock/c",
      "x".repeat(256),
    ];
    for (const name of bad) expect(branchNameProblem(name), JSON.stringify(name)).not.toBeNull();
  });

  it("accepts https, http, ssh and scp-like Git URLs, private hosts when the allow list covers them", () => {
    const outbound = (parseAllowList("10.0.0.0/8,192.168.0.0/16") as { list: AllowList }).list;
    for (const ok of [
      "https://github.com/org/repo.git",
      "http://gitea.lan:3000/org/repo.git",
      "http://192.168.1.20:3000/org/repo.git",
      "https://10.0.0.5/org/repo",
      "ssh://git@gitea.example.com:2222/org/repo.git",
      "git@github.com:org/repo.git",
      "deploy@10.1.2.3:srv/repo.git",
    ]) {
      expect(gitUrlProblem(ok, { outbound }), ok).toBeNull();
    }
  });

  it("refuses git transports, options and loopback, link-local or metadata hosts", () => {
    for (const bad of [
      "ext::sh -c touch% /tmp/pwned",
      "ext::sh",
      "file:///etc/passwd",
      "file://localhost/srv/repo",
      "--upload-pack=touch /tmp/pwned",
      "-u git@github.com:org/repo",
      "https://github.com/org/repo --upload-pack=x",
      "git@github.com:-oProxyCommand=x",
      "ftp://example.com/repo",
      "git://example.com/repo",
      "/srv/repo.git",
      "../repo",
      "http://127.0.0.1/repo",
      "http://127.1.2.3:8080/repo",
      "http://localhost/repo",
      "http://LOCALHOST./repo",
      "http://foo.localhost/repo",
      "http://[::1]/repo",
      "http://[::ffff:127.0.0.1]/repo",
      "http://2130706433/repo",
      "http://0x7f.1/repo",
      "http://0.0.0.0/repo",
      "http://169.254.169.254/latest/meta-data",
      "http://[fe80::1]/repo",
      "ssh://git@127.0.0.1/repo",
      "ssh://git@0x7f.1/repo",
      "git@localhost:repo.git",
      "git@169.254.169.254:repo.git",
      "https://exa mple.com/repo",
      "ssh://-oProxyCommand=touch/repo",
      "ssh://-oProxyCommand=x@example.com/repo",
      "-oProxyCommand=x@example.com:repo",
      "https://exa_mple.com/repo",
      "https://example.com/re\u0000po",
    ]) {
      expect(gitUrlProblem(bad), bad).not.toBeNull();
    }
  });

  it("matches Docker references by distribution's grammar", () => {
    for (const ok of [
      "nginx",
      "nginx:1.27-alpine",
      "library/nginx:latest",
      "ghcr.io/org/app:v1.2.3",
      "registry.example.com:5000/team/app",
      "localhost:5000/app:dev",
      "platform-test/busybox:latest",
      `app@sha256:${"a".repeat(64)}`,
      `ghcr.io/org/app:v1@sha256:${"b".repeat(64)}`,
    ]) {
      expect(IMAGE_REFERENCE_PATTERN.test(ok), ok).toBe(true);
    }
    for (const bad of [
      "",
      "Nginx",
      "nginx:",
      "nginx;id",
      "nginx $(id)",
      "nginx:latest && touch /tmp/x",
      "-nginx",
      "--help",
      "nginx:-tag",
      "../nginx",
      "a//b",
      "nginx@sha256:short",
    ]) {
      expect(IMAGE_REFERENCE_PATTERN.test(bad), bad).toBe(false);
    }
  });

  it("keeps build paths inside their root", () => {
    for (const ok of ["/", ".", "", "apps/web", "/apps/web/", "./docker/Dockerfile.prod", "dir..name/x"]) {
      expect(relativePathProblem(ok), ok).toBeNull();
    }
    for (const bad of ["..", "../x", "a/../../b", "/..", "a\\..\\b", "a\u0000b", "a\nb"]) {
      expect(relativePathProblem(bad), JSON.stringify(bad)).not.toBeNull();
    }
    expect(relativeFileSchema.safeParse("Dockerfile").success).toBe(true);
    expect(relativeFileSchema.safeParse("./").success).toBe(false);
  });

  it("reads memory and CPU values as Docker does", () => {
    for (const ok of ["512m", "2g", "1.5G", "268435456", "64mb", "1024k"]) {
      expect(memorySchema.safeParse(ok).success, ok).toBe(true);
    }
    expect(memorySchema.safeParse("8589934591g").success).toBe(true);
    for (const bad of [
      "",
      "0",
      "0m",
      "-1g",
      "lots",
      "512 m",
      "1e9",
      "2gib;",
      "2t",
      "99999999999999999999g",
      "8589934592g",
      "9223372036854775808",
    ]) {
      expect(memorySchema.safeParse(bad).success, bad).toBe(false);
    }
    for (const ok of ["0.5", "2", "16"]) expect(cpuSchema.safeParse(ok).success, ok).toBe(true);
    for (const bad of ["0", "-1", "two", "1.", "2048", "1,5"])
      expect(cpuSchema.safeParse(bad).success, bad).toBe(false);
  });
});
