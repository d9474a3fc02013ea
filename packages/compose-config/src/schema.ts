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
 * complaint and then the oneOf. Errors from a failed oneOf's branches are folded into one issue at
 * the oneOf's path, unless one branch matched the value's kind (then its inner errors are the
 * useful ones and are kept).
 */
function readableIssues(errors: ErrorObject[]): ComposeIssue[] {
  const failedOneOfs = errors.filter((error) => error.keyword === "oneOf" || error.keyword === "anyOf");
  const issues: ComposeIssue[] = [];
  const covered = new Set<ErrorObject>();
  for (const oneOf of failedOneOfs) {
    const branches = errors.filter(
      (error) => error !== oneOf && error.schemaPath.startsWith(`${oneOf.schemaPath}/`),
    );
    for (const branch of branches) covered.add(branch);
    // A branch whose errors lie deeper than the oneOf matched the value's kind: its errors say more.
    const deeper = branches.filter(
      (error) =>
        error.instancePath !== oneOf.instancePath ||
        error.keyword === "additionalProperties" ||
        error.keyword === "required",
    );
    if (deeper.length > 0 && deeper.length < branches.length) {
      for (const error of deeper) issues.push(issueOf(error));
    } else {
      issues.push({
        path: segmentsOf(oneOf.instancePath).join("."),
        message: "has a form the Compose Specification does not accept",
      });
    }
    covered.add(oneOf);
  }
  for (const error of errors) if (!covered.has(error)) issues.push(issueOf(error));
  return issues;
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
