#!/usr/bin/env bash
# Makes sure the services the test suite talks to are up on 127.0.0.1: PostgreSQL (5432) and
# NATS with JetStream (4222). Starts each one that is down, with the machine's own packages.
set -euo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for_port() {
  for _ in $(seq 1 60); do port_open "$1" && return 0; sleep 0.5; done
  echo "service on port $1 did not come up" >&2
  return 1
}

if ! port_open 5432; then
  echo "starting PostgreSQL"
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
  else
    echo "PostgreSQL is not installed: apt-get install -y postgresql" >&2
    exit 1
  fi
  wait_for_port 5432
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
