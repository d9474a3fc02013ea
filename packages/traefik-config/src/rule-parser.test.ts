/**
 * parseTraefikRule reads a rule as Traefik does (issue 22, finding 1). The table's readings are
 * Go's (checked with go/parser itself, see rule-readings.fixture.ts); the checker's reading must
 * equal each of them.
 */
import { describe, expect, it } from "vitest";
import { formatRule, parseTraefikRule, RuleSyntaxError } from "./rule-parser.ts";
import { RULE_READINGS } from "./rule-readings.fixture.ts";

function reading(rule: string): string {
  try {
    return formatRule(parseTraefikRule(rule));
  } catch (error) {
    if (error instanceof RuleSyntaxError) return "refused";
    throw error;
  }
}

describe("parseTraefikRule reads rules as Go's parser and Traefik do", () => {
  it("has a table of at least 40 rules built to confuse a lexer", () => {
    expect(RULE_READINGS.length).toBeGreaterThanOrEqual(40);
  });

  it.each(RULE_READINGS.map(({ rule, reading }) => [JSON.stringify(rule), rule, reading]))(
    "%s",
    (_name, rule, expected) => {
      expect(reading(rule)).toBe(expected);
    },
  );

  it("reports where a rule stops being one", () => {
    expect(() => parseTraefikRule("Host(`a`) // x\n|| PathPrefix(`/`)")).toThrow(
      "unexpected text after the rule at character 16",
    );
    expect(() => parseTraefikRule('Host("a\\q")')).toThrow("unknown escape sequence at character 8");
  });
});
