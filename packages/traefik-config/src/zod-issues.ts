import type { z } from "zod";
import type { ConfigIssue } from "./errors.ts";

/** zod's issues as ConfigIssues, their paths dotted and prefixed with `prefix` when given. */
export function zodIssues(error: z.ZodError, prefix?: string): ConfigIssue[] {
  return error.issues.map((issue) => ({
    path: [...(prefix ? [prefix] : []), ...issue.path.map(String)].join("."),
    message: issue.message,
  }));
}
