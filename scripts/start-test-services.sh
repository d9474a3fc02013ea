#!/usr/bin/env bash
# Makes sure the services the test suite talks to are up on 127.0.0.1: PostgreSQL (5432) and
# NATS with JetStream (4222). Starts each one that is down, installing Debian's package first when
# it is missing (a PostgreSQL installed here trusts local connections: a test-only cluster).
set -euo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for_port() {
  for _ in $(seq 1 60); do port_open "$1" && return 0; sleep 0.5; done
  echo "service on port $1 did not come up" >&2
  return 1
}

if ! port_open 5432; then
  installed=""
  if ! command -v pg_ctlcluster >/dev/null; then
    echo "installing postgresql"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    installed=yes
  fi
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  if [ -n "$installed" ]; then
    # A cluster made for the tests: local connections trusted, as TEST_DATABASE_URL's default
    # (user postgres, no password) expects.
    printf 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n' \
      >"/etc/postgresql/$version/main/pg_hba.conf"
  fi
  echo "starting PostgreSQL"
  if pg_ctlcluster --skip-systemctl-redirect "$version" main status >/dev/null 2>&1; then
    pg_ctlcluster --skip-systemctl-redirect "$version" main restart
  else
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
  fi
  wait_for_port 5432
fi

# The database of TEST_DATABASE_URL (each test file creates its own beside it) must exist.
TEST_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
if command -v psql >/dev/null && ! psql "$TEST_URL" -tAc "select 1" >/dev/null 2>&1; then
  name=${TEST_URL##*/}
  name=${name%%\?*}
  echo "creating the database $name"
  psql "${TEST_URL%/*}/postgres" -tAc "create database \"$name\"" >/dev/null ||
    { echo "PostgreSQL refuses $TEST_URL: set TEST_DATABASE_URL to a user that may create databases" >&2; exit 1; }
fi

if ! port_open 4222; then
  echo "starting NATS"
  if ! command -v nats-server >/dev/null && [ ! -x /usr/sbin/nats-server ]; then
    apt-get update -qq && apt-get install -y -qq nats-server
  fi
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for_port 4222
fi
echo "test services are up (postgres :5432, nats :4222)"
