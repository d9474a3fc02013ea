/**
 * The `${…}` helpers of template.toml: lengths, alphabets, uniqueness (CSPRNG), dates, JWTs
 * verified with jose, and bad arguments named in the error.
 */
import { decodeJwt, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import {
  callHelper,
  type HelperContext,
  isHelper,
  MAX_HELPER_LENGTH,
  TemplateHelperError,
} from "./helpers.ts";

const NOW = Date.parse("2026-11-27T06:00:00Z");
function context(variables: Record<string, string> = {}): HelperContext {
  let hosts = 0;
  return {
    nextHost: () => `host-${++hosts}.example.test`,
    variable: (name) => variables[name],
    now: () => NOW,
  };
}
const call = (expression: string, variables?: Record<string, string>) =>
  callHelper(expression, context(variables));
const many = (expression: string, count = 200) => Array.from({ length: count }, () => call(expression));

describe("template helpers", () => {
  it("password: 16 characters of [A-Za-z0-9] by default, n with password:n, all different", () => {
    const passwords = many("password");
    for (const password of passwords) expect(password).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(new Set(passwords).size).toBe(passwords.length);
    expect(call("password:64")).toMatch(/^[A-Za-z0-9]{64}$/);
    // Every class of the alphabet turns up (Dokploy's lower-cases; these keep upper case).
    const joined = many("password:64", 20).join("");
    expect(joined).toMatch(/[A-Z]/);
    expect(joined).toMatch(/[a-z]/);
    expect(joined).toMatch(/[0-9]/);
  });

  it("base64:n encodes n random bytes (32 by default)", () => {
    expect(Buffer.from(call("base64"), "base64")).toHaveLength(32);
    const values = many("base64:48");
    for (const value of values) {
      expect(value).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(value, "base64")).toHaveLength(48);
    }
    expect(new Set(values).size).toBe(values.length);
  });

  it("hash:n is n hex characters (8 by default), odd lengths too", () => {
    expect(call("hash")).toMatch(/^[0-9a-f]{8}$/);
    expect(call("hash:7")).toMatch(/^[0-9a-f]{7}$/);
    expect(call("hash:64")).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(many("hash:16")).size).toBe(200);
  });

  it("uuid is a v4 UUID; randomPort stays in 10000..32767; email and username look the part", () => {
    expect(call("uuid")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(many("uuid")).size).toBe(200);
    for (const port of many("randomPort").map(Number)) {
      expect(Number.isInteger(port)).toBe(true);
      expect(port).toBeGreaterThanOrEqual(10000);
      expect(port).toBeLessThan(32768);
    }
    expect(call("username")).toMatch(/^[a-z]{6}[0-9]{4}$/);
    expect(call("email")).toMatch(/^[a-z]{6}[0-9]{4}@example\.com$/);
  });

  it("timestamps: now in ms (timestamp, timestampms) and s (timestamps), or a given date", () => {
    expect(call("timestamp")).toBe(String(NOW));
    expect(call("timestampms")).toBe(String(NOW));
    expect(call("timestamps")).toBe(String(NOW / 1000));
    expect(call("timestampms:2030-01-01T00:00:00Z")).toBe(String(Date.parse("2030-01-01T00:00:00Z")));
    expect(call("timestamps:2030-01-01T00:00:00Z")).toBe(String(Date.parse("2030-01-01T00:00:00Z") / 1000));
    expect(() => call("timestamps:not a date")).toThrow(/timestamps:not a date.*not a date/);
  });

  it("domain asks the context for a host each time", () => {
    const shared = context();
    expect(callHelper("domain", shared)).toBe("host-1.example.test");
    expect(callHelper("domain", shared)).toBe("host-2.example.test");
  });

  it("jwt and jwt:n are random hex tokens", () => {
    expect(call("jwt")).toMatch(/^[0-9a-f]{64}$/);
    expect(call("jwt:16")).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(many("jwt")).size).toBe(200);
  });

  it("jwt:SECRET:PAYLOAD signs HS256 with a variable's secret over a variable's JSON claims", async () => {
    const variables = { jwt_secret: "s".repeat(40), anon_payload: '{"role":"anon","iss":"supabase"}' };
    const token = call("jwt:jwt_secret:anon_payload", variables);
    const { payload, protectedHeader } = await jwtVerify(
      token,
      new TextEncoder().encode(variables.jwt_secret),
    );
    expect(protectedHeader.alg).toBe("HS256");
    expect(payload).toMatchObject({ role: "anon", iss: "supabase", iat: NOW / 1000 });
    expect(payload.exp).toBeGreaterThan(NOW / 1000 + 9 * 365 * 24 * 3600);
    // The payload may be written inline, and a secret that is no variable is the text itself.
    const inline = call('jwt:literal-secret:{"role":"service_role"}');
    await jwtVerify(inline, new TextEncoder().encode("literal-secret"));
    expect(decodeJwt(inline).role).toBe("service_role");
    // The payload's own iat/exp win.
    const fixed = call('jwt:k:{"iat":1,"exp":2}');
    expect(decodeJwt(fixed)).toMatchObject({ iat: 1, exp: 2 });
  });

  it("names the helper and the argument it cannot use", () => {
    for (const [expression, message] of [
      ["password:0", /password:0.*1 to 4096/],
      [`password:${MAX_HELPER_LENGTH + 1}`, /1 to 4096/],
      ["base64:abc", /base64:abc.*whole number/],
      ["hash:-3", /hash:-3/],
      ["uuid:4", /uuid takes no argument/],
      ["domain:x", /domain takes no argument/],
      ["jwt:k:not-json", /payload "not-json" is neither a variable nor a JSON object/],
      ["jwt:k:[1,2]", /payload must be a JSON object/],
    ] as const) {
      expect(() => call(expression), expression).toThrow(TemplateHelperError);
      expect(() => call(expression), expression).toThrow(message);
    }
    expect(() => call("nohelper")).toThrow(/nohelper is not a helper/);
    expect(isHelper("password:12")).toBe(true);
    expect(isHelper("main_domain")).toBe(false);
  });
});
