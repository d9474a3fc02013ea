#!/usr/bin/env bash
# The whole test environment in one idempotent step, run by the suite's global setup
# (tests/global-setup.ts) before any test: PostgreSQL and NATS, a Docker Engine in Swarm mode
# with platform-network, the local test images, the command-line tools, the test registries,
# OpenSSH's sshd and Debian's chromium. Each step is one of the scripts beside this one and
# reuses what already runs or exists (about a second when everything is up).
#
# Quiet unless a step does something (installs, starts, builds). When a step cannot be done, it
# stops at once with one message naming what is missing and the step's own output.
set -uo pipefail
cd "$(dirname "$0")"

LOG=$(mktemp)
# Several test runs may set up at once (parallel checkouts on one machine): apt-get waits for
# another's dpkg lock instead of failing at once.
APT_CONFIG=$(mktemp)
echo 'DPkg::Lock::Timeout "600";' >"$APT_CONFIG"
export APT_CONFIG
trap 'rm -f "$LOG" "$APT_CONFIG"' EXIT
started=$(date +%s)

# step <what the tests need> <command…>
step() {
  local what=$1
  shift
  if ! "$@" >"$LOG" 2>&1 </dev/null; then
    {
      echo
      echo "The tests need $what, and it could not be provided ($*):"
      tail -n 15 "$LOG" | sed 's/^/  | /'
      if [ "$(id -u)" -ne 0 ]; then
        echo "  Installing or starting it needs root (apt-get on Debian/Ubuntu): run the tests once as root,"
        echo "  or provide it yourself."
      fi
      echo "  (PLATFORM_TEST_ENV=skip runs the tests without this check.)"
    } >&2
    exit 1
  fi
  # What a step did (the scripts say "installing …", "starting …", "building …").
  grep -iE '^(installing|starting|building|creating|initialising|making)' "$LOG" || true
}

chromium_ready() {
  command -v chromium >/dev/null && return 0
  echo "installing chromium"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
}

step "PostgreSQL on 127.0.0.1:5432 and NATS with JetStream on 127.0.0.1:4222" bash start-test-services.sh
step "a Docker Engine in Swarm mode with the platform-network overlay" bash docker-setup.sh
step "the local test image platform-test/busybox" bash build-test-images.sh
step "the local test image platform-test/netclient" bash build-netclient-image.sh
step "the local test image platform-test/static-httpd" bash build-static-test-image.sh
step "the local test image platform-test/traefik-standin" bash build-traefik-standin-image.sh
step "the local database test images platform-test/db-postgres, db-mariadb, db-redis, db-mongo-standin" bash build-database-images.sh
step "htpasswd, openssl and curl" bash install-test-tools.sh
step "the test registries on 127.0.0.1:5050 and 198.51.100.2:5443" bash start-test-registry.sh
step "OpenSSH's sshd (/usr/sbin/sshd)" bash start-test-sshd.sh
step "Debian's chromium (the API reference page test)" chromium_ready

echo "test environment ready ($(($(date +%s) - started)) s)"
