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
