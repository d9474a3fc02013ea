/** Tests of name validation. */
import { describe, expect, it } from "vitest";
import {
  appNameProblem,
  assertValidName,
  InvalidNameError,
  isExistingAppName,
  isValidAppName,
  isValidName,
} from "./names.ts";

describe("isValidName", () => {
  it("accepts container ids, names and app names", () => {
    for (const name of ["abc123", "web-1", "shop_web.1.x7", "My.App-2", "a".repeat(64)]) {
      expect(isValidName(name)).toBe(true);
    }
  });

  it("refuses shell metacharacters, paths, spaces, dots-only and non-strings", () => {
    for (const name of [
      "x; rm -rf /",
      "../x",
      "a/b",
      "",
      " ",
      "a b",
      "$(id)",
      "a\nb",
      ".",
      "..",
      "...",
      "ü",
    ]) {
      expect(isValidName(name)).toBe(false);
    }
    expect(isValidName(undefined)).toBe(false);
    expect(isValidName(42)).toBe(false);
  });

  it("assertValidName names what was refused", () => {
    expect(() => assertValidName("x; rm -rf /", "container id")).toThrow(InvalidNameError);
    expect(() => assertValidName("../x", "container id")).toThrow(/invalid container id "..\/x"/);
    expect(assertValidName("ok-name")).toBe("ok-name");
  });
});

describe("appNameProblem (the one appName rule of control plane and agent)", () => {
  it("accepts plain names and refuses options, dot names, '..' and reserved platform names", () => {
    for (const ok of ["web", "my-app.v2_1", "A".repeat(63), "platformer", "my-platform-app"]) {
      expect(appNameProblem(ok), ok).toBeNull();
    }
    const bad = ["", "..", ".", "...", "-rf", "--help", ".env", "a..b", "a/b", "a b", "é", "A".repeat(64)];
    for (const name of [...bad, "platform-traefik", "Platform-Agent", "platform-x"]) {
      expect(appNameProblem(name), name).not.toBeNull();
      expect(isValidAppName(name), name).toBe(false);
    }
    expect(appNameProblem("platform-traefik")).toMatch(/reserved/);
  });
});

describe("isExistingAppName (names an existing object may have: today's rule or the older one)", () => {
  it("accepts names of the older rule that creation refuses, and still nothing that is an option or a path", () => {
    for (const name of ["web", "platform-x", "Platform-Agent", "a..b", "A".repeat(63)]) {
      expect(isExistingAppName(name), name).toBe(true);
    }
    expect(isValidAppName("platform-x")).toBe(false);
    for (const name of ["", "..", ".", "-rf", "--help", ".env", "a/b", "a b", "é", "A".repeat(64)]) {
      expect(isExistingAppName(name), name).toBe(false);
    }
  });
});
