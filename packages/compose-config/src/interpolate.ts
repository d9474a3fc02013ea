/**
 * Variable interpolation as Compose does it, over the values of a parsed document (never over
 * YAML text, so a value cannot inject YAML structure): `$VAR`, `${VAR}`, `${VAR:-default}`
 * (unset or empty), `${VAR-default}` (unset), `${VAR:?error}` / `${VAR?error}` (required),
 * `${VAR:+alternative}` / `${VAR+alternative}`, defaults that hold further `${...}`, and `$$` for
 * a literal `$`. An unset variable without a default is the empty string (Compose warns; here it is
 * the same value). A lone `$` not followed by a name or `{` is an error, as in Compose.
 */
import { ComposeFileError, type ComposeIssue } from "./errors.ts";
import { parseYaml } from "./schema.ts";

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;

class InterpolationError extends Error {}

/** Interpolates one string value; `path` names it in errors. */
export function interpolateValue(value: string, env: Record<string, string>, path = ""): string {
  try {
    return interpolateText(value, env);
  } catch (error) {
    if (error instanceof InterpolationError) {
      throw new ComposeFileError([{ path, message: error.message }]);
    }
    throw error;
  }
}

/**
 * Interpolates every string value of a Compose document (or of Compose YAML text, parsed first)
 * with `env`; keys are left as they are, as in Compose. Every failing value is reported.
 */
export function interpolateCompose(
  input: string | Record<string, unknown>,
  env: Record<string, string>,
): Record<string, unknown> {
  const document = typeof input === "string" ? parseYaml(input) : input;
  const issues: ComposeIssue[] = [];
  const result = walk(document, [], env, issues);
  if (issues.length > 0) throw new ComposeFileError(issues);
  if (result === null || typeof result !== "object" || Array.isArray(result)) {
    throw new ComposeFileError([{ path: "", message: "a Compose file is a mapping of top-level keys" }]);
  }
  return result as Record<string, unknown>;
}

/**
 * The inverse of interpolation, for a file Compose or `docker stack deploy` reads: every `$` of
 * every string value written `$$`. Both interpolate the file again with the agent's own
 * environment; escaped, it reads back as exactly these values (those the checks saw). Keys stay
 * as they are: neither tool interpolates them, so a key already reads as written.
 */
export function escapeInterpolation(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll("$", () => "$$");
  if (Array.isArray(value)) return value.map(escapeInterpolation);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, escapeInterpolation(item)]));
  }
  return value;
}

function walk(value: unknown, path: string[], env: Record<string, string>, issues: ComposeIssue[]): unknown {
  if (typeof value === "string") {
    try {
      return interpolateText(value, env);
    } catch (error) {
      if (!(error instanceof InterpolationError)) throw error;
      issues.push({ path: path.join("."), message: error.message });
      return value;
    }
  }
  if (Array.isArray(value))
    return value.map((item, index) => walk(item, [...path, String(index)], env, issues));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = walk(item, [...path, key], env, issues);
    return out;
  }
  return value;
}

function lookup(env: Record<string, string>, name: string): string | undefined {
  return Object.hasOwn(env, name) ? env[name] : undefined;
}

function interpolateText(text: string, env: Record<string, string>): string {
  let out = "";
  let index = 0;
  while (index < text.length) {
    const dollar = text.indexOf("$", index);
    if (dollar === -1) {
      out += text.slice(index);
      break;
    }
    out += text.slice(index, dollar);
    const next = text[dollar + 1];
    if (next === "$") {
      out += "$";
      index = dollar + 2;
    } else if (next === "{") {
      const end = closingBrace(text, dollar + 2);
      out += substitute(text.slice(dollar + 2, end), env);
      index = end + 1;
    } else if (next !== undefined && NAME_START.test(next)) {
      let end = dollar + 2;
      while (end < text.length && NAME_PART.test(text[end]!)) end++;
      out += lookup(env, text.slice(dollar + 1, end)) ?? "";
      index = end;
    } else {
      throw new InterpolationError(
        `invalid interpolation format in "${text}": a "$" starts a variable; write "$$" for a literal "$"`,
      );
    }
  }
  return out;
}

/** Index of the `}` closing a `${` whose body starts at `start` (nested `${...}` counted). */
function closingBrace(text: string, start: number): number {
  let depth = 1;
  for (let index = start; index < text.length; index++) {
    const character = text[index];
    if (character === "$" && text[index + 1] === "$") {
      index++;
    } else if (character === "$" && text[index + 1] === "{") {
      depth++;
      index++;
    } else if (character === "}") {
      depth--;
      if (depth === 0) return index;
    }
  }
  throw new InterpolationError(`invalid interpolation format in "${text}": a "\${" is not closed`);
}

/** The value of one `${...}` body: NAME, then an optional operator and its word. */
function substitute(body: string, env: Record<string, string>): string {
  let end = 0;
  if (!NAME_START.test(body[0] ?? "")) {
    throw new InterpolationError(
      `invalid interpolation format: "\${${body}}" does not start with a variable name`,
    );
  }
  while (end < body.length && NAME_PART.test(body[end]!)) end++;
  const name = body.slice(0, end);
  const rest = body.slice(end);
  const value = lookup(env, name);
  if (rest === "") return value ?? "";
  const operator = /^(:-|-|:\?|\?|:\+|\+)/.exec(rest)?.[1];
  if (!operator) {
    throw new InterpolationError(
      `invalid interpolation format: "\${${body}}" has an unknown operator after ${name}`,
    );
  }
  const word = rest.slice(operator.length);
  const emptyCounts = operator.startsWith(":");
  const isSet = value !== undefined && (!emptyCounts || value !== "");
  switch (operator) {
    case ":-":
    case "-":
      return isSet ? (value as string) : interpolateText(word, env);
    case ":?":
    case "?": {
      if (isSet) return value as string;
      const message = interpolateText(word, env);
      throw new InterpolationError(
        `required variable ${name} is ${value === undefined ? "missing" : "empty"}${message ? `: ${message}` : ""}`,
      );
    }
    default:
      return isSet ? interpolateText(word, env) : "";
  }
}
