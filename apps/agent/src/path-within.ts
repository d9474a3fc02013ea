/** Lexical containment of paths, shared by the checks that keep file access below a root. */
import path from "node:path";

/** True when `candidate` is `root` itself or below it (both absolute and normalised). */
export function isWithin(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(`${root}${path.sep}`);
}
