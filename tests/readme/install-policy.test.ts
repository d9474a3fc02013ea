/**
 * No telemetry, no surprise build scripts: every installed package that ships an install script
 * is decided in pnpm-workspace.yaml (allowed or ignored), known install-telemetry packages are
 * never allowed to run, and packages that report usage at run time are not installed at all.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

/** Packages whose install script reports the install to a third party. */
const INSTALL_TELEMETRY = ["@scarf/scarf", "scarf", "@prisma/engines-telemetry", "checkpoint-client"];
/** Packages that report usage to their vendor at run time unless switched off. */
const RUNTIME_TELEMETRY = [
  "@redocly/cli",
  "@nuxt/telemetry",
  "@storybook/telemetry",
  "@angular/cli",
  "@vercel/analytics",
  "next-telemetry",
  "checkpoint-client",
];

/** The string items of a top-level list of pnpm-workspace.yaml (a flat YAML list). */
function yamlList(text: string, key: string): string[] {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.trimEnd() === `${key}:`);
  if (start < 0) return [];
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^\s*#/.test(line) || line.trim() === "") continue;
    const item = /^\s+-\s+(.+?)\s*$/.exec(line);
    if (!item) break;
    items.push(item[1]!.replace(/^["']|["']$/g, ""));
  }
  return items;
}

/** name → versions of every package in the lockfile's `packages:` section. */
function lockedPackages(): Map<string, Set<string>> {
  const lock = readFileSync(path.join(root, "pnpm-lock.yaml"), "utf8");
  const section = lock.slice(lock.indexOf("\npackages:\n"), lock.indexOf("\nsnapshots:\n"));
  const packages = new Map<string, Set<string>>();
  for (const match of section.matchAll(/^ {2}'?((?:@[^/\s]+\/)?[^@\s':]+)@([^':\s(]+)/gm)) {
    const [, name, version] = match as unknown as [string, string, string];
    if (!packages.has(name)) packages.set(name, new Set());
    packages.get(name)!.add(version);
  }
  return packages;
}

/** Installed packages (node_modules/.pnpm) whose manifest has an install-time script. */
function packagesWithInstallScripts(): string[] {
  const store = path.join(root, "node_modules/.pnpm");
  const found = new Set<string>();
  for (const entry of readdirSync(store)) {
    if (entry === "node_modules" || entry === "lock.yaml") continue;
    // "@scope+name@1.2.3_peer" → "@scope/name"
    const name = entry.replace(/@[^@]*$/, "").replace("+", "/");
    const manifest = path.join(store, entry, "node_modules", name, "package.json");
    if (!existsSync(manifest)) continue;
    const { scripts = {} } = JSON.parse(readFileSync(manifest, "utf8"));
    const hasGyp = existsSync(path.join(store, entry, "node_modules", name, "binding.gyp"));
    if (scripts.preinstall || scripts.install || scripts.postinstall || hasGyp) found.add(name);
  }
  return [...found].sort();
}

describe("install policy", () => {
  const workspace = readFileSync(path.join(root, "pnpm-workspace.yaml"), "utf8");
  const allowed = yamlList(workspace, "onlyBuiltDependencies");
  const ignored = yamlList(workspace, "ignoredBuiltDependencies");

  it("reads the lists it checks", () => {
    expect(allowed).toContain("esbuild");
    expect(ignored).toContain("@scarf/scarf");
    expect(lockedPackages().get("vitest")?.size).toBeGreaterThan(0);
  });

  it("never lets an install-telemetry package run", () => {
    for (const name of INSTALL_TELEMETRY) expect(allowed, name).not.toContain(name);
    expect(workspace).not.toMatch(/dangerouslyAllowAllBuilds:\s*true/);
    // Present in the tree (through swagger-ui-dist): then it must be explicitly ignored.
    const locked = lockedPackages();
    for (const name of INSTALL_TELEMETRY) {
      if (locked.has(name)) expect(ignored, `${name} is installed but not ignored`).toContain(name);
    }
  });

  it("installs no package that reports usage at run time", () => {
    const locked = lockedPackages();
    for (const name of RUNTIME_TELEMETRY) expect(locked.has(name), name).toBe(false);
  });

  it("decides every install script explicitly, so pnpm install warns about none", () => {
    const undecided = packagesWithInstallScripts().filter(
      (name) => !allowed.includes(name) && !ignored.includes(name),
    );
    expect(undecided).toEqual([]);
  });
});
