import { describe, expect, it } from "vitest";
import { HostFiles } from "./audit/host-files.ts";
import { isWithin } from "./path-within.ts";

describe("isWithin", () => {
  it("accepts the root and what is below it, nothing beside it", () => {
    expect(isWithin("/srv/app", "/srv/app")).toBe(true);
    expect(isWithin("/srv/app", "/srv/app/src/index.ts")).toBe(true);
    expect(isWithin("/srv/app", "/srv/app2/x")).toBe(false);
    expect(isWithin("/srv/app", "/srv")).toBe(false);
  });

  it("treats the filesystem root as containing every absolute path", () => {
    expect(isWithin("/", "/")).toBe(true);
    expect(isWithin("/", "/etc/passwd")).toBe(true);
  });
});

describe("HostFiles on a real host", () => {
  it("reads the host's files when its root is /", async () => {
    const host = new HostFiles("/");
    expect(host.resolve("/etc/passwd")).toBe("/etc/passwd");
    expect(host.resolve("/../../etc/passwd")).toBe("/etc/passwd");
    expect(await host.read("/etc/passwd")).toContain("root:");
    expect(await host.exists("/etc")).toBe(true);
  });
});
