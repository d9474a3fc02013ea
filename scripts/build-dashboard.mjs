/**
 * Builds the web dashboard (apps/dashboard: Preact, TSX) with esbuild into dist/dashboard:
 * index.html, app.js (minified, for browsers of the last few years) and app.css. The control
 * plane serves them at `/` (apps/control-plane/src/dashboard/routes.ts). scripts/build.mjs calls
 * it as part of every build, `--if-stale` included; tests that open the page call it too.
 * Files are written beside and renamed into place, so a page being served never reads half a file.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = fileURLToPath(new URL("../", import.meta.url));
const sourceDir = path.join(root, "apps/dashboard/src");
export const DASHBOARD_OUT_DIR = path.join(root, "dist/dashboard");

function writeAtomically(file, contents) {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

export async function buildDashboard(outDir = DASHBOARD_OUT_DIR) {
  const result = await esbuild.build({
    entryPoints: [path.join(sourceDir, "main.tsx")],
    bundle: true,
    write: false,
    outdir: outDir,
    entryNames: "app",
    format: "esm",
    platform: "browser",
    target: ["chrome110", "firefox110", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    loader: { ".css": "css" },
  });
  mkdirSync(outDir, { recursive: true });
  const versions = [];
  for (const file of result.outputFiles) {
    writeAtomically(file.path, file.contents);
    versions.push(createHash("sha256").update(file.contents).digest("hex").slice(0, 12));
  }
  // The page's files carry a version of their content, so a new build is never mixed with an old one.
  const version = createHash("sha256").update(versions.join()).digest("hex").slice(0, 12);
  const html = readFileSync(path.join(sourceDir, "index.html"), "utf8").replaceAll("{{version}}", version);
  writeAtomically(path.join(outDir, "index.html"), html);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await buildDashboard();
}
