/**
 * The README's commands work as written, without questions and whatever pnpm is installed
 * globally: its install command pins the pnpm version package.json pins (through `npx --yes`),
 * `.ci/run` runs the README's test command, and with a global pnpm 12 first on PATH (a fake one
 * that refuses, as pnpm 12 does with this project) `npx --yes pnpm@<pinned>` still runs the
 * pinned version and `npm start` still starts the control plane, with no terminal attached.
 */
import { type ChildProcess, execFile } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnNpmStart } from "../support/npm-start.ts";

const root = path.resolve(import.meta.dirname, "../..");

describe("the README's commands", () => {
  let readme: string;
  let pinned: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    readme = await readFile(path.join(root, "README.md"), "utf8");
    const manifest = JSON.parse(await readFile(path.join(root, "package.json"), "utf8"));
    pinned = manifest.packageManager.replace(/^pnpm@/, "");
    dir = await mkdtemp(path.join(tmpdir(), "platform-readme-"));
    // The embedded PostgreSQL's system user (the test runs as root) enters the data directory here.
    await chmod(dir, 0o755);
    // A global pnpm of another major, first on PATH, and an npm global prefix without pnpm.
    await writeFile(
      path.join(dir, "pnpm"),
      '#!/bin/sh\nif [ "$1" = "--version" ]; then echo 12.21.0; exit 0; fi\necho "Cannot use the pnpm version this project pins" >&2\nexit 1\n',
    );
    await chmod(path.join(dir, "pnpm"), 0o755);
    env = { ...process.env, PATH: `${dir}:${process.env.PATH}`, NPM_CONFIG_PREFIX: path.join(dir, "global") };
    // The README's start has no database or NATS configured: the control plane's defaults.
    for (const name of ["npm_config_user_agent", "DATABASE_URL", "NATS_URL", "NATS_CREDS", "PORT", "HOST"]) {
      delete env[name];
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("installs with the pinned pnpm through npx --yes, and starts and tests with npm", () => {
    const quickStart = readme.slice(readme.indexOf("## Set up and run"), readme.indexOf("## Walk-through"));
    expect(quickStart).toContain(`npx --yes pnpm@${pinned} install\nnpm start\n`);
    const test = readme.slice(readme.indexOf("## Test"));
    expect(test).toMatch(/```sh\nnpm test\n```/);
  });

  it("is what .ci/run runs", async () => {
    const ci = await readFile(path.join(root, ".ci/run"), "utf8");
    expect(ci).toMatch(/^npm test\b/m);
    const testScript = await readFile(path.join(root, "scripts/test.sh"), "utf8");
    expect(testScript).toContain('npx --yes "pnpm@$pnpm_version" install --frozen-lockfile');
  });

  it("runs the pinned pnpm with a global pnpm 12 first on PATH, without a terminal", async () => {
    const { stdout } = await promisify(execFile)("npx", ["--yes", `pnpm@${pinned}`, "--version"], {
      cwd: root,
      env,
      timeout: 120_000,
    });
    expect(stdout.trim()).toBe(pinned);
  }, 150_000);

  describe("npm start", () => {
    let child: ChildProcess | undefined;
    afterAll(async () => {
      if (child?.pid) process.kill(-child.pid, "SIGKILL");
      // The embedded server outlives a killed control plane (the next start would reuse it).
      const pidFile = path.join(dir, "data", "postgres", "postmaster.pid");
      const postmaster = Number((await readFile(pidFile, "utf8").catch(() => "")).split("\n")[0]);
      if (postmaster) process.kill(postmaster, "SIGKILL");
    });

    it("starts the control plane on the embedded PostgreSQL with the fake pnpm 12 first on PATH", async () => {
      const started = await spawnNpmStart(root, env, path.join(dir, "data"));
      child = started.child;
      const { port } = started;
      const output = await started.listening(60_000);
      expect(output).toContain(`Platform control plane listening on http://127.0.0.1:${port}`);
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      // npm start built the dashboard with the rest and serves it at / (issue 29).
      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(page.status).toBe(200);
      const script = (await page.text()).match(/src="(\/dashboard\/app\.js[^"]*)"/)?.[1];
      expect(script).toBeDefined();
      expect((await fetch(`http://127.0.0.1:${port}${script}`)).status).toBe(200);
    }, 90_000);
  });
});
