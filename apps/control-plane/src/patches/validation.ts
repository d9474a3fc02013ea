/**
 * What a patch may name and hold, checked at save (a 400 naming the field). Paths are the
 * tenant's input and end up as paths in a clone on a server: relative, no "..", no control
 * characters (NUL included), not inside `.git`. The agent checks them again and resolves them
 * inside the clone (apps/agent/src/deploy/patches.ts). Content is bounded so that a service's
 * enabled patches fit in one agent command.
 */
import { z } from "zod";

/** Bytes of one patch's content (the agent refuses more too). */
export const MAX_PATCH_CONTENT_BYTES = 256 * 1024;
/** Bytes of all the patches of one service (they travel in one build command). */
export const MAX_SERVICE_PATCH_BYTES = 512 * 1024;
export const MAX_PATCH_PATH_LENGTH = 1024;

/** Why `filePath` cannot be a patch's path, or null; otherwise `normalisePatchPath` names it. */
export function patchPathProblem(filePath: string): string | null {
  if (filePath.length === 0) return "must not be empty";
  if (filePath.length > MAX_PATCH_PATH_LENGTH) return `must be at most ${MAX_PATCH_PATH_LENGTH} characters`;
  for (let index = 0; index < filePath.length; index++) {
    const code = filePath.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return "must not contain control characters (NUL, newline…)";
  }
  if (filePath.startsWith("/") || filePath.startsWith("\\") || /^[A-Za-z]:/.test(filePath))
    return "must be relative to the repository's root";
  const parts = filePath.split(/[/\\]+/).filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) return "must not contain '..'";
  if (parts.length === 0) return "must name a file";
  if (parts.includes(".git")) return "must not be inside .git";
  return null;
}

/** The path as stored and sent: its parts joined with "/", without empty and "." parts. */
export function normalisePatchPath(filePath: string): string {
  return filePath
    .split(/[/\\]+/)
    .filter((part) => part !== "" && part !== ".")
    .join("/");
}

export const patchPathSchema = z
  .string()
  .superRefine((value, ctx) => {
    const problem = patchPathProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .transform(normalisePatchPath);

export const patchContentSchema = z
  .string()
  .refine((value) => Buffer.byteLength(value, "utf8") <= MAX_PATCH_CONTENT_BYTES, {
    message: `must be at most ${MAX_PATCH_CONTENT_BYTES} bytes`,
  })
  .refine((value) => !value.includes("\0"), { message: "must not contain NUL characters" });

export const patchTypeSchema = z.enum(["create", "update", "delete"]);
