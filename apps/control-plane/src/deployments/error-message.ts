/**
 * A failed deployment's `errorMessage`: short enough to read in a list, but never without its
 * cause. Engines put the cause last ("... Bind for 0.0.0.0:8080 failed: port is already
 * allocated") and the stage first ("Deploy failed: ..."), so a long reason keeps its first line's
 * start and its last lines, cut between words with "…" where text was left out. The deployment's
 * log keeps the full text.
 */

/** Most characters an errorMessage holds. */
export const MAX_ERROR_MESSAGE_CHARS = 1000;
/** Most lines of a multi-line reason: its first line, a "…" line, and its last lines. */
const MAX_LINES = 8;
const GAP = " … ";

/** The errorMessage stored for a deployment that failed with `reason` (see the module comment). */
export function deploymentErrorMessage(reason: string, maxChars = MAX_ERROR_MESSAGE_CHARS): string {
  const lines = reason
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  if (lines.length === 0) return "The deployment failed";
  const kept = lines.length > MAX_LINES ? [lines[0]!, "…", ...lines.slice(-(MAX_LINES - 2))] : lines;
  const text = kept.join("\n");
  if (text.length <= maxChars) return text;
  // A third for the start (what failed), the rest for the end (why).
  const room = maxChars - GAP.length;
  const head = wordsFromStart(text, Math.floor(room / 3));
  const tail = wordsFromEnd(text, room - head.length);
  return `${head}${GAP}${tail}`;
}

/** The longest start of `text` within `max` characters that ends at the end of a word. */
function wordsFromStart(text: string, max: number): string {
  const cut = text.slice(0, max + 1);
  const space = cut.search(/\s\S*$/);
  // One word longer than the room (a digest, a path): cut it, there is no better place.
  return (space > 0 ? cut.slice(0, space) : cut.slice(0, max)).trimEnd();
}

/** The longest end of `text` within `max` characters that starts at the start of a word. */
function wordsFromEnd(text: string, max: number): string {
  const cut = text.slice(-(max + 1));
  const space = cut.search(/\s/);
  return (space >= 0 && space < cut.length - 1 ? cut.slice(space + 1) : cut.slice(-max)).trimStart();
}
