/**
 * Dependencies point one way (issue 38 item 1): no source folder of the apps and packages holds a
 * runtime import cycle. Type-only imports are skipped (they are erased at build), as
 * `npx madge --circular --extensions ts --ts-config tsconfig.json <folder>` with madge's
 * `skipTypeImports` does; a cycle through a value import works only as long as each module reads
 * the other's exports late, and is refused here.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import madge from "madge";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const sourceFolders = ["apps", "packages"].flatMap((parent) =>
  readdirSync(path.join(root, parent)).map((name) => `${parent}/${name}/src`),
);

describe("no runtime import cycle (issue 38)", () => {
  it.each(sourceFolders)(
    "%s",
    async (folder) => {
      const graph = await madge(path.join(root, folder), {
        fileExtensions: ["ts", "tsx"],
        tsConfig: path.join(root, "tsconfig.json"),
        detectiveOptions: { ts: { skipTypeImports: true }, tsx: { skipTypeImports: true } },
      });
      const cycles = graph.circular().map((cycle) => cycle.join(" > "));
      expect(cycles, `runtime import cycles in ${folder}:\n${cycles.join("\n")}`).toEqual([]);
    },
    120_000,
  );
});
