/** Small readers for the loosely typed values of a parsed Compose document. */

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The entries of a mapping (`networks:`, `volumes:`); none when absent. Null entries (`db:`) read as {}. */
export function entriesOf(value: unknown): [string, Record<string, unknown> | null][] {
  const record = asRecord(value);
  if (!record) return [];
  return Object.entries(record).map(([key, entry]) => [key, asRecord(entry) ?? null]);
}

export function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `labels`/`environment`-style values (a list of `K=V` or a mapping) as a mapping of strings. */
export function mappingOf(value: unknown): Record<string, string> {
  if (Array.isArray(value)) {
    const out: Record<string, string> = {};
    for (const item of value) {
      const text = String(item);
      const equals = text.indexOf("=");
      if (equals === -1) out[text] = "";
      else out[text.slice(0, equals)] = text.slice(equals + 1);
    }
    return out;
  }
  const record = asRecord(value);
  if (!record) return {};
  return Object.fromEntries(
    Object.entries(record).map(([key, item]) => [
      key,
      item === null || item === undefined ? "" : String(item),
    ]),
  );
}

export function deepClone<T>(value: T): T {
  return structuredClone(value);
}

const TRUE_WORDS = /^(y|yes|true|on)$/i;
const FALSE_WORDS = /^(n|no|false|off)$/i;

/** A boolean written as a string (what interpolation yields) read as Compose reads it; other values unchanged. */
export function booleanOf(value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (TRUE_WORDS.test(value.trim())) return true;
  if (FALSE_WORDS.test(value.trim())) return false;
  return value;
}

const SERVICE_BOOLEANS = [
  "privileged",
  "read_only",
  "init",
  "tty",
  "stdin_open",
  "oom_kill_disable",
  "use_api_socket",
];
const ENTRY_BOOLEANS = ["external", "internal", "attachable", "enable_ipv4", "enable_ipv6"];

/**
 * The boolean fields of an interpolated document as booleans (`privileged: ${P}` → true), in
 * place, so that checks and the v3 format see what Compose will. Returns the paths of values that
 * are no boolean word (Compose refuses them too).
 */
export function castBooleans(document: Record<string, unknown>): string[][] {
  const invalid: string[][] = [];
  const cast = (entry: Record<string, unknown>, keys: string[], path: string[]) => {
    for (const key of keys) {
      if (!(key in entry)) continue;
      entry[key] = booleanOf(entry[key]);
      if (typeof entry[key] === "string") invalid.push([...path, key]);
    }
  };
  for (const [name, raw] of Object.entries(asRecord(document.services) ?? {})) {
    const service = asRecord(raw);
    if (service) cast(service, SERVICE_BOOLEANS, ["services", name]);
  }
  for (const section of ["networks", "volumes", "secrets", "configs"]) {
    for (const [name, raw] of Object.entries(asRecord(document[section]) ?? {})) {
      const entry = asRecord(raw);
      if (entry) cast(entry, ENTRY_BOOLEANS, [section, name]);
    }
  }
  return invalid;
}
