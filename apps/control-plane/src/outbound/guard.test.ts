/**
 * The outbound guard at the unit level: numeric addresses, localhost, and host names resolved
 * through a stub resolver (the real path asks node's dns, exercised by the Git and registry
 * tests). Covers every entry of IANA's special-purpose registries, the IPv6 forms that carry an
 * IPv4 address, the allow list and the rebinding-style case of a name with one good and one bad
 * address. Only the guard's answer is looked at: nothing is sent to these addresses.
 */
import { describe, expect, it } from "vitest";
import {
  type AllowList,
  carriedIPv4,
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

type Verdict = "global" | "loopback" | "private" | "special" | "never";

/** One address of each entry of IANA's IPv4 and IPv6 special-purpose registries, and more. */
const REGISTRY_ROWS: [address: string, entry: string, verdict: Verdict][] = [
  ["0.0.0.0", "0.0.0.0/32 This host on this network", "never"],
  ["0.1.2.3", "0.0.0.0/8 This network", "never"],
  ["10.1.2.3", "10.0.0.0/8 Private-Use", "private"],
  ["100.64.0.1", "100.64.0.0/10 Shared Address Space", "private"],
  ["100.127.255.254", "100.64.0.0/10 Shared Address Space", "private"],
  ["100.128.0.1", "just past 100.64.0.0/10", "global"],
  ["127.0.0.1", "127.0.0.0/8 Loopback", "loopback"],
  ["127.255.255.254", "127.0.0.0/8 Loopback", "loopback"],
  ["169.254.169.254", "169.254.0.0/16 Link Local (cloud metadata)", "never"],
  ["100.100.100.200", "Alibaba Cloud metadata", "never"],
  ["172.16.0.1", "172.16.0.0/12 Private-Use", "private"],
  ["172.31.255.255", "172.16.0.0/12 Private-Use", "private"],
  ["172.32.0.1", "just past 172.16.0.0/12", "global"],
  ["192.0.0.100", "192.0.0.0/24 IETF Protocol Assignments", "special"],
  ["192.0.0.1", "192.0.0.0/29 IPv4 Service Continuity Prefix", "special"],
  ["192.0.0.8", "192.0.0.8/32 IPv4 dummy address", "special"],
  ["192.0.0.9", "192.0.0.9/32 Port Control Protocol Anycast", "global"],
  ["192.0.0.10", "192.0.0.10/32 TURN Anycast", "global"],
  ["192.0.0.170", "192.0.0.170/32 NAT64/DNS64 Discovery", "special"],
  ["192.0.0.171", "192.0.0.171/32 NAT64/DNS64 Discovery", "special"],
  ["192.0.2.1", "192.0.2.0/24 Documentation (TEST-NET-1)", "special"],
  ["192.31.196.1", "192.31.196.0/24 AS112-v4", "global"],
  ["192.52.193.1", "192.52.193.0/24 AMT", "global"],
  ["192.88.99.1", "192.88.99.0/24 Deprecated (6to4 Relay Anycast)", "special"],
  ["192.168.1.10", "192.168.0.0/16 Private-Use", "private"],
  ["192.175.48.1", "192.175.48.0/24 Direct Delegation AS112 Service", "global"],
  ["198.18.0.1", "198.18.0.0/15 Benchmarking", "special"],
  ["198.19.255.255", "198.18.0.0/15 Benchmarking", "special"],
  ["198.20.0.1", "just past 198.18.0.0/15", "global"],
  ["198.51.100.2", "198.51.100.0/24 Documentation (TEST-NET-2)", "special"],
  ["203.0.113.7", "203.0.113.0/24 Documentation (TEST-NET-3)", "special"],
  ["224.0.0.1", "224.0.0.0/4 Multicast", "never"],
  ["239.255.255.250", "224.0.0.0/4 Multicast", "never"],
  ["240.0.0.1", "240.0.0.0/4 Reserved", "never"],
  ["255.255.255.255", "255.255.255.255/32 Limited Broadcast", "never"],
  ["1.1.1.1", "public", "global"],
  ["140.82.112.3", "public", "global"],

  ["::1", "::1/128 Loopback Address", "loopback"],
  ["::", "::/128 Unspecified Address", "never"],
  ["::ffff:1.1.1.1", "::ffff:0:0/96 IPv4-mapped Address (public)", "global"],
  ["64:ff9b::101:101", "64:ff9b::/96 IPv4-IPv6 Translat. (carries 1.1.1.1)", "global"],
  ["64:ff9b:1::101:101", "64:ff9b:1::/48 IPv4-IPv6 Translat. (local use)", "special"],
  ["100::1", "100::/64 Discard-Only Address Block", "special"],
  ["100:0:0:1::1", "100:0:0:1::/64 Dummy IPv6 Prefix", "special"],
  ["2001:0:4136:e378:8000:63bf:fefe:fefe", "2001::/32 TEREDO (client 1.1.1.1)", "global"],
  ["2001:1::1", "2001:1::1/128 Port Control Protocol Anycast", "global"],
  ["2001:1::2", "2001:1::2/128 TURN Anycast", "global"],
  ["2001:1::3", "2001:1::3/128 DNS-SD Service Registration Protocol Anycast", "global"],
  ["2001:1::4", "2001::/23 IETF Protocol Assignments", "special"],
  ["2001:2::1", "2001:2::/48 Benchmarking", "special"],
  ["2001:3::1", "2001:3::/32 AMT", "global"],
  ["2001:4:112::1", "2001:4:112::/48 AS112-v6", "global"],
  ["2001:4:113::1", "2001::/23 IETF Protocol Assignments", "special"],
  ["2001:10::1", "2001:10::/28 Deprecated (previously ORCHID)", "special"],
  ["2001:20::1", "2001:20::/28 ORCHIDv2", "global"],
  ["2001:30::1", "2001:30::/28 Drone Remote ID Protocol Entity Tags", "global"],
  ["2001:1ff::1", "2001::/23 IETF Protocol Assignments (last /32)", "special"],
  ["2001:200::1", "just past 2001::/23", "global"],
  ["2001:db8::1", "2001:db8::/32 Documentation", "special"],
  ["2002:101:101::1", "2002::/16 6to4 (carries 1.1.1.1)", "global"],
  ["2620:4f:8000::1", "2620:4f:8000::/48 Direct Delegation AS112 Service", "global"],
  ["3fff::1", "3fff::/20 Documentation", "special"],
  ["3fff:fff::1", "3fff::/20 Documentation", "special"],
  ["5f00::1", "5f00::/16 Segment Routing (SRv6) SIDs", "special"],
  ["fc00::1", "fc00::/7 Unique-Local", "private"],
  ["fd12:3456::1", "fc00::/7 Unique-Local", "private"],
  ["fd00:ec2::254", "AWS metadata over IPv6", "never"],
  ["fe80::1", "fe80::/10 Link-Local Unicast", "never"],
  ["febf::1", "fe80::/10 Link-Local Unicast", "never"],
  ["fec0::1", "fec0::/10 Site-Local (deprecated)", "private"],
  ["ff02::1", "ff00::/8 Multicast", "never"],
  ["::ffff:0:7f00:1", "outside 2000::/3, reserved (SIIT ::ffff:0:0:0/96)", "special"],
  ["4000::1", "outside 2000::/3, reserved", "special"],
  ["2606:4700:4700::1111", "public", "global"],
  ["2a00:1450:4001::1", "public", "global"],
];

/** The IPv6 forms carrying an IPv4 address, the address they carry and its verdict. */
const CARRYING_ROWS: [address: string, carried: string, verdict: Verdict][] = [
  ["::ffff:7f00:1", "127.0.0.1", "loopback"],
  ["::ffff:127.0.0.1", "127.0.0.1", "loopback"],
  ["::FFFF:A00:1", "10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "169.254.169.254", "never"],
  ["::ffff:198.18.0.1", "198.18.0.1", "special"],
  ["::7f00:1", "127.0.0.1", "loopback"],
  ["::127.0.0.1", "127.0.0.1", "loopback"],
  ["::c0a8:1", "192.168.0.1", "private"],
  ["::101:101", "1.1.1.1", "special"], // IPv4-compatible is deprecated, whatever it carries
  ["::2", "0.0.0.2", "never"],
  ["64:ff9b::7f00:1", "127.0.0.1", "loopback"],
  ["64:FF9B::7F00:1", "127.0.0.1", "loopback"],
  ["64:ff9b::127.0.0.1", "127.0.0.1", "loopback"],
  ["64:ff9b::a00:1", "10.0.0.1", "private"],
  ["64:ff9b::a9fe:a9fe", "169.254.169.254", "never"],
  ["64:ff9b::c612:1", "198.18.0.1", "special"],
  ["64:ff9b::101:101", "1.1.1.1", "global"],
  ["64:ff9b:1::c0a8:1", "192.168.0.1", "private"],
  ["64:ff9b:1::7f00:1", "127.0.0.1", "loopback"],
  ["2002:7f00:1::", "127.0.0.1", "loopback"],
  ["2002:7f00:1::1", "127.0.0.1", "loopback"],
  ["2002:a00:1::1", "10.0.0.1", "private"],
  ["2002:a9fe:a9fe::1", "169.254.169.254", "never"],
  ["2002:c000:201::1", "192.0.2.1", "special"],
  ["2002:101:101::1", "1.1.1.1", "global"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1", "loopback"], // client 0x80fffffe XOR ~0
  ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.1", "private"],
  ["2001:0:4136:e378:8000:63bf:fefe:fefe", "1.1.1.1", "global"],
];

const EVERYTHING = "0.0.0.0/0,::/0";

/** What the guard answers for `address` with an empty allow list, as a verdict. */
function verdictOf(address: string): Verdict {
  const problem = outboundAddressProblem(address, EMPTY_ALLOW_LIST);
  if (problem === null) return "global";
  if (/link-local, metadata, unspecified, multicast or reserved/.test(problem)) return "never";
  if (/loopback address/.test(problem)) return "loopback";
  if (/private address/.test(problem)) return "private";
  if (/special-purpose address that is not globally reachable/.test(problem)) return "special";
  throw new Error(`${address}: unexpected answer ${problem}`);
}

describe("outboundAddressProblem over IANA's special-purpose registries (issue 37 finding 7)", () => {
  it.each(REGISTRY_ROWS)("%s (%s) is %s", (address, _entry, verdict) => {
    expect(verdictOf(address)).toBe(verdict);
    const underAllowAll = outboundAddressProblem(address, allow(EVERYTHING));
    if (verdict === "never") expect(underAllowAll).toMatch(/link-local, metadata/);
    else expect(underAllowAll).toBeNull();
  });

  it.each(CARRYING_ROWS)("%s carries %s and is judged %s", (address, carried, verdict) => {
    expect(carriedIPv4(address)).toBe(carried);
    expect(verdictOf(address)).toBe(verdict);
    if (verdict !== "global" && verdict !== "special" && !address.toLowerCase().startsWith("::ffff:")) {
      expect(outboundAddressProblem(address, EMPTY_ALLOW_LIST)).toContain(`carries ${carried} (`);
    }
  });

  it("names the registry entry that refused an address", () => {
    expect(outboundAddressProblem("198.18.0.1", EMPTY_ALLOW_LIST)).toBe(
      "is a special-purpose address that is not globally reachable (Benchmarking 198.18.0.0/15); allow its range with PLATFORM_OUTBOUND_ALLOW",
    );
    expect(outboundAddressProblem("64:ff9b::7f00:1", EMPTY_ALLOW_LIST)).toBe(
      "carries 127.0.0.1 (IPv4-IPv6 Translat. 64:ff9b::/96), which is a loopback address (this machine); allow it with PLATFORM_OUTBOUND_ALLOW",
    );
    expect(outboundAddressProblem("fe80::1", EMPTY_ALLOW_LIST)).toBe(
      "is a link-local, metadata, unspecified, multicast or reserved address (Link-Local Unicast fe80::/10)",
    );
  });

  it("matches the allow list against the address as written, not the IPv4 a translator would reach", () => {
    expect(outboundAddressProblem("198.18.0.1", allow("198.18.0.0/15"))).toBeNull();
    expect(outboundAddressProblem("198.18.0.1", allow("127.0.0.0/8"))).toMatch(/Benchmarking/);
    // The IPv4-mapped form is the IPv4 address itself: 127.0.0.0/8 covers it.
    expect(outboundAddressProblem("::ffff:127.0.0.1", allow("127.0.0.0/8"))).toBeNull();
    // A NAT64 or 6to4 address reaches a translator's side, not this machine's loopback.
    expect(outboundAddressProblem("64:ff9b::7f00:1", allow("127.0.0.0/8"))).toMatch(/loopback/);
    expect(outboundAddressProblem("2002:7f00:1::1", allow("127.0.0.0/8"))).toMatch(/loopback/);
    expect(outboundAddressProblem("64:ff9b::a00:1", allow("64:ff9b::/96"))).toBeNull();
    expect(outboundAddressProblem("64:ff9b::a9fe:a9fe", allow("64:ff9b::/96"))).toMatch(/link-local/);
  });

  it("reads zone ids, brackets and upper-case hex", () => {
    expect(verdictOf("fe80::1%eth0")).toBe("never");
    expect(verdictOf("fd12::1%2")).toBe("private");
    expect(verdictOf("[::ffff:127.0.0.1]")).toBe("loopback");
    expect(verdictOf("[2002:7F00:1::1]")).toBe("loopback");
    expect(verdictOf("2606:4700:4700::1111%eth0")).toBe("global");
  });
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
    for (const address of ["140.82.112.3", "172.32.0.1", "2606:4700::1111", "192.31.196.1"]) {
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
    "bench.example": ["198.18.0.1"],
    "nat64.example": ["64:ff9b::7f00:1"],
    "sixtofour.example": ["2002:101:101::1", "2002:a00:1::1"],
    "zone.example": ["fe80::1%eth0"],
    "public-nat64.example": ["64:ff9b::101:101", "2606:4700:4700::1111"],
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
      "metadata.example resolves to 169.254.169.254, which is a link-local, metadata, unspecified, multicast or reserved address (Link Local (cloud metadata 169.254.169.254) 169.254.0.0/16)",
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

  it.each([
    ["0x7f.1", /127\.0\.0\.1 is a loopback/],
    ["2130706433", /127\.0\.0\.1 is a loopback/],
    ["127.1", /127\.0\.0\.1 is a loopback/],
    ["0177.0.0.1", /127\.0\.0\.1 is a loopback/],
    ["[::ffff:127.0.0.1]", /::ffff:7f00:1 is a loopback/],
    ["::ffff:127.0.0.1", /::ffff:7f00:1 is a loopback/],
    ["[64:FF9B::7F00:1]", /64:ff9b::7f00:1 carries 127\.0\.0\.1 .*loopback/],
    ["[64:ff9b::a00:1]", /carries 10\.0\.0\.1 .*private/],
    ["[64:ff9b:1::c0a8:1]", /carries 192\.168\.0\.1 .*private/],
    ["[2002:7f00:1::]", /carries 127\.0\.0\.1 .*loopback/],
    ["[::7f00:1]", /carries 127\.0\.0\.1 .*loopback/],
    ["[2001:0:4136:e378:8000:63bf:80ff:fffe]", /carries 127\.0\.0\.1 \(TEREDO/],
    ["198.18.0.1", /Benchmarking/],
    ["0xc6120001", /198\.18\.0\.1 is a special-purpose .*Benchmarking/],
    ["fe80::1%eth0", /is not a valid host/],
    ["[fe80::1%25eth0]", /is not a valid host/],
  ])("refuses the host %s", async (host, message) => {
    expect((await refusal(host)).message).toMatch(message);
  });

  it("refuses a name resolving to a special-purpose or IPv4-carrying address", async () => {
    expect((await refusal("bench.example")).message).toBe(
      "bench.example resolves to 198.18.0.1, which is a special-purpose address that is not globally reachable (Benchmarking 198.18.0.0/15); allow its range with PLATFORM_OUTBOUND_ALLOW",
    );
    expect((await refusal("nat64.example", allow("127.0.0.0/8"))).message).toMatch(
      /resolves to 64:ff9b::7f00:1, which carries 127\.0\.0\.1/,
    );
    expect((await refusal("sixtofour.example")).message).toMatch(/2002:a00:1::1, which carries 10\.0\.0\.1/);
    expect((await refusal("zone.example", allow("::/0"))).message).toMatch(
      /fe80::1%eth0, which is a link-local/,
    );
    expect(await checkOutboundHost("public-nat64.example", EMPTY_ALLOW_LIST, resolver)).toEqual([
      "64:ff9b::101:101",
      "2606:4700:4700::1111",
    ]);
    expect(await checkOutboundHost("[2002:101:101::1]", EMPTY_ALLOW_LIST, resolver)).toEqual([
      "2002:101:101::1",
    ]);
    expect(await checkOutboundHost("1.1.1.1", EMPTY_ALLOW_LIST, resolver)).toEqual(["1.1.1.1"]);
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
