/**
 * Parsing of Compose YAML and validation against the Compose Specification's JSON Schema
 * (schemas/compose-spec.json, a copy of compose-spec/compose-spec's). Every problem comes back
 * as a ComposeIssue with a dotted path (`services.web.ports.0`).
 */
import { readFileSync } from "node:fs";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { parseDocument, type ScalarTag } from "yaml";
import { ComposeFileError, type ComposeIssue } from "./errors.ts";

const SCHEMA_URL = new URL("../schemas/compose-spec.json", import.meta.url);

let validator: ValidateFunction | undefined;

/** Compiled once, on first use. */
function compiledValidator(): ValidateFunction {
  if (!validator) {
    // strict: false: the schema carries annotations (deprecated, format names) ajv does not know.
    // validateSchema: false: its $schema names draft-07 by an https URL ajv does not register.
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, validateSchema: false });
    validator = ajv.compile(JSON.parse(readFileSync(SCHEMA_URL, "utf8")));
  }
  return validator;
}

/** Problems of a Compose document against the Compose Specification; empty when it is valid. */
export function validateComposeDocument(document: unknown): ComposeIssue[] {
  const validate = compiledValidator();
  if (validate(document)) return [];
  const issues = readableIssues(validate.errors ?? []);
  const unique = new Map(issues.map((issue) => [`${issue.path}\u0000${issue.message}`, issue]));
  return [...unique.values()];
}

/** Throws a ComposeFileError naming where the document breaks the Compose Specification. */
export function assertValidCompose(document: unknown): asserts document is Record<string, unknown> {
  const issues = validateComposeDocument(document);
  if (issues.length > 0) throw new ComposeFileError(issues);
}

/**
 * `0640` is an octal number, as Go's YAML readers (Compose v2, the Docker CLI) read it; YAML 1.2's
 * core schema would read 640 and a secret's `mode: 0400` would become another permission.
 */
const LEADING_ZERO_OCTAL: ScalarTag = {
  identify: (value) => typeof value === "number",
  default: true,
  tag: "tag:yaml.org,2002:int",
  test: /^0[0-7]+$/,
  resolve: (text) => Number.parseInt(text, 8),
};

/** Plain data out of YAML text: one document, no custom tags, merge keys (`<<: *x`) resolved, aliases bounded. */
export function parseYaml(text: string): unknown {
  // resolveKnownTags off: no !!binary, !!set or !!timestamp; the result is plain JSON data.
  const document = parseDocument(text, {
    prettyErrors: true,
    uniqueKeys: true,
    merge: true,
    resolveKnownTags: false,
    customTags: (tags) => [LEADING_ZERO_OCTAL, ...tags],
  });
  const problems = [...document.errors, ...document.warnings];
  if (problems.length > 0) {
    throw new ComposeFileError(
      problems.map((error) => ({
        path: "",
        message: `invalid YAML: ${error.message.split("\n")[0]!.replace(/:$/, "")}`,
      })),
    );
  }
  try {
    // A bounded alias count refuses the "billion laughs" expansion.
    return document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ComposeFileError([{ path: "", message: `invalid YAML: ${(error as Error).message}` }]);
  }
}

/**
 * Parses Compose YAML and validates it against the Compose Specification. The document must be
 * a mapping; an invalid file is a ComposeFileError whose issues name where it is invalid.
 */
export function parseComposeFile(text: string): Record<string, unknown> {
  const document = parseYaml(text);
  if (document === null || document === undefined) {
    throw new ComposeFileError([{ path: "", message: "the Compose file is empty" }]);
  }
  if (typeof document !== "object" || Array.isArray(document)) {
    throw new ComposeFileError([{ path: "", message: "a Compose file is a mapping of top-level keys" }]);
  }
  assertValidCompose(document);
  return document;
}

function segmentsOf(instancePath: string): string[] {
  return instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/**
 * Ajv's errors made readable. The schema is full of oneOf (a port is a number, a string or an
 * object; networks a list or a map): when a value fails every branch, ajv reports each branch's
 * complaint at several depths. Only the deepest problems are kept (an error at a path that holds a
 * deeper error is the same problem seen from above), and at one path a failed oneOf speaks for its
 * branches ("must be array", "must be object"...).
 */
function readableIssues(errors: ErrorObject[]): ComposeIssue[] {
  const all = errors.map((error) => ({ error, issue: issueOf(error) }));
  const deeper = (path: string) =>
    all.some(({ issue }) => issue.path !== path && (path === "" || issue.path.startsWith(`${path}.`)));
  const kept = all.filter(({ issue }) => !deeper(issue.path));
  const combined = new Set(
    kept
      .filter(({ error }) => error.keyword === "oneOf" || error.keyword === "anyOf")
      .map(({ issue }) => issue.path),
  );
  return kept
    .filter(
      ({ error, issue }) =>
        !combined.has(issue.path) || error.keyword === "oneOf" || error.keyword === "anyOf",
    )
    .map(({ error, issue }) =>
      error.keyword === "oneOf" || error.keyword === "anyOf"
        ? { path: issue.path, message: "has a form the Compose Specification does not accept" }
        : issue,
    );
}

function issueOf(error: ErrorObject): ComposeIssue {
  const segments = segmentsOf(error.instancePath);
  if (error.keyword === "additionalProperties") {
    return {
      path: [...segments, String(error.params.additionalProperty)].join("."),
      message: "is not a Compose key here",
    };
  }
  if (error.keyword === "required") {
    return { path: [...segments, String(error.params.missingProperty)].join("."), message: "is required" };
  }
  return { path: segments.join("."), message: error.message ?? "is invalid" };
}
