/**
 * No procedure accepts an unknown input field in silence. Generated from allRouters, so a
 * procedure added later is covered: every object of every input schema is strict, and every
 * procedure, called over HTTP on both prefixes, answers 400 naming the unknown field.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { procedureTable } from "../../apps/control-plane/src/dispatcher.ts";
import { allRouters } from "../../apps/control-plane/src/routers/index.ts";
import {
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../../apps/control-plane/src/testing/harness.ts";

const procedures = [...procedureTable(allRouters).entries()];

interface Schema {
  _zod: { def: { type: string } };
}

interface Def {
  type: string;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  innerType?: Schema;
  element?: Schema;
  options?: Schema[];
  valueType?: Schema;
  in?: Schema;
  out?: Schema;
  items?: Schema[];
}

/** Paths of the object schemas inside `schema` that let unknown keys through. */
function lenientObjects(schema: Schema, at: string): string[] {
  const def = schema._zod.def as unknown as Def;
  const children: [Schema, string][] = [];
  const found: string[] = [];
  if (def.type === "object") {
    if (def.catchall?._zod.def.type !== "never") found.push(at || "(input)");
    for (const [key, field] of Object.entries(def.shape ?? {}))
      children.push([field, at ? `${at}.${key}` : key]);
  }
  if (def.innerType) children.push([def.innerType, at]);
  if (def.element) children.push([def.element, `${at}[]`]);
  if (def.valueType) children.push([def.valueType, `${at}{}`]);
  for (const option of def.options ?? []) children.push([option, at]);
  for (const item of def.items ?? []) children.push([item, `${at}[]`]);
  if (def.type === "pipe" && def.in && def.out) children.push([def.in, at], [def.out, at]);
  for (const [child, path] of children) found.push(...lenientObjects(child, path));
  return found;
}

describe("unknown input fields, for every served procedure", () => {
  it("every object of every input schema is strict", () => {
    expect(procedures.length).toBeGreaterThan(100);
    const lenient = procedures.flatMap(([name, procedure]) =>
      lenientObjects(procedure.input, "").map((path) => `${name}: ${path}`),
    );
    expect(lenient).toEqual([]);
  });

  describe("over HTTP", () => {
    let platform: TestPlatform;
    let owner: Session;
    const unknown = "zzNotAField";

    beforeAll(async () => {
      platform = await startTestPlatform();
      owner = await platform.registerOwner();
    });
    afterAll(() => platform?.close());

    it.each(procedures.map(([name, procedure]) => [name, procedure.kind] as const))(
      "%s (%s) answers 400 naming the unknown field on /api and /api/trpc",
      async (name, kind) => {
        const auth = { token: owner.token };
        const plain =
          kind === "query"
            ? await platform.request(`/api/${name}?${unknown}=1`, auth)
            : await platform.request(`/api/${name}`, {
                method: "POST",
                body: JSON.stringify({ [unknown]: 1 }),
                ...auth,
              });
        expect(plain.status, JSON.stringify(plain.body)).toBe(400);
        expect(plain.body.error.data.fields).toContain(unknown);

        const input = JSON.stringify({ json: { [unknown]: 1 } });
        const trpc =
          kind === "query"
            ? await platform.request(`/api/trpc/${name}?input=${encodeURIComponent(input)}`, auth)
            : await platform.request(`/api/trpc/${name}`, { method: "POST", body: input, ...auth });
        expect(trpc.status, JSON.stringify(trpc.body)).toBe(400);
        expect(trpc.body.error.json.data.fields).toContain(unknown);
      },
    );
  });
});
