/**
 * The one rule for display names (projects, environments, services, servers, SSH keys,
 * registries, organizations, users, API keys): 1 to `max` characters after trimming, and no
 * control characters (newlines, escapes), line or paragraph separators, or bidirectional
 * formatting characters, which would forge log lines or make a name read as another in a list
 * (issue 22 finding 8).
 */
import { z } from "zod";

/** C0/C1 controls and DEL, U+2028/U+2029, and the bidi marks, embeddings, overrides and isolates. */
const FORBIDDEN_IN_NAMES = /[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

export function displayName(max = 100) {
  return z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(max)
    .refine((name) => !FORBIDDEN_IN_NAMES.test(name), {
      message: "must not contain control, line-separator or bidirectional formatting characters",
    });
}

export const displayNameSchema = displayName();
