/**
 * The checks a stored certificate passes at save: the chain parses in order, the key is the
 * leaf's, the leaf is unexpired, and its hosts (SANs, wildcards) and expiry are read. Certificates
 * are made with openssl.
 */
import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { issuedCertificate, selfSignedCertificate } from "../proxy/test-support.ts";
import { certificateCovers, readCertificatePair } from "./certificates.ts";

const pair = issuedCertificate(["shop.example.com", "*.example.com"]);

describe("readCertificatePair", () => {
  it("reads the leaf's expiry and DNS names from a chain with its key", () => {
    const result = readCertificatePair(pair.chain, pair.key);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.reading.hosts).toEqual(["shop.example.com", "*.example.com"]);
    expect(result.reading.expiresAt).toBe(new Date(new X509Certificate(pair.leaf).validTo).toISOString());
    expect(new Date(result.reading.expiresAt).getTime()).toBeGreaterThan(Date.now());
  });

  it("falls back to the common name of a certificate without DNS names", () => {
    const selfSigned = selfSignedCertificate("Legacy.Example.org");
    const result = readCertificatePair(selfSigned.certificate, selfSigned.key);
    expect(result).toMatchObject({ ok: true, reading: { hosts: ["legacy.example.org"] } });
  });

  it("refuses a key of another certificate, naming privateKey", () => {
    const other = issuedCertificate(["other.example.com"]);
    expect(readCertificatePair(pair.chain, other.key)).toMatchObject({ ok: false, field: "privateKey" });
    expect(readCertificatePair(pair.chain, "not a key")).toMatchObject({ ok: false, field: "privateKey" });
  });

  it("refuses a chain out of order, a broken block or text that is no certificate, naming certificateData", () => {
    const reversed = readCertificatePair(pair.ca + pair.leaf, pair.key);
    expect(reversed).toMatchObject({ ok: false, field: "certificateData" });
    const unrelated = issuedCertificate(["x.example.com"]);
    expect(readCertificatePair(pair.leaf + unrelated.ca, pair.key)).toMatchObject({
      ok: false,
      field: "certificateData",
      message: expect.stringContaining("did not issue"),
    });
    const broken = pair.leaf + pair.ca.replace(/\n[A-Za-z0-9+/]{10}/, "\n!!!!!!!!!!");
    expect(readCertificatePair(broken, pair.key)).toMatchObject({ ok: false, field: "certificateData" });
    expect(readCertificatePair("hello", pair.key)).toMatchObject({ ok: false, field: "certificateData" });
  });

  it("refuses an expired certificate with its expiry date", () => {
    const later = new Date(Date.now() + 10 * 24 * 3600 * 1000);
    expect(readCertificatePair(pair.chain, pair.key, later)).toMatchObject({
      ok: false,
      field: "certificateData",
      message: expect.stringMatching(/^expired on \d{4}-/),
    });
  });
});

describe("certificateCovers", () => {
  it("matches exact names and one label under a wildcard", () => {
    const hosts = ["shop.example.com", "*.example.com"];
    expect(certificateCovers(hosts, "shop.example.com")).toBe(true);
    expect(certificateCovers(hosts, "API.example.com")).toBe(true);
    expect(certificateCovers(hosts, "a.b.example.com")).toBe(false);
    expect(certificateCovers(hosts, "example.com")).toBe(false);
    expect(certificateCovers(hosts, "*.example.com")).toBe(true);
    expect(certificateCovers(hosts, "badexample.com")).toBe(false);
    expect(certificateCovers(["shop.example.com"], "*.example.com")).toBe(false);
  });
});
