import { describe, expect, it } from "vitest";
import {
  hostProblem,
  hostSchema,
  hostToAscii,
  isWildcardHost,
  passwordProblem,
  passwordSchema,
  pathProblem,
  pathSchema,
  portProblem,
  portSchema,
  usernameProblem,
  usernameSchema,
  wildcardCertificateProblem,
} from "./index.ts";

describe("hosts", () => {
  it.each([
    ["example.com", "example.com"],
    ["App.Example.COM", "app.example.com"],
    ["a-b.c-d.example.co.uk", "a-b.c-d.example.co.uk"],
    ["localhost", "localhost"],
    ["203.0.113.7", "203.0.113.7"],
    ["bücher.example", "xn--bcher-kva.example"],
    ["例え.テスト", "xn--r8jz45g.xn--zckzah"],
    ["*.example.com", "*.example.com"],
    ["*.bücher.example", "*.xn--bcher-kva.example"],
    ["xn--bcher-kva.example", "xn--bcher-kva.example"],
  ])("accepts %s, routed as %s", (host, ascii) => {
    expect(hostProblem(host)).toBeUndefined();
    expect(hostToAscii(host)).toBe(ascii);
    expect(hostSchema.safeParse(host).success).toBe(true);
  });

  it.each([
    ["", "must not be empty"],
    ["a.com`", "must be a host name"],
    ["a.com) || Host(`b.com", "must be a host name"],
    ["a.com\n  evil: x", "control characters"],
    ["a.com\r", "control characters"],
    ["a.com\t", "control characters"],
    ["a.com#", "must be a host name"],
    ["a .com", "must be a host name"],
    ["a.com,b.com", "must be a host name"],
    ['"a.com"', "must be a host name"],
    ["a.com:443", "must be a host name"],
    ["user@a.com", "must be a host name"],
    ["http://a.com", "must be a host name"],
    ["a.*.com", "wildcard is only allowed as a leading"],
    ["**.a.com", "wildcard is only allowed as a leading"],
    ["*a.com", "wildcard is only allowed as a leading"],
    ["*.", "not a valid"],
    ["a..com", "empty labels"],
    [".a.com", "empty labels"],
    ["a.com.", "empty labels"],
    ["-a.com", "letters, digits and inner hyphens"],
    ["a-.com", "letters, digits and inner hyphens"],
    ["a_b.com", "letters, digits and inner hyphens"],
    [`${"a".repeat(64)}.com`, "at most 63"],
    [`${"abcdefghi.".repeat(26)}com`, "at most 253"],
    ["ａ（b）.com", "letters, digits and inner hyphens"],
    ["a\u202e.com", "not a valid"],
  ])("refuses %j", (host, message) => {
    expect(hostProblem(host)).toContain(message);
    expect(() => hostToAscii(host)).toThrow();
    const result = hostSchema.safeParse(host);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain(message);
  });

  it("knows wildcards need custom certificates", () => {
    expect(isWildcardHost("*.a.com")).toBe(true);
    expect(isWildcardHost("a.com")).toBe(false);
    expect(wildcardCertificateProblem("*.a.com", "custom")).toBeUndefined();
    expect(wildcardCertificateProblem("*.a.com", "letsencrypt")).toContain("custom certificate");
    expect(wildcardCertificateProblem("*.a.com", "none")).toContain("custom certificate");
    expect(wildcardCertificateProblem("a.com", "letsencrypt")).toBeUndefined();
  });
});

describe("paths", () => {
  it.each(["/", "/api", "/api/v1/", "/a-b_c.d~e", "/%20space", "/a%2Fb", "/@user:1;x=2&y=$3*+!"])(
    "accepts %s",
    (path) => {
      expect(pathProblem(path)).toBeUndefined();
      expect(pathSchema.safeParse(path).success).toBe(true);
    },
  );

  it.each([
    ["api", "must start with `/`"],
    ["", "must start with `/`"],
    ["/..", "`..` segment"],
    ["/a/../b", "`..` segment"],
    ["/a/%2e%2e/b", "`..` segment"],
    ["/a`", "may hold"],
    ["/a)", "may hold"],
    ["/a b", "may hold"],
    ["/a\n  evil: x", "control characters"],
    ["/a#b", "may hold"],
    ["/a?b", "may hold"],
    ["/a'b", "may hold"],
    ['/a"b', "may hold"],
    ["/a,b", "may hold"],
    ["/a%", "invalid percent-encoding"],
    ["/a%0Ab", "must not percent-encode control characters"],
    [`/${"a".repeat(1024)}`, "at most 1024"],
  ])("refuses %j", (path, message) => {
    expect(pathProblem(path)).toContain(message);
    expect(pathSchema.safeParse(path).success).toBe(false);
  });
});

describe("ports", () => {
  it("accepts 1 to 65535 only", () => {
    for (const port of [1, 80, 65535]) {
      expect(portProblem(port)).toBeUndefined();
      expect(portSchema.safeParse(port).success).toBe(true);
    }
    for (const port of [0, -1, 65536, 80.5, Number.NaN]) {
      expect(portProblem(port)).toBeDefined();
      expect(portSchema.safeParse(port).success).toBe(false);
    }
  });
});

describe("Basic-auth credentials", () => {
  it("accepts user names without `:` or control characters", () => {
    for (const username of ["alice", "bob smith", "ÿvonne", "a@b.c", "x"]) {
      expect(usernameProblem(username)).toBeUndefined();
      expect(usernameSchema.safeParse(username).success).toBe(true);
    }
  });

  it.each([
    ["", "must not be empty"],
    ["al:ice", "must not contain `:`"],
    ["alice\nmallory", "control characters"],
    ["alice\r", "control characters"],
    ["alice\u0000", "control characters"],
    ["alice\u007f", "control characters"],
    ["a".repeat(256), "at most 255"],
  ])("refuses the user name %j", (username, message) => {
    expect(usernameProblem(username)).toContain(message);
    expect(usernameSchema.safeParse(username).success).toBe(false);
  });

  it("accepts any password of 1 to 1024 characters", () => {
    for (const password of ["x", "p:a:s:s", "with\nnewline", "a".repeat(1024)]) {
      expect(passwordProblem(password)).toBeUndefined();
      expect(passwordSchema.safeParse(password).success).toBe(true);
    }
    expect(passwordProblem("")).toBe("must not be empty");
    expect(passwordSchema.safeParse("a".repeat(1025)).success).toBe(false);
  });
});
