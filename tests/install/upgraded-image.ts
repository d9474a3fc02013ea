/**
 * A newer release of the control plane for the upgrade tests: the repository's sources copied
 * into a temporary tree with one more migration at the end of the list, built there as a release
 * is (node_modules from the lock file, scripts/build.mjs), and its bundle put in place of the
 * one of an already built control plane image (the rest of the image does not change with a
 * migration).
 */
import { execFileSync } from "node:child_process";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const MIGRATIONS = "apps/control-plane/src/db/migrations";

/** Builds `tag` from `baseImage` with the migration `name` (a module exporting `up`) added. */
export async function buildImageWithMigration(
  baseImage: string,
  tag: string,
  name: string,
  source: string,
): Promise<void> {
  const tree = await mkdtemp(path.join(tmpdir(), "platform-upgraded-tree-"));
  try {
    const files = execFileSync(
      "git",
      [
        "ls-files",
        "--cached",
        "--others",
        "--exclude-standard",
        "--",
        "package.json",
        "pnpm-lock.yaml",
        "pnpm-workspace.yaml",
        "tsconfig.json",
        "apps",
        "packages",
        "proto",
        "scripts",
      ],
      { cwd: repoRoot, encoding: "utf8" },
    );
    execFileSync(
      "bash",
      [
        "-c",
        `tar -C ${JSON.stringify(repoRoot)} --ignore-failed-read -cf - -T - | tar -C ${JSON.stringify(tree)} -xf -`,
      ],
      {
        input: files,
        stdio: ["pipe", "ignore", "inherit"],
      },
    );
    await writeFile(path.join(tree, MIGRATIONS, `${name}.ts`), source);
    const index = path.join(tree, MIGRATIONS, "index.ts");
    const list = await readFile(index, "utf8");
    const withMigration = list
      .replace(/^(import \* as [^\n]+\n)(?!import)/m, `$1import * as upgradeTest from "./${name}.ts";\n`)
      .replace(/\n};\s*$/, `\n  ${JSON.stringify(name)}: upgradeTest,\n};\n`);
    if (
      !withMigration.includes(`${JSON.stringify(name)}: upgradeTest`) ||
      !withMigration.includes("as upgradeTest")
    )
      throw new Error(`could not add the migration to ${MIGRATIONS}/index.ts`);
    await writeFile(index, withMigration);

    const run = (command: string, args: string[]) =>
      execFileSync(command, args, {
        cwd: tree,
        stdio: ["ignore", "ignore", "inherit"],
        env: { ...process.env, CI: "true" },
      });
    run("npx", [
      "--yes",
      "pnpm@10.34.9",
      "install",
      "--frozen-lockfile",
      "--prefer-offline",
      "--config.confirmModulesPurge=false",
    ]);
    run("node", ["scripts/build.mjs", "--if-stale"]);

    const context = path.join(tree, "image");
    execFileSync("mkdir", ["-p", context]);
    await copyFile(path.join(tree, "dist/control-plane/main.js"), path.join(context, "main.js"));
    await writeFile(
      path.join(context, "Dockerfile"),
      `FROM ${baseImage}\nCOPY main.js /opt/platform/dist/control-plane/main.js\nLABEL platform.test.migration=${name}\n`,
    );
    execFileSync("docker", ["build", "--quiet", "--tag", tag, context], {
      stdio: ["ignore", "ignore", "inherit"],
    });
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
}
