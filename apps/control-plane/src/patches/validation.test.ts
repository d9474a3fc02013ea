/** The checks of a patch's path and content at save (no database needed). */
import { describe, expect, it } from "vitest";
import {
  MAX_PATCH_CONTENT_BYTES,
  normalisePatchPath,
  patchContentSchema,
  patchPathProblem,
  patchPathSchema,
} from "./validation.ts";

describe("patch paths", () => {
  it.each([
    ["src/x.ts", "src/x.ts"],
    ["./src//x.ts", "src/x.ts"],
    ["Dockerfile", "Dockerfile"],
    ["a/.gitignore", "a/.gitignore"],
    ["dir\\file.txt", "dir/file.txt"],
    ["..hidden/file", "..hidden/file"],
  ])("accepts %j as %j", (raw, stored) => {
    expect(patchPathProblem(raw)).toBeNull();
    expect(normalisePatchPath(raw)).toBe(stored);
    expect(patchPathSchema.parse(raw)).toBe(stored);
  });

  it.each([
    ["", "must not be empty"],
    ["..", "must not contain '..'"],
    ["../x", "must not contain '..'"],
    ["a/../../x", "must not contain '..'"],
    ["a\\..\\x", "must not contain '..'"],
    ["/etc/passwd", "must be relative"],
    ["\\\\server\\share", "must be relative"],
    ["C:\\x", "must be relative"],
    ["a\u0000b", "control characters"],
    ["a\nb", "control characters"],
    ["a\u007fb", "control characters"],
    [".", "must name a file"],
    ["./", "must name a file"],
    [".git/config", "inside .git"],
    ["sub/.git/hooks/pre-commit", "inside .git"],
    ["a".repeat(1025), "at most 1024"],
  ])("refuses %j", (raw, problem) => {
    expect(patchPathProblem(raw)).toContain(problem);
    expect(patchPathSchema.safeParse(raw).success).toBe(false);
  });
});

describe("patch content", () => {
  it("is bounded in bytes (UTF-8), not characters", () => {
    expect(patchContentSchema.safeParse("x".repeat(MAX_PATCH_CONTENT_BYTES)).success).toBe(true);
    expect(patchContentSchema.safeParse("é".repeat(MAX_PATCH_CONTENT_BYTES / 2 + 1)).success).toBe(false);
  });

  it("refuses NUL", () => {
    expect(patchContentSchema.safeParse("a\u0000b").success).toBe(false);
  });
});
