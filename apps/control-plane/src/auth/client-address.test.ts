/**
 * fromLoopback (issue 37 finding 11): only a request whose TCP peer is this machine, and not a
 * trusted proxy, is this machine's; a forwarded header never makes it so, and a request whose
 * peer is unknown is not.
 */
import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import { fromLoopback } from "./client-address.ts";

function request(remoteAddress: string | undefined, forwardedFor?: string): Context {
  return {
    env: { incoming: { socket: { remoteAddress } } },
    req: { header: (name: string) => (name === "x-forwarded-for" ? forwardedFor : undefined) },
  } as unknown as Context;
}

describe("fromLoopback", () => {
  it("is true for a loopback peer in any form", () => {
    for (const peer of ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"]) {
      expect(fromLoopback(request(peer), []), peer).toBe(true);
    }
  });

  it("is false for another peer, whatever X-Forwarded-For says", () => {
    for (const peer of ["198.51.100.7", "::ffff:198.51.100.7", "2001:db8::1", "172.18.0.1"]) {
      expect(fromLoopback(request(peer, "127.0.0.1"), []), peer).toBe(false);
    }
  });

  it("is false through a trusted proxy on loopback, and for a peer no longer known", () => {
    expect(fromLoopback(request("127.0.0.1", "127.0.0.1"), ["127.0.0.1"])).toBe(false);
    expect(fromLoopback(request("127.0.0.1"), ["127.0.0.0/8"])).toBe(false);
    expect(fromLoopback(request(undefined), [])).toBe(false);
  });

  it("is true for an in-process request (no HTTP message)", () => {
    expect(fromLoopback({ env: undefined } as unknown as Context, [])).toBe(true);
  });
});
