/**
 * The field walk (issue 27 item 1): every input field of every procedure the router serves is
 * applied, refused with a 400 naming it, or deliberately informational, as
 * apps/control-plane/src/field-classification.ts says. Generated from allRouters through the
 * same JSON Schema the OpenAPI document shows, so a procedure or field added later fails here
 * until it is classified; an entry whose procedure or field is gone fails as stale; a proof must
 * name its field (issue 38 item 4: a quarter of the proofs named a file where the field never
 * appears). Refusals with a probe are called over HTTP and must answer 400 naming the field.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { procedureTable } from "../../apps/control-plane/src/dispatcher.ts";
import { type FieldClass, fieldClassification } from "../../apps/control-plane/src/field-classification.ts";
import { allRouters } from "../../apps/control-plane/src/routers/index.ts";
import {
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../../apps/control-plane/src/testing/harness.ts";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const CLASSIFICATION = "apps/control-plane/src/field-classification.ts";
const procedures = [...procedureTable(allRouters).entries()];

type JsonSchema = {
  properties?: Record<string, unknown>;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
};

/** The top-level fields of an input, as the OpenAPI document shows them (every object form). */
function inputFields(schema: z.ZodType): string[] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const fields = new Set<string>();
  const visit = (node: JsonSchema) => {
    for (const key of Object.keys(node.properties ?? {})) fields.add(key);
    for (const member of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) visit(member);
  };
  visit(json);
  return [...fields].sort();
}

const served = new Map(procedures.map(([name, procedure]) => [name, inputFields(procedure.input)]));

const howToClassify = (name: string, field: string) =>
  `${name}.${field} is unclassified: add it to fieldClassification["${name}"] in ${CLASSIFICATION} as ` +
  `applied("${field}", "<the test file, or file#test title, that sets it and shows it taking effect>"), ` +
  `refused("<the test file>", <an input answering 400 naming ${field}>) when every value it would ignore is a 400, ` +
  `or informational (then name \`${field}\` on a docs/decisions.md line that says "informational")`;

const decisionsLines = readFileSync(path.join(repoRoot, "docs/decisions.md"), "utf8")
  .split("\n")
  .filter((line) => /informational/i.test(line));

/**
 * The only entries whose proof never spells the field: databases/database.test.ts runs each of
 * its tests for every database kind, with the kind's id field from databaseKindFacts.
 */
const unnamedInProof = new Set(
  [
    "one",
    "update",
    "remove",
    "saveEnvironment",
    "saveExternalPort",
    "changePassword",
    "changeStatus",
    "move",
  ].map((procedure) => `mongo.${procedure}.mongoId`),
);

const fileTexts = new Map<string, string>();
const readProofFile = (file: string) => {
  if (!fileTexts.has(file)) fileTexts.set(file, readFileSync(path.join(repoRoot, file), "utf8"));
  return fileTexts.get(file)!;
};

/** The source text (title and body) of each `it("title", …)` of a test file, by title. */
const testsByFile = new Map<string, Map<string, string[]>>();
function testsOf(file: string): Map<string, string[]> {
  const known = testsByFile.get(file);
  if (known) return known;
  const tests = new Map<string, string[]>();
  const source = ts.createSourceFile(file, readProofFile(file), ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      (node.expression.text === "it" || node.expression.text === "test") &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      const title = node.arguments[0].text;
      tests.set(title, [...(tests.get(title) ?? []), node.getText(source)]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  testsByFile.set(file, tests);
  return tests;
}

/** Why a proof (`file` or `file#test title`) does not name `field`, or undefined when it does. */
function proofGap(field: string, proof: string): string | undefined {
  const [file, title] = splitProof(proof);
  if (!existsSync(path.join(repoRoot, file))) return `${file} does not exist`;
  const names = new RegExp(`\\b${field}\\b`);
  if (title === undefined) {
    return [file, ...fixturesOf(file)].some((source) => names.test(readProofFile(source)))
      ? undefined
      : `${file} never mentions ${field}`;
  }
  const bodies = testsOf(file).get(title);
  if (!bodies) return `${file} holds no it("${title}", …)`;
  return bodies.some((body) => names.test(body))
    ? undefined
    : `the test "${title}" of ${file} never mentions ${field}`;
}

/**
 * The fixture modules a test file imports from beside it (`./testing.ts`, `./testing/…`, the
 * shared harness aside): a test that sends the inputs a fixture holds
 * (git-providers/testing/fixtures.ts) proves them.
 */
function fixturesOf(file: string): string[] {
  const imports = readProofFile(file).matchAll(/from "(\.\/testing(?:\.ts|\/[^"]+\.ts))"/g);
  return [...imports]
    .map((match) => path.join(path.dirname(file), match[1]!))
    .filter((fixture) => !fixture.endsWith("harness.ts"));
}

function splitProof(proof: string): [string, string | undefined] {
  const hash = proof.indexOf("#");
  return hash < 0 ? [proof, undefined] : [proof.slice(0, hash), proof.slice(hash + 1)];
}

function entries(): [string, string, FieldClass][] {
  return Object.entries(fieldClassification).flatMap(([name, fields]) =>
    Object.entries(fields).map(([field, cls]) => [name, field, cls] as [string, string, FieldClass]),
  );
}

