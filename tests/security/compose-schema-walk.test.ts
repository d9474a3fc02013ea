/**
 * The schema walk of the tenant allowlist (issue 37): every property of the Compose
 * Specification's schema (the file @platform/compose-config validates with), top-level sections
 * and every nested object, followed through $ref, oneOf/anyOf/allOf alternatives, list items,
 * patternProperties and additionalProperties, must be classified by TENANT_KEY_RULES as allowed,
 * allowed with a named check, or refused; and the table may hold no key the schema lacks. A key a
 * new Compose release adds fails here until someone classifies it (and is refused for tenants
 * meanwhile, since checkTenancy refuses keys the table does not classify).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type KeyRule, type KeyTable, TENANT_KEY_RULES } from "../../packages/compose-config/src/tenancy.ts";

type SchemaNode = Record<string, unknown>;

const schema = JSON.parse(
  readFileSync(new URL("../../packages/compose-config/schemas/compose-spec.json", import.meta.url), "utf8"),
) as SchemaNode;

/** Every property path of the schema, dotted; `*` stands for named entries (patternProperties, additionalProperties). */
function schemaPaths(root: SchemaNode): Set<string> {
  const paths = new Set<string>();
  const resolve = (ref: string): SchemaNode => {
    const match = /^#\/definitions\/(.+)$/.exec(ref);
    if (!match) throw new Error(`a $ref the walk cannot follow: ${ref}`);
    return (root.definitions as Record<string, SchemaNode>)[match[1]!]!;
  };
  const visit = (node: unknown, path: string[], refs: string[]): void => {
    if (!node || typeof node !== "object") return;
    const schemaNode = node as SchemaNode;
    if (typeof schemaNode.$ref === "string") {
      // A definition that contains itself is walked once per path.
      if (!refs.includes(schemaNode.$ref)) visit(resolve(schemaNode.$ref), path, [...refs, schemaNode.$ref]);
    }
    for (const keyword of ["oneOf", "anyOf", "allOf"]) {
      for (const alternative of (schemaNode[keyword] as unknown[] | undefined) ?? [])
        visit(alternative, path, refs);
    }
    const items = schemaNode.items;
    for (const item of Array.isArray(items) ? items : [items]) visit(item, path, refs);
    const child = (name: string, value: unknown) => {
      const childPath = [...path, name];
      paths.add(childPath.join("."));
      visit(value, childPath, refs);
    };
    for (const [name, value] of Object.entries((schemaNode.properties as SchemaNode | undefined) ?? {})) {
      child(name, value);
    }
    for (const [pattern, value] of Object.entries(
      (schemaNode.patternProperties as SchemaNode | undefined) ?? {},
    )) {
      // `x-` keys are Compose's extension fields, which Compose ignores.
      if (pattern !== "^x-") child("*", value);
    }
    const additional = schemaNode.additionalProperties;
    if (additional === true || (additional && typeof additional === "object")) child("*", additional);
  };
  visit(root, [], []);
  return paths;
}

/** The rule that classifies a schema path: its own, or a refused or free-form ("any") key above it. */
function ruleOf(path: string): KeyRule | undefined {
  let table: KeyTable = TENANT_KEY_RULES;
  const segments = path.split(".");
  for (const [index, segment] of segments.entries()) {
    const rule = table[segment];
    if (!rule || index === segments.length - 1) return rule;
    if (rule.verdict === "refused" || rule.keys === "any") return rule;
    if (!rule.keys) return undefined;
    table = rule.keys;
  }
  return undefined;
}

/** Every path the table classifies, with the run check in force above it. */
function tablePaths(table: KeyTable, prefix: string[] = [], runAbove = false): [string, KeyRule, boolean][] {
  return Object.entries(table).flatMap(([key, rule]) => {
    const path = [...prefix, key];
    const entry: [string, KeyRule, boolean] = [path.join("."), rule, runAbove];
    if (rule.verdict === "refused" || !rule.keys || rule.keys === "any") return [entry];
    const runs = runAbove || (rule.verdict === "checked" && rule.run !== undefined);
    return [entry, ...tablePaths(rule.keys, path, runs)];
  });
}

const paths = [...schemaPaths(schema)].sort();
const classified = tablePaths(TENANT_KEY_RULES);

describe("the tenant allowlist covers the Compose Specification", () => {
  it("walks the whole schema", () => {
    expect(paths.length).toBeGreaterThan(300);
    for (const known of [
      "services.*.post_start.privileged",
      "services.*.build.dockerfile_inline",
      "volumes.*.driver_opts.*",
    ]) {
      expect(paths).toContain(known);
    }
  });

  it.each(paths)("%s is classified", (path) => {
    const rule = ruleOf(path);
    expect(rule, `${path}: add it to TENANT_KEY_RULES (allowed, checked or refused)`).toBeDefined();
  });

  it.each(classified)("%s is a key of the schema", (path) => {
    expect(paths, `${path} is in TENANT_KEY_RULES but not in the Compose Specification`).toContain(path);
  });

  it.each(classified.filter(([, rule]) => rule.verdict === "checked"))(
    "%s names its check, and a check that runs",
    (_path, rule, runAbove) => {
      if (rule.verdict !== "checked") return;
      expect(rule.check).not.toBe("");
      // A checked key without a check of its own is judged by the enclosing key's check.
      expect(rule.run !== undefined || runAbove).toBe(true);
    },
  );
});
