/**
 * Every option the Dokploy CLI (0.30.7) can send to a procedure we serve is either accepted by
 * our input or named in that procedure's compat row `differs` (and then refused with a 400
 * naming it, which unknown-fields.test.ts checks). The CLI's options are a committed fixture
 * written by scripts/cli-options.mjs from the npm package.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { procedureTable } from "../../apps/control-plane/src/dispatcher.ts";
import { allRouters } from "../../apps/control-plane/src/routers/index.ts";
import { dokployProcedures } from "./dokploy-procedures.ts";

interface Schema {
  _zod: {
    def: {
      type: string;
      shape?: Record<string, Schema>;
      innerType?: Schema;
      in?: Schema;
      options?: Schema[];
    };
  };
}

const fixture = JSON.parse(readFileSync(new URL("./cli-options.json", import.meta.url), "utf8")) as {
  cli: string;
  procedures: Record<string, string[]>;
};

function inputFields(schema: Schema): Set<string> {
  const def = schema._zod.def;
  if (def.type === "object") return new Set(Object.keys(def.shape ?? {}));
  if (def.type === "pipe" && def.in) return inputFields(def.in);
  if (def.innerType) return inputFields(def.innerType);
  if (def.type === "union" && def.options) {
    return new Set(def.options.flatMap((option) => [...inputFields(option)]));
  }
  return new Set();
}

const served = procedureTable(allRouters);

describe(`the options of ${fixture.cli}`, () => {
  it("the fixture is the CLI's (a few known commands)", () => {
    expect(fixture.cli).toBe("@dokploy/cli@0.30.7");
    expect(fixture.procedures["backup.create"]).toContain("includeEncryptionKey");
    expect(Object.keys(fixture.procedures).length).toBeGreaterThan(500);
  });

  it("every option of a served procedure is accepted or listed in its row's differs", () => {
    const problems: string[] = [];
    for (const [name, options] of Object.entries(fixture.procedures)) {
      const procedure = served.get(name);
      if (!procedure) continue;
      const accepted = inputFields(procedure.input as unknown as Schema);
      const differs = dokployProcedures[name]?.differs ?? {};
      for (const option of options) {
        const field = option.replace(/\*$/, "");
        if (accepted.has(field) || field in differs) continue;
        problems.push(`${name}: ${field}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
