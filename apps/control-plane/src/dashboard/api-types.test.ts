/**
 * apps/dashboard/src/generated/api-types.ts is what `pnpm generate:api-types` makes of the OpenAPI
 * document now: a procedure added or a schema changed without regenerating, or the generated file
 * edited by hand, fails here (and the dashboard's types, apps/dashboard/src/api.ts, come from it).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const committed = path.join(root, "apps/dashboard/src/generated/api-types.ts");

describe("the dashboard's generated API types", () => {
  it("are what the generator makes of the control plane's OpenAPI document now", async () => {
    const directory = await mkdtemp(path.join(tmpdir(), "api-types-generate-"));
    try {
      const fresh = path.join(directory, "api-types.ts");
      execFileSync(
        path.join(root, "node_modules/.bin/tsx"),
        [path.join(root, "scripts/generate-api-types.ts"), fresh],
        { cwd: root, stdio: "pipe" },
      );
      const generated = await readFile(fresh, "utf8");
      // The answer of a procedure the dashboard reads is in it, keyed by the procedure's name.
      expect(generated).toContain('"project.all": {');
      expect(await readFile(committed, "utf8")).toBe(generated);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }, 120_000);
});
