/**
 * Turns a plain query string (`?limit=10&includeServices=false`) into the input object a
 * procedure's zod schema expects: each value is coerced by the type of its field, so a query
 * parses exactly like the same input sent as JSON. A value that does not read as its field's
 * type is passed on as text, so the schema's 400 names the field and the type it expects.
 */
import type { z } from "zod";

interface ZodInternals {
  _zod: {
    def: { type: string; innerType?: ZodInternals; in?: ZodInternals; shape?: Record<string, ZodInternals> };
  };
}

/** The schema below optional/nullable/default wrappers. */
function unwrap(schema: ZodInternals): ZodInternals {
  let current = schema;
  for (;;) {
    const def = current._zod.def;
    if (
      def.innerType &&
      ["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"].includes(def.type)
    ) {
      current = def.innerType;
    } else if (def.type === "pipe" && def.in) {
      current = def.in;
    } else {
      return current;
    }
  }
}

function coerceValue(field: ZodInternals | undefined, values: string[]): unknown {
  const last = values[values.length - 1] ?? "";
  if (!field) return last;
  const type = unwrap(field)._zod.def.type;
  if (last === "null" && field._zod.def.type === "nullable") return null;
  // Some generated clients send a number or boolean JSON-encoded as a string: `"12"`.
  const raw =
    (type === "number" || type === "int" || type === "boolean") && /^"[^"]*"$/.test(last)
      ? last.slice(1, -1)
      : last;
  switch (type) {
    case "number":
    case "int":
      // Left as text when it is not a number, so the 400 says the field expects a number.
      return raw.trim() === "" || Number.isNaN(Number(raw)) ? raw : Number(raw);
    case "boolean":
      return raw === "true" ? true : raw === "false" ? false : raw;
    case "array":
      if (values.length === 1 && raw.startsWith("[")) return parseJsonOr(raw);
      return values;
    case "object":
    case "record":
      return parseJsonOr(raw);
    default:
      return raw;
  }
}

function parseJsonOr(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Builds the input from query parameters; undefined when there are none. */
export function inputFromQuery(schema: z.ZodType, params: URLSearchParams): unknown {
  const keys = [...new Set(params.keys())];
  if (keys.length === 0) return undefined;
  const shape = unwrap(schema as unknown as ZodInternals)._zod.def.shape ?? {};
  return Object.fromEntries(keys.map((key) => [key, coerceValue(shape[key], params.getAll(key))]));
}
