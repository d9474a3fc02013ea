/** Lexical containment of paths, shared by the checks that keep file access below a root. */
import path from "node:path";

/** True when `candidate` is `root` itself or below it (both absolute and normalised). */
export function isWithin(root: string, candidate: string): boolean {
  // "/" already ends with the separator: "//" would refuse every path below the host's root.
  const prefix = root.endsWith(path.sep) ? root : `${root}${path.sep}`;
  return candidate === root || candidate.startsWith(prefix);
}
