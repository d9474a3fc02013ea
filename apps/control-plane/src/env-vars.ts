/**
 * Environment variables as the API carries them (spec 2): a string of newline-separated
 * `KEY=VALUE` lines. One parser for every `env` field (project, environment, and later
 * services), and the merge that gives a service its inherited variables
 * (project -> environment -> service, later layers win).
 *
 * Format: blank lines and lines starting with `#` are skipped; a line is split at its first
 * `=`; the key is trimmed and must match ENV_KEY_PATTERN; the value is trimmed and one pair of
 * matching surrounding quotes (' or ") is removed. There are no inline comments and no
 * multi-line values. Error messages name the line number, never its content (values are often
 * secrets).
 */
import { z } from "zod";

export interface EnvVar {
  key: string;
  value: string;
}

export const ENV_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** At most this many bad lines are reported for one field. */
const MAX_REPORTED_ERRORS = 10;

export interface EnvLineError {
  /** 1-based line number. */
  line: number;
  message: string;
}

export class EnvSyntaxError extends Error {
  constructor(readonly errors: EnvLineError[]) {
    super(errors.map((e) => `line ${e.line}: ${e.message}`).join("; "));
    this.name = "EnvSyntaxError";
  }
}

type LineResult =
  | { kind: "skip" }
  | { kind: "var"; key: string; value: string }
  | { kind: "error"; message: string };

function parseLine(line: string): LineResult {
  const trimmed = line.trim();
  if (trimmed === "" || trimmed.startsWith("#")) return { kind: "skip" };
  const equals = trimmed.indexOf("=");
  if (equals === -1) return { kind: "error", message: "expected KEY=VALUE" };
  const key = trimmed.slice(0, equals).trim();
  if (key === "") return { kind: "error", message: "missing variable name before '='" };
  if (!ENV_KEY_PATTERN.test(key)) {
    return {
      kind: "error",
      message: "invalid variable name (use letters, digits, '_', '.' or '-', not starting with a digit)",
    };
  }
  return { kind: "var", key, value: unquote(trimmed.slice(equals + 1).trim()) };
}

function unquote(value: string): string {
  if (value.length >= 2) {
    const first = value[0];
    if ((first === '"' || first === "'") && value.endsWith(first)) return value.slice(1, -1);
  }
  return value;
}

function scan(text: string): { vars: EnvVar[]; errors: EnvLineError[] } {
  const vars: EnvVar[] = [];
  const errors: EnvLineError[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  for (const [index, line] of lines.entries()) {
    const result = parseLine(line);
    if (result.kind === "var") vars.push({ key: result.key, value: result.value });
    else if (result.kind === "error") errors.push({ line: index + 1, message: result.message });
  }
  return { vars, errors };
}

/** Every bad line of `text` (empty when it is valid). */
export function findEnvErrors(text: string): EnvLineError[] {
  return scan(text).errors;
}

/** The variables of `text` in order (a repeated key appears twice); throws EnvSyntaxError. */
export function parseEnv(text: string): EnvVar[] {
  const { vars, errors } = scan(text);
  if (errors.length > 0) throw new EnvSyntaxError(errors);
  return vars;
}

/** An `env` input field: a string whose every line is blank, a comment or KEY=VALUE. */
export const envSchema = z.string().superRefine((text, ctx) => {
  const errors = findEnvErrors(text);
  for (const error of errors.slice(0, MAX_REPORTED_ERRORS)) {
    ctx.addIssue({ code: "custom", message: `line ${error.line}: ${error.message}`, input: text });
  }
  if (errors.length > MAX_REPORTED_ERRORS) {
    ctx.addIssue({
      code: "custom",
      message: `${errors.length - MAX_REPORTED_ERRORS} more invalid lines`,
      input: text,
    });
  }
});

export type EnvLayer = string | readonly EnvVar[] | null | undefined;

/**
 * Merges layers of variables, later layers overriding earlier ones (for a service:
 * mergeEnv(project.env, environment.env, service.env)). Keys keep the position of their first
 * appearance; a key repeated inside one layer also takes its last value. Text layers are
 * parsed with parseEnv (and throw on bad lines); null and undefined layers are skipped.
 */
export function mergeEnv(...layers: EnvLayer[]): EnvVar[] {
  const merged = new Map<string, string>();
  for (const layer of layers) {
    if (layer === null || layer === undefined) continue;
    const vars = typeof layer === "string" ? parseEnv(layer) : layer;
    for (const { key, value } of vars) merged.set(key, value);
  }
  return [...merged].map(([key, value]) => ({ key, value }));
}
