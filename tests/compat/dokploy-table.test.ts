/**
 * Every procedure we serve against Dokploy's row in dokploy-procedures.ts: the same input
 * fields, the same required ones, Dokploy's defaults, and the answer's shape. A served procedure
 * without a row fails, so a procedure added later must add its row.
 */
import { describe, expect, it } from "vitest";
import { procedureTable } from "../../apps/control-plane/src/dispatcher.ts";
import { allRouters } from "../../apps/control-plane/src/routers/index.ts";
import { dokployProcedures, type Row, sources } from "./dokploy-procedures.ts";

interface Schema {
  _zod: { optin?: string; def: Def };
}
interface Def {
  type: string;
  shape?: Record<string, Schema>;
  innerType?: Schema;
  element?: Schema;
  options?: Schema[];
  in?: Schema;
  defaultValue?: unknown;
}

const served = procedureTable(allRouters);
const wrappers = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);

function unwrap(schema: Schema): Schema {
  let current = schema;
  for (;;) {
    const def = current._zod.def;
    if (wrappers.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else return current;
  }
}

/** The default of a field, looking through optional/nullable wrappers. */
function defaultOf(field: Schema): { value: unknown } | undefined {
  for (let current: Schema | undefined = field; current; current = current._zod.def.innerType) {
    if (current._zod.def.type === "default") return { value: current._zod.def.defaultValue };
  }
  return undefined;
}

interface FieldRow {
  required: boolean;
  default?: { value: unknown };
}

function parseFields(input: string[]): Map<string, FieldRow> {
  const fields = new Map<string, FieldRow>();
  for (const entry of input) {
    const [name, defaultJson] = entry.split("=", 2) as [string, string | undefined];
    const required = name.endsWith("*");
    fields.set(required ? name.slice(0, -1) : name, {
      required,
      ...(defaultJson !== undefined ? { default: { value: JSON.parse(defaultJson) } } : {}),
    });
  }
  return fields;
}

/** Our answer's shape in the table's notation. */
function outputShape(schema: Schema): { type: string; keys: string[] } {
  const inner = unwrap(schema);
  const def = inner._zod.def;
  if (def.type === "object") return { type: "object", keys: Object.keys(def.shape ?? {}) };
  if (def.type === "record") return { type: "object", keys: [] };
  if (def.type === "array" && def.element) {
    return { type: "array", keys: outputShape(def.element).keys };
  }
  if (def.type === "union" && def.options) {
    const shapes = def.options.map((option) => outputShape(option)).filter((s) => s.type !== "null");
    if (shapes.length === 1) return shapes[0]!;
  }
  return { type: def.type, keys: [] };
}

function differences(name: string, row: Row): string[] {
  const procedure = served.get(name)!;
  const problems: string[] = [];
  const differs = row.differs ?? {};
  const dokploy = parseFields(row.input ?? []);
  const shape = unwrap(procedure.input)._zod.def.shape ?? {};

  for (const [field, expected] of dokploy) {
    if (field in differs) continue;
    const ours = shape[field];
    if (!ours) {
      problems.push(`${field}: Dokploy accepts it, we do not`);
      continue;
    }
    const required = ours._zod.optin !== "optional" && ours._zod.optin !== "defaulted";
    if (required !== expected.required) {
      problems.push(
        `${field}: ${expected.required ? "required" : "optional"} in Dokploy, ${required ? "required" : "optional"} with us`,
      );
    }
    if (expected.default) {
      const ourDefault = defaultOf(ours);
      if (!ourDefault || JSON.stringify(ourDefault.value) !== JSON.stringify(expected.default.value)) {
        problems.push(
          `${field}: Dokploy's default is ${JSON.stringify(expected.default.value)}, ours ${ourDefault ? JSON.stringify(ourDefault.value) : "none"}`,
        );
      }
    }
  }
  for (const field of Object.keys(shape)) {
    if (!dokploy.has(field) && !(field in differs)) problems.push(`${field}: we accept it, Dokploy does not`);
  }

  const expectedOutput = row.output ?? "any";
  if (expectedOutput !== "any" && !("(output)" in differs)) {
    const [type, keyList = ""] = expectedOutput.split(":") as [string, string?];
    const keys = keyList.split(",").filter(Boolean);
    const ours = outputShape(procedure.output);
    if (type === "boolean!") {
      if (ours.type !== "boolean")
        problems.push(`(output): Dokploy answers a boolean, we answer ${ours.type}`);
    } else if (type === "boolean" || type === "null") {
      // Dokploy's `true` or nothing is our `{success: true}` (spec 4.0).
      const ok =
        ours.type === "boolean" ||
        ours.type === "null" ||
        (ours.type === "object" && ours.keys.includes("success"));
      if (!ok) problems.push(`(output): Dokploy answers ${type}, we answer ${ours.type}`);
    } else if (type !== ours.type) {
      problems.push(`(output): Dokploy answers ${type}, we answer ${ours.type}`);
    } else {
      const missing = keys.filter((key) => !ours.keys.includes(key));
      if (missing.length > 0) problems.push(`(output): we do not answer ${missing.join(", ")}`);
    }
  }
  return problems;
}

describe("served procedures against Dokploy's schemas", () => {
  it("every served procedure has a row, and every row is served", () => {
    const missing = [...served.keys()].filter((name) => !(name in dokployProcedures));
    const stale = Object.keys(dokployProcedures).filter((name) => !served.has(name));
    expect({ missing, stale }).toEqual({ missing: [], stale: [] });
  });

  it("every row names where its facts were read, or why there are none", () => {
    const bare = Object.entries(dokployProcedures).filter(
      ([, row]) => !row.platformOnly && !row.unverified && !(row.source && row.source in sources),
    );
    expect(bare.map(([name]) => name)).toEqual([]);
  });

  for (const [name, procedure] of served) {
    const row = dokployProcedures[name];
    if (!row) continue;
    const skip = row.pendingOn
      ? `pending on ${row.pendingOn}: ${row.pendingReason}`
      : row.unverified
        ? `unverified: ${row.unverified}`
        : row.platformOnly
          ? `not in Dokploy: ${row.platformOnly}`
          : undefined;
    it(`${name} is a ${row.kind}`, () => {
      expect(procedure.kind).toBe(row.kind);
    });
    it.skipIf(skip !== undefined)(
      `${name} takes Dokploy's fields and answers its shape${skip ? ` (${skip})` : ""}`,
      () => {
        expect(differences(name, row)).toEqual([]);
      },
    );
  }
});
