import { describe, expect, it } from "vitest";
import { endpointMode } from "./ipvs.ts";

describe("endpointMode", () => {
  it("keeps the user's mode", () => {
    expect(endpointMode("vip", [], false)).toBe("vip");
    expect(endpointMode("dnsrr", [{ publishMode: "ingress" }], true)).toBe("dnsrr");
  });

  it("gives dnsrr without IPVS when no port goes through the ingress mesh", () => {
    expect(endpointMode(undefined, [], false)).toBe("dnsrr");
    expect(endpointMode(undefined, [{ publishMode: "host" }], false)).toBe("dnsrr");
  });

  it("keeps Docker's default (vip) with IPVS or an ingress port", () => {
    expect(endpointMode(undefined, [], true)).toBeUndefined();
    expect(endpointMode(undefined, [{ publishMode: "ingress" }], false)).toBeUndefined();
  });
});
