import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["apps/*/src/**/*.test.ts", "packages/*/src/**/*.test.ts", "tests/**/*.test.ts"],
    // Starts (or reuses) PostgreSQL, NATS, Docker, the test images, registries and tools.
    globalSetup: ["tests/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Files share their worker's module cache: each would otherwise load the control plane's few
    // hundred modules again (seconds apiece, most of the suite's CPU time on two cores).
    isolate: false,
  },
});
