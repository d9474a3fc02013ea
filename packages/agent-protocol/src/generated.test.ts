/**
 * src/generated is what `pnpm generate:protocol` makes of proto/agent.proto now: a .proto changed
 * without regenerating, or a generated file edited by hand, fails here.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const generator = fileURLToPath(new URL("../scripts/generate.mjs", import.meta.url));
const committed = fileURLToPath(new URL("./generated", import.meta.url));

async function filesOf(directory: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of (await readdir(directory)).sort()) {
    files[name] = await readFile(path.join(directory, name), "utf8");
  }
  return files;
}

describe("the generated protocol", () => {
  it("is what the generator makes of proto/agent.proto", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "protocol-generate-"));
    try {
      execFileSync(process.execPath, [generator, root], { stdio: "pipe" });
      const fresh = await filesOf(path.join(root, "packages/agent-protocol/src/generated"));
      expect(Object.keys(fresh)).toEqual(["agent.pb.ts", "commands.ts"]);
      expect(await filesOf(committed)).toEqual(fresh);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
