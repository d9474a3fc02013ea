import { describe, expect, it } from "vitest";
import { ComposeFileError } from "./errors.ts";
import { escapeInterpolation, interpolateCompose, interpolateValue } from "./interpolate.ts";

const env = { SET: "value", EMPTY: "", PORT: "8080", NESTED: "inner" };

function issuesOf(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof ComposeFileError) return error.issues;
    throw error;
  }
  throw new Error("expected a ComposeFileError");
}

describe("interpolateValue", () => {
  it.each([
    ["${SET}", "value"],
    ["$SET", "value"],
    ["$SET-suffix", "value-suffix"],
    ["pre${SET}post", "prevaluepost"],
    ["${MISSING}", ""],
    ["$MISSING", ""],
    ["${MISSING:-fallback}", "fallback"],
    ["${EMPTY:-fallback}", "fallback"],
    ["${EMPTY-fallback}", ""],
    ["${MISSING-fallback}", "fallback"],
    ["${SET:-fallback}", "value"],
    ["${SET:+alt}", "alt"],
    ["${EMPTY:+alt}", ""],
    ["${EMPTY+alt}", "alt"],
    ["${MISSING+alt}", ""],
    ["${MISSING:-${NESTED}}", "inner"],
    ["${MISSING:-${ALSO_MISSING:-deep}}", "deep"],
    ["${MISSING:-a:b}", "a:b"],
    ["$$", "$"],
    ["$${SET}", "${SET}"],
    ["cost $$5", "cost $5"],
    ["$$$SET", "$value"],
    ["${PORT}:80", "8080:80"],
    ["no variables", "no variables"],
  ])("%s → %s", (input, expected) => {
    expect(interpolateValue(input, env)).toBe(expected);
  });

  it("reports a required variable that is missing or empty, with its message", () => {
    expect(issuesOf(() => interpolateValue("${MISSING:?set it}", env, "services.web.image"))).toEqual([
      { path: "services.web.image", message: "required variable MISSING is missing: set it" },
    ]);
    expect(issuesOf(() => interpolateValue("${EMPTY:?}", env))[0]!.message).toBe(
      "required variable EMPTY is empty",
    );
    // Without the colon an empty value is a value.
    expect(interpolateValue("${EMPTY?must be set}", env)).toBe("");
    expect(issuesOf(() => interpolateValue("${MISSING?must be set}", env))[0]!.message).toContain(
      "must be set",
    );
  });

  it.each(["${", "${SET", "${}", "${1X}", "${SET!x}", "cost $5", "$ alone", "trailing $"])(
    "refuses the invalid form %s as Compose does",
    (input) => {
      expect(issuesOf(() => interpolateValue(input, env))[0]!.message).toMatch(
        /invalid interpolation format/,
      );
    },
  );

  it("does not read inherited properties of the environment object", () => {
    expect(interpolateValue("${constructor}${toString:-x}", {})).toBe("x");
  });
});

describe("interpolateCompose", () => {
  it("interpolates every string value of a document, never the keys", () => {
    const document = interpolateCompose(
      {
        services: { "${SET}": { image: "nginx:${TAG:-1}", command: ["--port", "${PORT}"], read_only: true } },
      },
      env,
    );
    expect(document).toEqual({
      services: { "${SET}": { image: "nginx:1", command: ["--port", "8080"], read_only: true } },
    });
  });

  it("parses YAML text first, so a value cannot add YAML structure", () => {
    const document = interpolateCompose("services:\n  web:\n    image: ${IMAGE}\n", {
      IMAGE: "nginx\n    privileged: true",
    });
    expect(document).toEqual({ services: { web: { image: "nginx\n    privileged: true" } } });
  });

  it("reports every failing value with its path", () => {
    const issues = issuesOf(() =>
      interpolateCompose(
        { services: { a: { image: "${A:?}" }, b: { environment: ["X=${B:?need B}"] } } },
        {},
      ),
    );
    expect(issues.map((issue) => issue.path)).toEqual(["services.a.image", "services.b.environment.0"]);
  });
});

describe("escapeInterpolation", () => {
  it("writes every $ of every value as $$, keys as they are, so interpolation gives the values back", () => {
    const document = {
      services: {
        a$b: { image: "${X:-platform/foo:1}", command: ["$HOME", "$$", "cost $5"], replicas: 2, init: true },
      },
    };
    const escaped = escapeInterpolation(document);
    expect(escaped).toEqual({
      services: {
        a$b: {
          image: "$${X:-platform/foo:1}",
          command: ["$$HOME", "$$$$", "cost $$5"],
          replicas: 2,
          init: true,
        },
      },
    });
    expect(interpolateCompose(escaped as Record<string, unknown>, { X: "x", HOME: "/home/agent" })).toEqual(
      document,
    );
  });
});
