/**
 * Validation against the official Traefik v3 JSON Schemas (schemas/, copies of SchemaStore's),
 * and parsing of user-supplied YAML (application/settings.updateTraefikConfig) into a checked
 * configuration. Every problem comes back as a ConfigIssue with a dotted path.
 */
import { readFileSync } from "node:fs";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { parseDocument, stringify } from "yaml";
import type { ConfigIssue } from "./errors.ts";

type SchemaNode = Record<string, unknown>;

const SCHEMA_DIRECTORY = new URL("../schemas/", import.meta.url);

/** Keywords whose value is a map of subschemas. */
const SCHEMA_MAPS = ["properties", "patternProperties", "definitions", "$defs"];
/** Keywords whose value is a subschema or a list of subschemas. */
const SCHEMA_VALUES = [
  "additionalProperties",
  "items",
  "not",
  "oneOf",
  "anyOf",
  "allOf",
  "if",
  "then",
  "else",
];

/**
 * SchemaStore's Traefik schemas leave some objects open (no `additionalProperties`), among them
 * the static configuration's root, routers' `tls`, load-balancer servers and basicAuth. This
 * closes every object schema that lists its properties and says nothing about others, so a
 * misspelt or unknown key is refused everywhere. Objects combined with oneOf/anyOf/allOf are left
 * as they are (their branches decide).
 */
export function closeOpenObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) closeOpenObjects(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  const schema = node as SchemaNode;
  const combined = "oneOf" in schema || "anyOf" in schema || "allOf" in schema;
  if (
    typeof schema.properties === "object" &&
    schema.additionalProperties === undefined &&
    schema.patternProperties === undefined &&
    !combined
  ) {
    schema.additionalProperties = false;
  }
  for (const keyword of SCHEMA_MAPS) {
    const map = schema[keyword];
    if (map && typeof map === "object") for (const sub of Object.values(map)) closeOpenObjects(sub);
  }
  for (const keyword of SCHEMA_VALUES) closeOpenObjects(schema[keyword]);
}

function loadSchema(fileName: string): SchemaNode {
  const schema = JSON.parse(readFileSync(new URL(fileName, SCHEMA_DIRECTORY), "utf8")) as SchemaNode;
  closeOpenObjects(schema);
  return schema;
}

let validators: { dynamic: ValidateFunction; static: ValidateFunction } | undefined;

/** Compiled once, on first use (compiling the two schemas takes a moment). */
function compiledValidators() {
  if (!validators) {
    // strict: false because SchemaStore's schemas use annotations ajv does not know; verbose
    // gives errors their schema (readableErrors counts a oneOf's branches).
    const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
    validators = {
      dynamic: ajv.compile(loadSchema("traefik-v3-file-provider.json")),
      static: ajv.compile(loadSchema("traefik-v3.json")),
    };
  }
  return validators;
}

/** Problems of a dynamic (file provider) configuration object; empty when it is valid. */
export function validateDynamicConfig(config: unknown): ConfigIssue[] {
  return validate(compiledValidators().dynamic, config);
}

/** Problems of a static configuration object (traefik.yml); empty when it is valid. */
export function validateStaticConfig(config: unknown): ConfigIssue[] {
  return validate(compiledValidators().static, config);
}

export type ParsedConfig =
  | { ok: true; config: Record<string, unknown> }
  | { ok: false; errors: ConfigIssue[] };

/** Parses YAML text as a dynamic configuration and checks it against the file-provider schema. */
export function parseDynamicConfig(yamlText: string): ParsedConfig {
  return parseAndValidate(yamlText, validateDynamicConfig);
}

/** Parses YAML text as a static configuration (traefik.yml) and checks it against its schema. */
export function parseStaticConfig(yamlText: string): ParsedConfig {
  return parseAndValidate(yamlText, validateStaticConfig);
}

/** YAML text of a configuration object; long rules are never folded. */
export function toYaml(config: object): string {
  return stringify(config, { lineWidth: 0 });
}

function parseAndValidate(
  yamlText: string,
  validateConfig: (config: unknown) => ConfigIssue[],
): ParsedConfig {
  // resolveKnownTags off: no !!binary, !!set or !!timestamp; the result is plain JSON data.
  const document = parseDocument(yamlText, { prettyErrors: true, uniqueKeys: true, resolveKnownTags: false });
  // Warnings (such as an unresolved tag) are refused too: a configuration holds plain data only.
  const problems = [...document.errors, ...document.warnings];
  if (problems.length > 0) {
    return {
      ok: false,
      errors: problems.map((error) => ({
        path: "",
        message: `invalid YAML: ${error.message.split("\n")[0]!.replace(/:$/, "")}`,
      })),
    };
  }
  let config: unknown;
  try {
    config = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { ok: false, errors: [{ path: "", message: `invalid YAML: ${(error as Error).message}` }] };
  }
  if (config === null || config === undefined) {
    return { ok: false, errors: [{ path: "", message: "the configuration is empty" }] };
  }
  const errors = validateConfig(config);
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, config: config as Record<string, unknown> };
}

function validate(validateFunction: ValidateFunction, config: unknown): ConfigIssue[] {
  if (validateFunction(config)) return [];
  const issues = readableErrors(validateFunction.errors ?? []).map((error) => issueOf(error));
  const unique = new Map(issues.map((issue) => [`${issue.path}\u0000${issue.message}`, issue]));
  return [...unique.values()];
}

/**
 * Ajv reports a failed oneOf (a middleware or service holds exactly one kind: basicAuth,
 * stripPrefix, loadBalancer...) with an error from every branch that is not that kind. Those are
 * dropped: what stays are the errors inside the kind that applies, or the keys no kind accepts.
 */
function readableErrors(errors: ErrorObject[]): ErrorObject[] {
  let result = errors;
  for (const oneOf of errors.filter((error) => error.keyword === "oneOf")) {
    const wrongKind = (error: ErrorObject) =>
      error.keyword === "additionalProperties" &&
      error.instancePath === oneOf.instancePath &&
      error.schemaPath.startsWith(`${oneOf.schemaPath}/`);
    const refusedBy = new Map<string, number>();
    for (const error of result.filter(wrongKind)) {
      const key = String(error.params.additionalProperty);
      refusedBy.set(key, (refusedBy.get(key) ?? 0) + 1);
    }
    const branchCount = Array.isArray(oneOf.schema) ? oneOf.schema.length : 0;
    const unknownKeys = [...refusedBy].filter(([, count]) => count === branchCount).map(([key]) => key);
    const hasInnerErrors = result.some((error) => error.instancePath.startsWith(`${oneOf.instancePath}/`));

    result = result.filter((error) => !wrongKind(error) && error !== oneOf);
    for (const key of unknownKeys) {
      result.push({ ...oneOf, keyword: "additionalProperties", params: { additionalProperty: key } });
    }
    if (unknownKeys.length === 0 && !hasInnerErrors) {
      result.push({ ...oneOf, message: "must hold exactly one known kind (it holds none or several)" });
    }
  }
  return result;
}

function issueOf(error: ErrorObject): ConfigIssue {
  const segments = error.instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (error.keyword === "additionalProperties") {
    return { path: [...segments, String(error.params.additionalProperty)].join("."), message: "unknown key" };
  }
  if (error.keyword === "required") {
    return {
      path: [...segments, String(error.params.missingProperty)].join("."),
      message: "is required",
    };
  }
  return { path: segments.join("."), message: error.message ?? "is invalid" };
}
