/**
 * Issue 22 finding 8: display names refuse control, line-separator and bidirectional formatting
 * characters. Generated from allRouters: every `name`-like field of every procedure's input is
 * found and must refuse them, so a name field added later is covered; one call over HTTP shows
 * the 400 naming the field and that nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { procedureTable } from "./dispatcher.ts";
import { displayNameSchema } from "./display-name.ts";
import { allRouters } from "./routers/index.ts";
import { type Session, startTestPlatform, type TestPlatform } from "./testing/harness.ts";

interface Schema {
  _zod: { def: Def };
  safeParse(value: unknown): { success: boolean };
}
interface Def {
  type: string;
  shape?: Record<string, Schema>;
  innerType?: Schema;
  in?: Schema;
  out?: Schema;
  options?: Schema[];
}

/** Input fields that name a thing shown to people (filters of a search are not names). */
const NAME_KEYS = /^(name|registryName|organizationName|displayName|projectName|environmentName)$/;
const SEARCH_FILTERS = /\.search$/;
/**
 * Names that are identifiers, not free text in any script: a network's Docker name
 * (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`) and a vault provider's name, which environment variables cite in
 * `${{vault.<name>.<path>:<field>}}` (Dokploy's `[a-zA-Z0-9_-]+`), a DNS provider's name (the same
 * rule in Dokploy) and a DNS record's name (an ASCII DNS name, IDNs in punycode). They refuse every
 * forbidden character like display names.
 */
const ENGINE_NAMES = new Set([
  "network.create: name",
  "vaultProvider.create: name",
  "vaultProvider.update: name",
  "dnsProvider.create: name",
  "dnsProvider.update: name",
  "dnsProvider.createRecord: name",
  "dnsProvider.updateRecord: name",
]);

/** The name fields of an input schema, with their path. */
function nameFields(schema: Schema, at = ""): [string, Schema][] {
  const def = schema._zod.def;
  const found: [string, Schema][] = [];
  if (def.type === "object") {
    for (const [key, field] of Object.entries(def.shape ?? {})) {
      const path = at ? `${at}.${key}` : key;
      if (NAME_KEYS.test(key)) found.push([path, field]);
      else found.push(...nameFields(field, path));
    }
  }
  if (def.innerType) found.push(...nameFields(def.innerType, at));
  if (def.type === "pipe" && def.in && def.out)
    found.push(...nameFields(def.in, at), ...nameFields(def.out, at));
  for (const option of def.options ?? []) found.push(...nameFields(option, at));
  return found;
}

const FORBIDDEN = {
  newline: "Shop\nINFO forged line",
  "carriage return": "Shop\rX",
  escape: "Shop\u001b[31m",
  "right-to-left override": "invoice\u202Etxt.exe",
  "left-to-right isolate": "a\u2066b",
  "right-to-left mark": "a\u200Fb",
  "line separator": "a\u2028b",
  "arabic letter mark": "a\u061Cb",
  DEL: "a\u007Fb",
  "C1 control": "a\u0085b",
  // Issue 37 finding 9: format characters (Cf) that show nothing.
  "zero-width space": "a\u200Bb",
  "zero-width non-joiner": "a\u200Cb",
  "zero-width joiner": "a\u200Db",
  "word joiner": "a\u2060b",
  "byte order mark": "Sh\uFEFFop",
  "soft hyphen": "Sh\u00ADop",
  "invisible separator": "a\u2063b",
  "tag character": "Shop\u{E0041}",
};

describe("display names (issue 22 finding 8)", () => {
  const procedures = [...procedureTable(allRouters).entries()].filter(([name]) => !SEARCH_FILTERS.test(name));
  const fields = procedures.flatMap(([name, procedure]) =>
    nameFields(procedure.input as unknown as Schema).map(([path, schema]) => ({
      at: `${name}: ${path}`,
      schema,
    })),
  );

  it("finds the name fields of every router", () => {
    const routers = new Set(fields.map((field) => field.at.split(".")[0]));
    for (const router of [
      "project",
      "environment",
      "application",
      "postgres",
      "mysql",
      "mariadb",
      "mongo",
      "redis",
      "server",
      "sshKey",
      "registry",
      "organization",
      "user",
      "auth",
    ]) {
      expect(routers, router).toContain(router);
    }
  });

  it.each(Object.entries(FORBIDDEN))("every name field refuses a %s", (_, name) => {
    const accepting = fields.filter((field) => field.schema.safeParse(name).success).map((f) => f.at);
    expect(accepting).toEqual([]);
  });

  it("every name field accepts ordinary names in any script", () => {
    for (const name of ["Shop", "Boutique d'été", "מסעדה", "متجر", "商店 2", "Ünïcødé – api"]) {
      const refusing = fields
        .filter((field) => !ENGINE_NAMES.has(field.at))
        .filter((field) => !field.schema.safeParse(name).success)
        .map((f) => f.at);
      expect(refusing, name).toEqual([]);
    }
    expect(displayNameSchema.safeParse("  padded  ")).toEqual({ success: true, data: "padded" });
  });
});

describe("a bidi or zero-width name over HTTP", () => {
  let platform: TestPlatform;
  let owner: Session;
  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
  });
  afterAll(() => platform?.close());

  it("is a 400 naming the field, and nothing is stored", async () => {
    const response = await platform.mutate(
      "project.create",
      { name: "invoice\u202Etxt.exe" },
      { token: owner.token },
    );
    expect(response.status).toBe(400);
    expect(response.body.error.data.fields).toEqual(["name"]);
    expect(response.body.error.message).toMatch(/bidirectional/);
    expect(await platform.ctx.db.selectFrom("projects").select("projectId").execute()).toEqual([]);
  });

  it("a zero-width space is a 400 naming the field, and nothing is stored (issue 37 finding 9)", async () => {
    const response = await platform.mutate("project.create", { name: "a\u200Bb" }, { token: owner.token });
    expect(response.status).toBe(400);
    expect(response.body.error.data.fields).toEqual(["name"]);
    expect(response.body.error.message).toMatch(/invisible formatting characters/);
    expect(await platform.ctx.db.selectFrom("projects").select("projectId").execute()).toEqual([]);
  });
});
