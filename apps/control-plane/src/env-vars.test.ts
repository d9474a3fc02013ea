import { describe, expect, it } from "vitest";
import { z } from "zod";
import { EnvSyntaxError, envSchema, findEnvErrors, mergeEnv, parseEnv } from "./env-vars.ts";

describe("parseEnv", () => {
  it("reads KEY=VALUE lines, skipping blank lines and comments", () => {
    const text = "# database\nDB_HOST=db.internal\n\n  PORT = 5432  \r\nURL=postgres://u:p@h/db?a=b\n";
    expect(parseEnv(text)).toEqual([
      { key: "DB_HOST", value: "db.internal" },
      { key: "PORT", value: "5432" },
      { key: "URL", value: "postgres://u:p@h/db?a=b" },
    ]);
  });

  it("accepts keys with dots and dashes, empty values, and strips one pair of quotes", () => {
    expect(parseEnv('spring.profile-name=prod\nEMPTY=\n_X="a b"\nY=\'c\'\nZ="unbalanced\nHASH=a#b')).toEqual([
      { key: "spring.profile-name", value: "prod" },
      { key: "EMPTY", value: "" },
      { key: "_X", value: "a b" },
      { key: "Y", value: "c" },
      { key: "Z", value: '"unbalanced' },
      { key: "HASH", value: "a#b" },
    ]);
  });

  it("keeps repeated keys in order (mergeEnv decides)", () => {
    expect(parseEnv("A=1\nA=2")).toEqual([
      { key: "A", value: "1" },
      { key: "A", value: "2" },
    ]);
  });

  it("reports every bad line by number, without echoing its content", () => {
    const text = "OK=1\nsecret-without-equals\n1ABC=x\n=nokey\nexport FOO=bar\nBAD KEY=1";
    expect(findEnvErrors(text).map((e) => e.line)).toEqual([2, 3, 4, 5, 6]);
    expect(() => parseEnv(text)).toThrow(EnvSyntaxError);
    try {
      parseEnv(text);
    } catch (error) {
      expect((error as EnvSyntaxError).errors[0]).toEqual({ line: 2, message: "expected KEY=VALUE" });
      expect((error as Error).message).not.toContain("secret");
    }
  });

  it("accepts the empty string", () => {
    expect(parseEnv("")).toEqual([]);
  });
});

describe("envSchema", () => {
  it("names the field and the line in zod issues", () => {
    const schema = z.object({ env: envSchema });
    const result = schema.safeParse({ env: "A=1\nnope" });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({ path: ["env"], message: "line 2: expected KEY=VALUE" }),
    ]);
    expect(schema.safeParse({ env: "A=1\n# c\n" }).success).toBe(true);
  });

  it("caps the number of reported lines", () => {
    const result = envSchema.safeParse(Array.from({ length: 50 }, () => "bad").join("\n"));
    expect(result.error?.issues).toHaveLength(11);
    expect(result.error?.issues.at(-1)?.message).toBe("40 more invalid lines");
  });
});

describe("mergeEnv", () => {
  it("lets later layers override earlier ones (project -> environment -> service)", () => {
    const project = "A=project\nB=project\nSHARED=project";
    const environment = "B=environment\nC=environment";
    const service = "C=service\nD=service";
    expect(mergeEnv(project, environment, service)).toEqual([
      { key: "A", value: "project" },
      { key: "B", value: "environment" },
      { key: "SHARED", value: "project" },
      { key: "C", value: "service" },
      { key: "D", value: "service" },
    ]);
  });

  it("accepts parsed layers and skips absent ones", () => {
    expect(mergeEnv([{ key: "A", value: "1" }], undefined, null, "A=2\nA=3", "")).toEqual([
      { key: "A", value: "3" },
    ]);
    expect(mergeEnv()).toEqual([]);
  });

  it("throws on a bad text layer", () => {
    expect(() => mergeEnv("A=1", "broken")).toThrow(/line 1/);
  });
});
