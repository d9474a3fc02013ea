#!/usr/bin/env bash
# Starts the container registries the tests log in to, push to and pull from: Debian's
# docker-registry (CNCF Distribution 2.8) with htpasswd auth, in the background, data and logs
# under /tmp/platform-test-registry. Idempotent: installs (docker-registry here; htpasswd, openssl
# and curl through scripts/install-test-tools.sh), generates and starts only what is missing.
# Prints the addresses and the (test-only) credentials; `--self-test` also pushes
# platform-test/busybox:latest to the HTTP registry and pulls it back with the docker CLI.
# `--stop` stops both registries and removes their network namespace (`npm run test:env:stop`);
# their data stays under the directory above for the next start.
#
#   http  127.0.0.1:5050   plain HTTP (Docker treats 127.0.0.0/8 as an insecure registry)
#   tls   198.51.100.2:5443 TLS with a self-signed certificate, inside the network namespace
#         platform-test-registry that this script makes (a veth pair, 198.51.100.0/30 from the
#         documentation range). Docker skips certificate checks for 127.0.0.0/8, so only an
#         address outside loopback makes the engine refuse the unknown CA; a namespace of our
#         own keeps that traffic off every other network.
set -euo pipefail

BASE="${TEST_REGISTRY_DIR:-/tmp/platform-test-registry}"
HTTP_PORT="${TEST_REGISTRY_PORT:-5050}"
TLS_PORT="${TEST_REGISTRY_TLS_PORT:-5443}"
USERNAME="platform-test"
PASSWORD="platform-test-password"

NETNS=platform-test-registry
if [ "${1:-}" = "--stop" ]; then
  for name in http tls; do
    pid_file="$BASE/$name/registry.pid"
    if [ -s "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null; then echo "stopped the $name registry"; fi
    rm -f "$pid_file"
  done
  if [ -e "/run/netns/$NETNS" ]; then
    ip link del ptreg-host 2>/dev/null || true
    ip netns del "$NETNS"
    echo "removed the network namespace $NETNS"
  fi
  exit 0
fi

# htpasswd, openssl and curl, shared with the tests (quick when present; its output on stderr
# keeps stdout to the lines below).
bash "$(dirname "$0")/install-test-tools.sh" >&2
if ! command -v docker-registry >/dev/null; then
  echo "installing docker-registry"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-registry >/dev/null
fi

mkdir -p "$BASE"
if [ ! -s "$BASE/htpasswd" ]; then
  htpasswd -Bbn "$USERNAME" "$PASSWORD" >"$BASE/htpasswd"
fi

TLS_HOST=198.51.100.2
if [ ! -e "/run/netns/$NETNS" ]; then
  echo "making the network namespace $NETNS ($TLS_HOST)"
  ip netns add "$NETNS"
  ip link add ptreg-host type veth peer name ptreg-ns
  ip link set ptreg-ns netns "$NETNS"
  ip addr add 198.51.100.1/30 dev ptreg-host
  ip link set ptreg-host up
  ip netns exec "$NETNS" ip addr add "$TLS_HOST/30" dev ptreg-ns
  ip netns exec "$NETNS" ip link set ptreg-ns up
  ip netns exec "$NETNS" ip link set lo up
fi

if [ ! -s "$BASE/tls.crt" ] || ! openssl x509 -in "$BASE/tls.crt" -noout -text | grep -q "IP Address:$TLS_HOST"; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=platform-test-registry" \
    -addext "subjectAltName=IP:$TLS_HOST,IP:127.0.0.1" \
    -keyout "$BASE/tls.key" -out "$BASE/tls.crt" 2>/dev/null
fi

# write_config <name> <listen address> [tls]: a changed configuration stops the running instance.
write_config() {
  local name=$1 addr=$2 tls=${3:-} config="$BASE/$1/config.yml"
  mkdir -p "$BASE/$name/data"
  {
    echo "version: 0.1"
    echo "log: {level: info}"
    echo "storage:"
    echo "  filesystem: {rootdirectory: $BASE/$name/data}"
    echo "  delete: {enabled: true}"
    echo "http:"
    echo "  addr: $addr"
    echo "  secret: platform-test-only"
    if [ -n "$tls" ]; then
      echo "  tls: {certificate: $BASE/tls.crt, key: $BASE/tls.key}"
    fi
    echo "auth:"
    echo "  htpasswd: {realm: platform-test, path: $BASE/htpasswd}"
  } >"$config.new"
  if ! cmp -s "$config.new" "$config"; then
    if [ -s "$BASE/$name/registry.pid" ]; then kill "$(cat "$BASE/$name/registry.pid")" 2>/dev/null || true; fi
    rm -f "$BASE/$name/registry.pid"
  fi
  mv "$config.new" "$config"
}

# start <name> [command prefix…]: runs the instance unless its pid file names a live process.
start() {
  local name=$1 pid_file="$BASE/$1/registry.pid" log="$BASE/$1/registry.log"
  shift
  if [ -s "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
    return
  fi
  echo "starting the $name registry (log: $log)"
  nohup "$@" docker-registry serve "$BASE/$name/config.yml" >>"$log" 2>&1 </dev/null &
  echo $! >"$pid_file"
}

# wait_up <url>: the registry answers /v2/ (401 without credentials) once it is ready.
wait_up() {
  for _ in $(seq 1 100); do
    code=$(curl -sk -o /dev/null -w '%{http_code}' "$1" || true)
    [ "$code" = "401" ] && return 0
    sleep 0.1
  done
  echo "the registry at $1 did not come up" >&2
  return 1
}

write_config http "127.0.0.1:$HTTP_PORT"
write_config tls "$TLS_HOST:$TLS_PORT" tls
start http
start tls ip netns exec "$NETNS"
wait_up "http://127.0.0.1:$HTTP_PORT/v2/"
wait_up "https://$TLS_HOST:$TLS_PORT/v2/"

echo "TEST_REGISTRY=127.0.0.1:$HTTP_PORT"
echo "TEST_REGISTRY_TLS=$TLS_HOST:$TLS_PORT"
echo "TEST_REGISTRY_USERNAME=$USERNAME"
echo "TEST_REGISTRY_PASSWORD=$PASSWORD"

if [ "${1:-}" = "--self-test" ]; then
  # A throwaway docker config, so the login does not touch the caller's ~/.docker.
  config_dir=$(mktemp -d)
  trap 'rm -rf "$config_dir"' EXIT
  image="127.0.0.1:$HTTP_PORT/platform-test/self-test:latest"
  echo "$PASSWORD" | docker --config "$config_dir" login -u "$USERNAME" --password-stdin "127.0.0.1:$HTTP_PORT" >/dev/null 2>&1
  docker tag platform-test/busybox:latest "$image"
  docker --config "$config_dir" push "$image" >/dev/null
  docker rmi "$image" >/dev/null
  docker --config "$config_dir" pull "$image" >/dev/null
  docker rmi "$image" >/dev/null
  echo "self-test: pushed and pulled $image"
fi
