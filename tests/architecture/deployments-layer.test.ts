/**
 * deployments/ knows no feature (issue 38 item 1): it holds the queue, the worker, the step frame
 * and the registries each feature fills from the composition root (features.ts). Its source files
 * import, besides one another, only the shared infrastructure listed here; an import of a feature
 * folder (applications/, servers/, registries/, ...) fails this test. Test files are free to
 * start a whole platform.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const source = path.resolve(import.meta.dirname, "../../apps/control-plane/src");
const deployments = path.join(source, "deployments");

/** Shared infrastructure, relative to apps/control-plane/src: a folder (trailing /) or a file. */
const INFRASTRUCTURE = [
  "agents/", // the agents' client, hub and its errors
  "crypto/", // ids
  "db/", // the database and its schema
  "config.ts",
  "context.ts", // ServiceContext, Caller
  "env-vars.ts", // parsing and merging of variables
  "errors.ts", // API errors
];

const IMPORT = /\b(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

/** The imports of `file` (in deployments/) that leave deployments/ for no infrastructure. */
function featureImports(file: string, text: string): string[] {
  return [...text.matchAll(IMPORT)]
    .map((match) => path.relative(source, path.resolve(path.dirname(file), match[1] as string)))
    .filter((target) => !target.startsWith("deployments/"))
    .filter(
      (target) =>
        !INFRASTRUCTURE.some(
          (allowed) => target === allowed || (allowed.endsWith("/") && target.startsWith(allowed)),
        ),
    );
}

describe("deployments/ imports no feature (issue 38)", () => {
  it("no non-test file of deployments/ imports a folder other than the shared infrastructure", () => {
    const files = readdirSync(deployments, { recursive: true, encoding: "utf8" }).filter(
      (file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.split("/").includes("testing"),
    );
    expect(files.length).toBeGreaterThan(10);
    const offenders = files.flatMap((file) => {
      const absolute = path.join(deployments, file);
      return featureImports(absolute, readFileSync(absolute, "utf8")).map((target) => `${file} -> ${target}`);
    });
    expect(offenders).toEqual([]);
  });

  it("the rule sees an import of a feature (it would fail on one) and lets infrastructure through", () => {
    const file = path.join(deployments, "worker.ts");
    expect(featureImports(file, 'import { findServer } from "../servers/repository.ts";')).toEqual([
      "servers/repository.ts",
    ]);
    expect(featureImports(file, 'import type { X } from "../applications/views.ts";')).toEqual([
      "applications/views.ts",
    ]);
    expect(featureImports(file, 'const m = await import("../registries/repository.ts");')).toEqual([
      "registries/repository.ts",
    ]);
    expect(
      featureImports(
        file,
        [
          'import type { ServiceContext } from "../context.ts";',
          'import type { Db } from "../db/database.ts";',
          'import { LOCAL_SERVER_ID } from "../agents/hub.ts";',
          'import { recordEvent } from "./events.ts";',
        ].join("\n"),
      ),
    ).toEqual([]);
  });
});
