/**
 * The outbound guard at the unit level: numeric addresses, localhost, and host names resolved
 * through a stub resolver (the real path asks node's dns, exercised by the Git and registry
 * tests). Covers the always-refused ranges, the allow list and the rebinding-style case of a
 * name with one good and one bad address.
 */
import { describe, expect, it } from "vitest";
import {
  type AllowList,
  checkOutboundHost,
  EMPTY_ALLOW_LIST,
  type HostResolver,
  normalizeHost,
  OutboundRefusedError,
  outboundAddressProblem,
  parseAllowList,
} from "./guard.ts";

const allow = (text: string): AllowList => {
  const parsed = parseAllowList(text);
  if (!("list" in parsed)) throw new Error(parsed.problem);
  return parsed.list;
};

const stub = (table: Record<string, string[]>): HostResolver => ({
  resolve: async (hostname) => {
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return found;
  },
});

describe("outboundAddressProblem", () => {
  it.each([
    "169.254.169.254",
    "169.254.0.1",
    "100.100.100.200",
    "fd00:ec2::254",
    "fe80::1",
    "::ffff:169.254.169.254",
    "0.0.0.0",
    "::",
    "224.0.0.1",
    "ff02::1",
    "255.255.255.255",
  ])("refuses %s even when the allow list says everything", (address) => {
    expect(outboundAddressProblem(address, allow("0.0.0.0/0,::/0"))).toMatch(/link-local|metadata|multicast/);
  });

  it.each(["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"])(
    "refuses loopback %s unless allowed",
    (a) => {
      expect(outboundAddressProblem(a, EMPTY_ALLOW_LIST)).toMatch(/loopback/);
      expect(outboundAddressProblem(a, allow("127.0.0.0/8,::1"))).toBeNull();
    },
  );

  it.each(["10.0.0.1", "172.16.5.5", "172.31.255.255", "192.168.1.10", "100.64.0.1", "fd12:3456::1"])(
    "refuses private %s unless its range is allowed",
    (address) => {
      expect(outboundAddressProblem(address, EMPTY_ALLOW_LIST)).toMatch(/private/);
      expect(outboundAddressProblem(address, allow("127.0.0.0/8"))).toMatch(/private/);
      expect(outboundAddressProblem(address, allow("0.0.0.0/0,::/0"))).toBeNull();
    },
  );

  it("allows public addresses and exactly the allowed CIDR", () => {
    for (const address of ["140.82.112.3", "172.32.0.1", "2606:4700::1111", "198.51.100.2"]) {
      expect(outboundAddressProblem(address, EMPTY_ALLOW_LIST), address).toBeNull();
    }
    const lan = allow("192.168.1.0/24");
    expect(outboundAddressProblem("192.168.1.200", lan)).toBeNull();
    expect(outboundAddressProblem("192.168.2.1", lan)).toMatch(/private/);
  });

  it("refuses what is not an address", () => {
    expect(outboundAddressProblem("gitea.lan", EMPTY_ALLOW_LIST)).toMatch(/not an IP/);
  });
});

describe("parseAllowList", () => {
  it("takes CIDRs and bare addresses, and names a bad entry", () => {
    expect(allow(" 127.0.0.0/8 ,, 10.0.0.7 ,fd00::/8").cidrs).toEqual([
      "127.0.0.0/8",
      "10.0.0.7/32",
      "fd00::/8",
    ]);
    for (const bad of ["localhost", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "::/129", "1.2.3.4/8/8"]) {
      expect(parseAllowList(bad), bad).toEqual({ problem: expect.stringContaining(bad.split(",")[0]!) });
    }
  });
});

describe("normalizeHost", () => {
  it("writes out numeric IPv4 forms and strips brackets and the final dot", () => {
    expect(normalizeHost("0x7f.1")).toBe("127.0.0.1");
    expect(normalizeHost("2130706433")).toBe("127.0.0.1");
    expect(normalizeHost("[::1]")).toBe("::1");
    expect(normalizeHost("::1")).toBe("::1");
    expect(normalizeHost("Registry.Example.COM.")).toBe("registry.example.com");
    expect(normalizeHost("a b")).toBeNull();
    expect(normalizeHost("user@host")).toBeNull();
  });
});

describe("checkOutboundHost", () => {
  const resolver = stub({
    "public.example": ["140.82.112.3"],
    "metadata.example": ["169.254.169.254"],
    "lan.example": ["192.168.1.20"],
    "rebind.example": ["140.82.112.4", "127.0.0.1"],
    "v6meta.example": ["fd00:ec2::254"],
  });
  const refusal = async (host: string, list: AllowList = EMPTY_ALLOW_LIST) => {
    try {
      await checkOutboundHost(host, list, resolver);
    } catch (error) {
      if (error instanceof OutboundRefusedError) return error;
      throw error;
    }
    throw new Error(`${host} was not refused`);
  };

  it("answers the checked addresses of a public name", async () => {
    expect(await checkOutboundHost("public.example", EMPTY_ALLOW_LIST, resolver)).toEqual(["140.82.112.3"]);
    expect(await checkOutboundHost("PUBLIC.example.", EMPTY_ALLOW_LIST, resolver)).toEqual(["140.82.112.3"]);
  });

  it("refuses a name resolving to metadata, whatever the allow list", async () => {
    const error = await refusal("metadata.example", allow("0.0.0.0/0"));
    expect(error.message).toBe(
      "metadata.example resolves to 169.254.169.254, which is a link-local, metadata, unspecified, multicast or reserved address",
    );
    expect((await refusal("v6meta.example", allow("::/0"))).message).toMatch(/fd00:ec2::254/);
  });

  it("refuses a name with any bad address among good ones", async () => {
    expect((await refusal("rebind.example")).message).toMatch(/127\.0\.0\.1, which is a loopback/);
    expect(await checkOutboundHost("rebind.example", allow("127.0.0.0/8"), resolver)).toHaveLength(2);
  });

  it("needs the allow list for a LAN name", async () => {
    expect((await refusal("lan.example")).message).toMatch(/private/);
    expect(await checkOutboundHost("lan.example", allow("192.168.1.0/24"), resolver)).toEqual([
      "192.168.1.20",
    ]);
  });

  it("treats localhost as loopback without asking DNS, and numeric forms as their address", async () => {
    expect((await refusal("localhost")).message).toMatch(/loopback/);
    expect((await refusal("api.localhost")).message).toMatch(/loopback/);
    expect((await refusal("0x7f.1")).message).toMatch(/127\.0\.0\.1 is a loopback/);
    expect((await refusal("[::1]")).message).toMatch(/loopback/);
    expect(await checkOutboundHost("localhost", allow("127.0.0.0/8,::1"), resolver)).toEqual([
      "127.0.0.1",
      "::1",
    ]);
  });

  it("marks a name without addresses as unresolved", async () => {
    const error = await refusal("nowhere.example");
    expect(error.unresolved).toBe(true);
    expect(error.message).toBe("nowhere.example does not resolve");
  });

  it("resolves through the system resolver by default", async () => {
    expect((await refusal("localhost")).message).toMatch(/loopback/);
    await expect(checkOutboundHost("nothing.invalid", EMPTY_ALLOW_LIST)).rejects.toMatchObject({
      unresolved: true,
    });
  });
});
