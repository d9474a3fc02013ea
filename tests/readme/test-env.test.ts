/**
 * The suite's own environment step (scripts/test-env.sh through tests/global-setup.ts): run
 * again once everything is up, it reuses all of it and says only that it is ready; when a
 * capability cannot be provided (here PostgreSQL refusing the configured user), it stops at
 * the first such step with one message naming it, and the global setup fails with that message.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import setup from "../global-setup.ts";

const root = path.resolve(import.meta.dirname, "../..");
const script = path.join(root, "scripts/test-env.sh");
const refusedUrl = "postgres://platform_no_such_role@127.0.0.1:5432/platform_no_such_db";

describe("the test environment step", () => {
  const saved = {
    TEST_DATABASE_URL: process.env.TEST_DATABASE_URL,
    PLATFORM_TEST_ENV: process.env.PLATFORM_TEST_ENV,
  };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("reuses what runs: a second run starts, installs and builds nothing", () => {
    const run = spawnSync("bash", [script], { encoding: "utf8", timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^test environment ready \(\d+ s\)\n$/);
  }, 150_000);

  it("stops at a capability it cannot provide with one message naming it", () => {
    const run = spawnSync("bash", [script], {
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, TEST_DATABASE_URL: refusedUrl },
    });
    expect(run.status).toBe(1);
    expect(run.stdout).not.toContain("ready");
    expect(run.stderr).toContain("The tests need PostgreSQL on 127.0.0.1:5432");
    expect(run.stderr).toContain(`PostgreSQL refuses ${refusedUrl}`);
    expect(run.stderr.match(/The tests need/g)).toHaveLength(1);
  }, 90_000);

  it("fails the global setup with that message, before any test runs", () => {
    process.env.TEST_DATABASE_URL = refusedUrl;
    delete process.env.PLATFORM_TEST_ENV;
    expect(() => setup()).toThrow(/The test environment is not ready\.\n[\s\S]*The tests need PostgreSQL/);
  }, 90_000);
});
