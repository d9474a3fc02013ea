/**
 * Package boundaries (issue 38 item 5): this machine's agent runs inside the control plane, so
 * its composition root (main.ts, context-builder.ts) and agents/ may import the agent app; no other
 * file of the control plane does. What both sides need (the S3 transfer code, the proxy's file
 * layout, the agent's version) lives in packages named for what they do.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const source = path.join(root, "apps/control-plane/src");

/** Where the agent app may be imported: the composition root, agents/ and test support. */
const mayImportAgent = (relative: string) =>
  relative.startsWith("agents/") ||
  relative.split("/").includes("testing") ||
  relative === "main.ts" ||
  relative === "context-builder.ts" ||
  relative.endsWith(".test.ts");

const AGENT_IMPORT = /\bfrom\s+["'](?:@platform\/agent(?:\/[^"']*)?|(?:\.\.\/)+(?:apps\/)?agent\/[^"']*)["']/;

describe("package boundaries (issue 38)", () => {
  it("no control-plane file outside agents/, main.ts, context-builder.ts and test support imports the agent app", () => {
    const files = readdirSync(source, { recursive: true, encoding: "utf8" }).filter((file) =>
      file.endsWith(".ts"),
    );
    expect(files.length).toBeGreaterThan(300);
    const offenders = files
      .filter((file) => !mayImportAgent(file))
      .filter((file) => AGENT_IMPORT.test(readFileSync(path.join(source, file), "utf8")));
    expect(offenders).toEqual([]);
  });

  it("the rule sees an import of the agent app (it would fail on one)", () => {
    expect(AGENT_IMPORT.test('import { startAgent } from "@platform/agent";')).toBe(true);
    expect(AGENT_IMPORT.test('import { X } from "@platform/agent/proxy/paths.ts";')).toBe(true);
    expect(AGENT_IMPORT.test('import { X } from "../../../agent/src/core.ts";')).toBe(true);
    expect(AGENT_IMPORT.test('import { X } from "@platform/agent-protocol";')).toBe(false);
  });
});