describe("the field walk: every input field is applied, refused or informational", () => {
  it("walks more than a thousand fields of every served procedure", () => {
    expect(procedures.length).toBeGreaterThan(300);
    expect([...served.values()].flat().length).toBeGreaterThan(1000);
  });

  it("every served procedure's every field is classified", () => {
    const unclassified = [...served].flatMap(([name, fields]) =>
      fields
        .filter((field) => !fieldClassification[name]?.[field])
        .map((field) => howToClassify(name, field)),
    );
    expect(unclassified, unclassified.join("\n")).toEqual([]);
  });

  it("no classification entry is stale (its procedure and field exist)", () => {
    const stale = entries()
      .filter(([name, field]) => !served.get(name)?.includes(field))
      .map(([name, field]) =>
        served.has(name)
          ? `${name}.${field} is classified in ${CLASSIFICATION} but ${name} has no input field ${field}: remove the entry`
          : `${name} is classified in ${CLASSIFICATION} but no router serves it: remove its row`,
      );
    const staleRows = Object.keys(fieldClassification).filter((name) => !served.has(name));
    expect([
      ...new Set([...stale, ...staleRows.map((name) => `${name}: no router serves it, remove its row`)]),
    ]).toEqual([]);
  });

  it("every applied or refused field names a test file that exists", () => {
    const missing = entries()
      .filter(([, , cls]) => cls.kind !== "informational")
      .filter(
        ([, , cls]) => !existsSync(path.join(repoRoot, splitProof((cls as { proof: string }).proof)[0])),
      )
      .map(([name, field, cls]) => `${name}.${field}: ${(cls as { proof: string }).proof} does not exist`);
    expect(missing).toEqual([]);
  });

  it("every applied or refused field's proof mentions the field (in the named test when it names one)", () => {
    const gaps = entries().flatMap(([name, field, cls]) => {
      // A refusal with a probe is proven here, over HTTP (below).
      if (cls.kind === "informational" || (cls.kind === "refused" && cls.probe)) return [];
      if (unnamedInProof.has(`${name}.${field}`)) return [];
      const gap = proofGap(field, cls.proof);
      return gap ? [`${name}.${field}: ${gap}`] : [];
    });
    expect(gaps, gaps.join("\n")).toEqual([]);
  });

  it('every informational field is named on a docs/decisions.md line that says "informational"', () => {
    const unnamed = entries()
      .filter(([, , cls]) => cls.kind === "informational")
      .filter(
        ([name, field]) =>
          !decisionsLines.some(
            (line) => line.includes(`\`${field}\``) || line.includes(`\`${name}.${field}\``),
          ),
      )
      .map(
        ([name, field]) =>
          `${name}.${field}: informational but no "informational" line of docs/decisions.md names \`${field}\``,
      );
    expect(unnamed).toEqual([]);
  });

  describe("refused fields answer 400 naming them, over HTTP", () => {
    let platform: TestPlatform;
    let owner: Session;
    const fixtures: Record<string, string> = {};
    const probes = entries().flatMap(([name, field, cls]) =>
      cls.kind === "refused" && cls.probe ? [[`${name}.${field}`, name, field, cls.probe] as const] : [],
    );

    beforeAll(async () => {
      platform = await startTestPlatform();
      owner = await platform.registerOwner();
      const auth = { token: owner.token };
      const created = await platform.mutateOk("project.create", { name: "Field walk" }, auth);
      fixtures.projectId = created.project.projectId;
      fixtures.environmentId = created.environment.environmentId;
      const environmentId = fixtures.environmentId;
      fixtures.applicationId = (
        await platform.mutateOk("application.create", { name: "Walk", environmentId }, auth)
      ).applicationId;
      // A stack of the caller's: a refused composeId is the caller's (another's or an unknown one is a 404).
      fixtures.composeId = (
        await platform.mutateOk(
          "compose.create",
          {
            name: "Walk",
            appName: "walk-stack",
            environmentId,
            composeFile: "services:\n  web:\n    image: busybox\n",
          },
          auth,
        )
      ).composeId;
      fixtures.postgresId = (
        await platform.mutateOk(
          "postgres.create",
          {
            name: "Walk",
            appName: "walk-pg",
            environmentId,
            databaseName: "app",
            databaseUser: "app",
            databasePassword: "Walk#pass1",
          },
          auth,
        )
      ).postgresId;
      fixtures.destinationId = (
        await platform.mutateOk(
          "destination.create",
          {
            name: "Walk",
            provider: "AWS",
            accessKey: "walk",
            secretAccessKey: "walk-secret",
            bucket: "walk",
            region: "us-east-1",
            endpoint: "",
          },
          auth,
        )
      ).destinationId;
      fixtures.backupId = (
        await platform.mutateOk(
          "backup.create",
          {
            schedule: "0 3 * * *",
            prefix: "walk",
            destinationId: fixtures.destinationId,
            database: "app",
            databaseType: "postgres",
            postgresId: fixtures.postgresId,
          },
          auth,
        )
      ).backupId;
    });
    afterAll(() => platform?.close());

    const withFixtures = (value: unknown): unknown => {
      if (typeof value === "string" && value.startsWith("$")) {
        const fixture = fixtures[value.slice(1)];
        if (fixture === undefined) throw new Error(`no fixture ${value} for a probe`);
        return fixture;
      }
      if (Array.isArray(value)) return value.map(withFixtures);
      if (value && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withFixtures(inner)]));
      }
      return value;
    };

    it("has probes", () => expect(probes.length).toBeGreaterThan(5));

    it.each(probes)("%s", async (_label, name, field, probe) => {
      const procedure = procedureTable(allRouters).get(name)!;
      const input = withFixtures(probe) as Record<string, unknown>;
      const auth = { token: owner.token };
      const answer =
        procedure.kind === "query"
          ? await platform.query(name, input, auth)
          : await platform.mutate(name, input, auth);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      // The field itself, or a path inside it (`metadata.a`).
      const named = (answer.body.error.data.fields as string[]).filter(
        (path) => path === field || path.startsWith(`${field}.`),
      );
      expect(named, JSON.stringify(answer.body)).not.toEqual([]);
    });
  });
});
