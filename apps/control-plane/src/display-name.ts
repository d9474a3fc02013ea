/**
 * The one rule for display names (projects, environments, services, servers, SSH keys,
 * registries, organizations, users, API keys): 1 to `max` characters after trimming, and no
 * control characters (newlines, escapes), line or paragraph separators, or format characters
 * (Unicode category Cf: the bidirectional marks, zero-width spaces and joiners, U+FEFF, the soft
 * hyphen, tag characters), which would forge log lines or make a name read as another in a list
 * (issue 22 finding 8, issue 37 finding 9). Cf also holds the joiners of emoji sequences and
 * of Persian or Indic spelling: such a name is refused too, as an invisible difference between
 * two names is what this rule is for.
 */
import { z } from "zod";

/** C0/C1 controls and DEL, U+2028/U+2029, and every format character (bidi marks among them). */
const FORBIDDEN_IN_NAMES = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

export function displayName(max = 100) {
  return z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(max)
    .refine((name) => !FORBIDDEN_IN_NAMES.test(name), {
      message:
        "must not contain control, line-separator, bidirectional or other invisible formatting characters",
    });
}

export const displayNameSchema = displayName();
