/**
 * A service's patches (patch.*) applied to its fresh clone before the build: files written or
 * deleted with fs calls only (no shell). Each path is checked again here: relative, no "..", no
 * control characters; its directory is resolved with symlinks followed and must stay inside the
 * clone; the last part is never followed (a symlink there is replaced or deleted itself).
 */
import { lstat, mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SourcePatch } from "@platform/agent-protocol";
import type { LogStream } from "./log-stream.ts";
import { invalid, normaliseRelativePath, resolveInside } from "./validate.ts";

/** The control plane refuses more at save; the agent refuses a file bigger than this too. */
export const MAX_PATCH_CONTENT_BYTES = 256 * 1024;

const PATH_PROBLEMS = {
  "control characters": "must not contain control characters",
  absolute: "must be relative to the source root",
  parent: "must not contain '..'",
} as const;

/** Checks every patch before any is applied, so that a refused one leaves the clone untouched. */
export function checkSourcePatches(patches: readonly SourcePatch[]): string[] {
  return patches.map((patch, index) => {
    const field = `patches[${index}]`;
    const relative = normaliseRelativePath(patch.filePath, (problem) =>
      invalid(`${field}.filePath`, PATH_PROBLEMS[problem]),
    );
    if (!relative) throw invalid(`${field}.filePath`, "must name a file");
    if (relative.split("/").includes(".git")) throw invalid(`${field}.filePath`, "must not be inside .git");
    if (patch.type !== "create" && patch.type !== "update" && patch.type !== "delete")
      throw invalid(`${field}.type`, "must be create, update or delete");
    if (Buffer.byteLength(patch.content, "utf8") > MAX_PATCH_CONTENT_BYTES)
      throw invalid(`${field}.content`, `must be at most ${MAX_PATCH_CONTENT_BYTES} bytes`);
    return relative;
  });
}

async function entryKind(file: string): Promise<"missing" | "directory" | "other"> {
  try {
    return (await lstat(file)).isDirectory() ? "directory" : "other";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
}

export async function applySourcePatches(
  sourceDir: string,
  patches: readonly SourcePatch[],
  log: LogStream,
): Promise<void> {
  if (patches.length === 0) return;
  const relatives = checkSourcePatches(patches);
  log.line(`Applying ${patches.length} patch(es)…`);
  for (const [index, patch] of patches.entries()) {
    const relative = relatives[index] as string;
    const field = `patches[${index}].filePath`;
    const parent = await resolveInside(field, sourceDir, sourceDir, path.posix.dirname(relative));
    const file = path.join(parent, path.posix.basename(relative));
    const kind = await entryKind(file);
    if (kind === "directory") throw invalid(field, `${relative} is a directory in the repository`);
    if (patch.type === "delete") {
      if (kind === "missing") {
        log.line(`patch: ${relative} does not exist, nothing to delete`);
        continue;
      }
      await rm(file);
      log.line(`patch: deleted ${relative}`);
      continue;
    }
    await mkdir(parent, { recursive: true });
    // Re-checked once the directories exist: mkdir followed no link the check above had not seen.
    await resolveInside(field, sourceDir, sourceDir, path.posix.dirname(relative));
    if (kind !== "missing") await rm(file);
    await writeFile(file, patch.content, { flag: "wx", mode: 0o644 });
    log.line(`patch: ${kind === "missing" ? "created" : "replaced"} ${relative}`);
  }
}
