import { describe, expect, it } from "vitest";
import { escapeLogText } from "./log-text.ts";

describe("escapeLogText", () => {
  it("escapes CR, LF, ESC and every other C0, DEL and C1 character, keeping tabs and text", () => {
    expect(escapeLogText("ok\r\n2026-11-24T00:00:00.000Z Deployment done")).toBe(
      "ok\\r\\n2026-11-24T00:00:00.000Z Deployment done",
    );
    expect(escapeLogText("\u001b[31mred\u001b[0m")).toBe("\\x1b[31mred\\x1b[0m");
    expect(escapeLogText("a\u0000b\u0007c\u007fd\u0085e\u009bf")).toBe("a\\x00b\\x07c\\x7fd\\x85e\\x9bf");
    expect(escapeLogText("x\u2028y\u2029z")).toBe("x\\u2028y\\u2029z");
    expect(escapeLogText("tab\there, ünïcode ✓ and \\ backslash")).toBe(
      "tab\there, ünïcode ✓ and \\ backslash",
    );
  });

  it("leaves no control character behind", () => {
    let all = "";
    for (let code = 0; code < 0x100; code++) all += String.fromCharCode(code);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: checking that none is left
    expect(escapeLogText(all)).not.toMatch(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/);
  });
});
