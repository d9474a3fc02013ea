#!/usr/bin/env bash
# The README's test command (`npm test`, or `npm test -- <files or vitest options>`): installs the dependencies
# with the pnpm version package.json pins (through npx, whatever pnpm is or is not installed
# globally) when node_modules is missing or older than a manifest or the lockfile, then runs
# vitest, whose global setup starts the test environment (scripts/test-env.sh).
# `scripts/test.sh --deps-only` installs the dependencies and stops (.ci/run does it first, so that
# the suites it runs side by side never install at the same time).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--" ]; then shift; fi

stamp=node_modules/.platform-installed
stale=false
if [ ! -f "$stamp" ]; then
  stale=true
else
  for manifest in pnpm-lock.yaml pnpm-workspace.yaml package.json apps/*/package.json packages/*/package.json; do
    if [ "$manifest" -nt "$stamp" ]; then stale=true; fi
  done
fi
if $stale; then
  pnpm_version=$(node -p "require('./package.json').packageManager.split('@')[1]")
  echo "installing the dependencies (pnpm $pnpm_version)"
  npx --yes "pnpm@$pnpm_version" install --frozen-lockfile </dev/null
  touch "$stamp"
fi
if [ "${1:-}" = "--deps-only" ]; then exit 0; fi
if [ $# -gt 0 ]; then exec node_modules/.bin/vitest run "$@"; fi

# The whole suite, in the two steps that keep it near 35 minutes on a 2-core machine: everything
# but tests/install on two workers (vitest would give it one there, and most files wait on Docker,
# Postgres or NATS rather than the CPU), then tests/install alone (the production stack's services
# waited on a saturated machine beside the other files). PLATFORM_TEST_WORKERS changes the count.
node_modules/.bin/vitest run --exclude 'tests/install/**' --maxWorkers="${PLATFORM_TEST_WORKERS:-2}"
exec node_modules/.bin/vitest run tests/install
