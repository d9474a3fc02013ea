/**
 * Text from outside (webhook payloads, commit messages, container and build output) on its way
 * into a log: every control character is written as a visible escape, so nobody can forge a log
 * line (CR, LF), repaint a terminal (ESC and ANSI sequences) or hide text (other C0, DEL, C1,
 * the Unicode line and paragraph separators). A tab stays a tab. Shared by control plane and
 * agent: the one function wherever outside text enters a log.
 *
 * @example
 * escapeLogText("ok\r\n2026-01-01 Deployment done\u001b[31m") // "ok\\r\\n2026-01-01 Deployment done\\x1b[31m"
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters escaped
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/g;

const NAMED: Record<string, string> = { "\r": "\\r", "\n": "\\n", "\u001b": "\\x1b" };

function escapeOne(character: string): string {
  const named = NAMED[character];
  if (named) return named;
  const code = character.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with every control character but the tab escaped (one log line, whatever it held). */
export function escapeLogText(text: string): string {
  return text.replace(CONTROL, escapeOne);
}
