#!/usr/bin/env node
/**
 * Writes tests/compat/cli-options.json: for each procedure the Dokploy CLI calls, the option
 * names it can send as the procedure's input (facts read from the CLI's generated commands).
 *
 *   node scripts/cli-options.mjs [path/to/unpacked/package]
 *
 * Without a path it fetches @dokploy/cli at the pinned version with `npm pack` into a temporary
 * folder. The fixture is committed, so tests and CI never need the CLI.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "0.30.7";
const root = dirname(dirname(fileURLToPath(import.meta.url)));

function packageFolder() {
  if (process.argv[2]) return { folder: process.argv[2], cleanup: () => {} };
  const scratch = mkdtempSync(join(tmpdir(), "dokploy-cli-"));
  const file = execFileSync("npm", ["pack", `@dokploy/cli@${VERSION}`, "--silent"], {
    cwd: scratch,
    encoding: "utf8",
  }).trim();
  execFileSync("tar", ["-xzf", file], { cwd: scratch });
  return {
    folder: join(scratch, "package"),
    cleanup: () => rmSync(scratch, { recursive: true, force: true }),
  };
}

const { folder, cleanup } = packageFolder();
try {
  const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  const source = readFileSync(join(folder, "dist/generated/commands.js"), "utf8");
  const procedures = {};
  // Each subcommand is one `.command('x')` block ending at the api call it makes.
  for (const block of source.split(/\.command\('/).slice(1)) {
    const call = /api(?:Get|Post)\("([\w.]+)"/.exec(block);
    if (!call) continue;
    const options = [...block.matchAll(/\.(required)?[oO]ption\('--(\w+)/g)]
      .filter((match) => match[2] !== "json")
      .map((match) => (match[1] ? `${match[2]}*` : match[2]));
    procedures[call[1]] = [...new Set(options)].sort();
  }
  const sorted = Object.fromEntries(Object.entries(procedures).sort(([a], [b]) => a.localeCompare(b)));
  const fixture = { cli: `@dokploy/cli@${manifest.version}`, procedures: sorted };
  writeFileSync(join(root, "tests/compat/cli-options.json"), `${JSON.stringify(fixture, null, 2)}\n`);
  console.log(`${Object.keys(sorted).length} procedures from @dokploy/cli@${manifest.version}`);
} finally {
  cleanup();
}
