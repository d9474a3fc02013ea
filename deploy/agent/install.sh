#!/bin/sh
# Platform agent bootstrap for Debian and Ubuntu hosts. Downloads the agent (one executable for
# this machine's architecture, checked against the control plane's sha256 before anything on the
# host changes), installs what is missing from the distribution (curl, Docker's docker.io, git),
# joins Swarm and the `platform-network` overlay network, and runs the agent: as the systemd
# unit platform-agent when systemd runs, otherwise as a background process with a pid file.
# Running it again changes nothing when nothing changed (same executable, unit and identity, no
# restart); when the control plane serves a newer agent, it replaces it and restarts it. An
# agent that already enrolled keeps its identity (pass --reenroll to enroll it again).
#
# server.setup runs it over SSH. By hand, as root, with a token from the control plane:
#   curl -fsSL https://cp.example.com/agent/install.sh | sh -s -- \
#     --control-plane-url https://cp.example.com --enrollment-token <token>
#
# Options:
#   --control-plane-url URL        the control plane (the agent is downloaded from it and enrolls
#                                  there; remembered for later runs)
#   --enrollment-token TOKEN       one-time enrollment token (visible in `ps`; prefer the next)
#   --enrollment-token-file FILE   read the token from FILE (the file is deleted after reading)
#   --advertise-addr ADDR          address for `docker swarm init` on multi-homed hosts
#   --reenroll                     forget a previous enrollment and enroll with the new token
#   --builders-url URL             where the builders' releases are downloaded (as PLATFORM_BUILDERS_URL)
# Environment (mainly for tests; options win):
#   PLATFORM_AGENT_STATE_DIR   agent config and credentials (default /etc/platform/agent)
#   PLATFORM_AGENT_INSTALL_DIR the agent executable (default /opt/platform-agent)
#   PLATFORM_MAIN_DIR          the platform's main directory (default /etc/platform)
#   PLATFORM_AGENT_SOURCE      run the agent with this host's Node.js and tsx from this checkout
#                              of the repository instead of the executable (development only)
#   PLATFORM_ENROLL_WAIT       seconds to wait for the agent to enroll (default 60)
#   PLATFORM_BUILDERS_URL      the builders' release host (default https://github.com): nixpacks
#                              and railpack are downloaded from <URL>/railwayapp/<tool>/releases/...
#   PLATFORM_BUILDERS_DIR      where they are installed (default /usr/local/bin)
set -eu

STATE_DIR=${PLATFORM_AGENT_STATE_DIR:-/etc/platform/agent}
INSTALL_DIR=${PLATFORM_AGENT_INSTALL_DIR:-/opt/platform-agent}
MAIN_DIR=${PLATFORM_MAIN_DIR:-/etc/platform}
AGENT_SOURCE=${PLATFORM_AGENT_SOURCE:-}
ENROLL_WAIT=${PLATFORM_ENROLL_WAIT:-60}
NETWORK=platform-network
UNIT=platform-agent
CONTROL_PLANE_URL=
TOKEN=
TOKEN_FILE=
ADVERTISE_ADDR=
REENROLL=no
BUILDERS_URL=${PLATFORM_BUILDERS_URL:-https://github.com}
BUILDERS_DIR=${PLATFORM_BUILDERS_DIR:-/usr/local/bin}

say() { printf '[platform-install] %s\n' "$*"; }
die() { printf '[platform-install] error: %s\n' "$*" >&2; exit 1; }
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --control-plane-url) need_value "$@"; CONTROL_PLANE_URL=$2; shift 2 ;;
    --enrollment-token) need_value "$@"; TOKEN=$2; shift 2 ;;
    --enrollment-token-file) need_value "$@"; TOKEN_FILE=$2; shift 2 ;;
    --advertise-addr) need_value "$@"; ADVERTISE_ADDR=$2; shift 2 ;;
    --reenroll) REENROLL=yes; shift ;;
    --builders-url) need_value "$@"; BUILDERS_URL=$2; shift 2 ;;
    -h|--help) sed -n '2,33p' "$0" 2>/dev/null || echo "see the header of deploy/agent/install.sh"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

# ---- validate every input before touching anything ------------------------------------------
matches() { printf '%s' "$1" | grep -Eq "$2"; }
check_dir() {
  matches "$2" '^/[A-Za-z0-9._/-]*$' && ! matches "$2" '(^|/)\.\.(/|$)' ||
    die "$1 must be an absolute path of letters, digits, . _ - and / (got: $2)"
}
check_dir PLATFORM_AGENT_STATE_DIR "$STATE_DIR"
check_dir PLATFORM_AGENT_INSTALL_DIR "$INSTALL_DIR"
check_dir PLATFORM_MAIN_DIR "$MAIN_DIR"
[ -z "$AGENT_SOURCE" ] || check_dir PLATFORM_AGENT_SOURCE "$AGENT_SOURCE"
matches "$ENROLL_WAIT" '^[0-9]{1,4}$' || die "PLATFORM_ENROLL_WAIT must be a number of seconds"
if [ -n "$TOKEN_FILE" ]; then
  [ -f "$TOKEN_FILE" ] || die "--enrollment-token-file: no such file"
  TOKEN=$(head -n 1 "$TOKEN_FILE" | tr -d '\r\n')
  rm -f "$TOKEN_FILE"
fi
[ -z "$TOKEN" ] || matches "$TOKEN" '^[A-Za-z0-9_-]{16,200}$' || die "the enrollment token is malformed"
URL_PATTERN='^https?://[][A-Za-z0-9.:_%/-]+$'
[ -z "$CONTROL_PLANE_URL" ] || matches "$CONTROL_PLANE_URL" "$URL_PATTERN" ||
  die "--control-plane-url must be an http(s) URL of a host, port and path (got: $CONTROL_PLANE_URL)"
[ -z "$ADVERTISE_ADDR" ] || matches "$ADVERTISE_ADDR" '^[A-Za-z0-9.:]+$' || die "--advertise-addr must be an address"
BUILDERS_URL=${BUILDERS_URL%/}
matches "$BUILDERS_URL" "$URL_PATTERN" || die "--builders-url / PLATFORM_BUILDERS_URL must be an http(s) URL (got: $BUILDERS_URL)"
check_dir PLATFORM_BUILDERS_DIR "$BUILDERS_DIR"
[ "$(id -u)" -eq 0 ] || die "run as root (or through sudo)"

enrolled() { [ -f "$STATE_DIR/agent.json" ] && [ -f "$STATE_DIR/agent.creds" ]; }
if [ "$REENROLL" = yes ] && [ -z "$TOKEN" ]; then die "--reenroll needs --enrollment-token or --enrollment-token-file"; fi
if [ "$REENROLL" = no ] && ! enrolled; then
  [ -n "$TOKEN" ] || die "this host has no enrolled agent: give --enrollment-token or --enrollment-token-file"
fi
# The control plane's URL is remembered so that a later run (an upgrade) needs no argument.
if [ -z "$CONTROL_PLANE_URL" ] && [ -f "$STATE_DIR/control-plane-url" ]; then
  CONTROL_PLANE_URL=$(head -n 1 "$STATE_DIR/control-plane-url")
  matches "$CONTROL_PLANE_URL" "$URL_PATTERN" || die "$STATE_DIR/control-plane-url holds no valid URL"
fi
[ -n "$CONTROL_PLANE_URL" ] || die "give --control-plane-url"
CONTROL_PLANE_URL=${CONTROL_PLANE_URL%/}

has() { command -v "$1" >/dev/null 2>&1; }
systemd_runs() { [ -d /run/systemd/system ] && has systemctl; }
APT_UPDATED=no
apt_update() {
  has apt-get || die "$* is missing and this host has no apt-get: install it by hand and run again"
  if [ "$APT_UPDATED" = no ]; then DEBIAN_FRONTEND=noninteractive apt-get update -qq; APT_UPDATED=yes; fi
}
apt_install() {
  apt_update "$@"
  say "installing $* from the distribution's packages"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
# Debian 13 ships Docker's CLI in its own package (docker-cli); older releases inside docker.io.
has_package() { apt_update "$1" && apt-cache show "$1" >/dev/null 2>&1; }

# ---- the agent executable: downloaded and checked before anything else changes --------------
case "$(uname -m)" in
  x86_64 | amd64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) die "no agent for this machine's architecture ($(uname -m)); supported: x86_64, aarch64" ;;
esac
ARTIFACT=platform-agent-linux-$ARCH
AGENT_BIN=$INSTALL_DIR/platform-agent
if ! has curl; then apt_install curl ca-certificates; fi
CHANGED=no
NEW_BIN=
if [ -z "$AGENT_SOURCE" ]; then
  EXPECTED=$(curl -fsSL "$CONTROL_PLANE_URL/agent/$ARTIFACT.sha256") ||
    die "could not get $CONTROL_PLANE_URL/agent/$ARTIFACT.sha256 (is the control plane reachable from here?)"
  EXPECTED=${EXPECTED%% *}
  matches "$EXPECTED" '^[0-9a-f]{64}$' || die "the control plane sent no sha256 for $ARTIFACT"
  if [ -f "$AGENT_BIN" ] && [ "$(sha256sum "$AGENT_BIN" | cut -d' ' -f1)" = "$EXPECTED" ]; then
    say "the agent is up to date (sha256 $EXPECTED)"
  else
    NEW_BIN=$(mktemp "${TMPDIR:-/tmp}/platform-agent.XXXXXXXX")
    trap 'rm -f "$NEW_BIN"' EXIT
    say "downloading $CONTROL_PLANE_URL/agent/$ARTIFACT"
    curl -fsSL -o "$NEW_BIN" "$CONTROL_PLANE_URL/agent/$ARTIFACT" || die "could not download the agent"
    GOT=$(sha256sum "$NEW_BIN" | cut -d' ' -f1)
    [ "$GOT" = "$EXPECTED" ] ||
      die "checksum mismatch for $ARTIFACT: expected sha256 $EXPECTED, downloaded $GOT; nothing was changed"
    say "checksum verified (sha256 $GOT)"
  fi
fi

# ---- Docker, git, Swarm, network, main directory ---------------------------------------------
engine_answers() { docker info >/dev/null 2>&1; }
socket_answers() { [ -S /var/run/docker.sock ] && curl -fsS --unix-socket /var/run/docker.sock http://localhost/_ping >/dev/null 2>&1; }
if has docker; then
  say "Docker is installed: $(docker --version)"
elif socket_answers; then
  # An engine already runs here (its socket answers): only the CLI is needed, and the package
  # must not start a second engine (policy-rc.d is Debian's switch for that).
  if has_package docker-cli; then
    apt_install docker-cli
  elif [ -e /usr/sbin/policy-rc.d ]; then
    apt_install docker.io
  else
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    apt_install docker.io || { rm -f /usr/sbin/policy-rc.d; exit 1; }
    rm -f /usr/sbin/policy-rc.d
  fi
elif has_package docker-cli; then
  apt_install docker.io docker-cli
else
  apt_install docker.io
fi
has docker || die "the distribution's packages gave no docker command"
has git || apt_install git
if socket_answers && ! engine_answers; then
  die "the Docker Engine answers on /var/run/docker.sock but 'docker info' fails: $(docker info 2>&1 | tail -n 1)"
fi
if ! engine_answers; then
  say "starting Docker"
  if systemd_runs; then systemctl enable --now docker; elif has service; then service docker start; fi
  tries=0
  until engine_answers; do
    tries=$((tries + 1))
    [ "$tries" -le 30 ] || die "the Docker Engine does not answer (docker info)"
    sleep 1
  done
fi
if [ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = active ]; then
  say "Docker Swarm is active"
elif [ -n "$ADVERTISE_ADDR" ]; then
  say "initialising Docker Swarm"
  docker swarm init --advertise-addr "$ADVERTISE_ADDR" >/dev/null
else
  say "initialising Docker Swarm"
  docker swarm init >/dev/null || die "docker swarm init failed: run again with --advertise-addr <this host's IP>"
fi
if docker network inspect "$NETWORK" >/dev/null 2>&1; then
  say "network $NETWORK exists"
else
  say "creating overlay network $NETWORK"
  docker network create --driver overlay --attachable "$NETWORK" >/dev/null
fi
mkdir -p "$MAIN_DIR" "$STATE_DIR" "$INSTALL_DIR"
chmod 700 "$STATE_DIR"

# ---- builders (begin) -------------------------------------------------------------------------
# nixpacks and railpack, the CLI builders of the default build types, pinned (the same versions
# as packages/agent-protocol/src/builders.ts) and checked against their sha256 before anything is
# installed. A release host this server cannot reach leaves the builder out (a deploy that needs
# it then fails naming it and the fix, and server.validate says so); a checksum mismatch installs
# nothing. Needs: curl, sha256sum, tar, mktemp; BUILDERS_URL, BUILDERS_DIR; say.
NIXPACKS_VERSION=1.39.0
RAILPACK_VERSION=0.15.4
# sha256 of each release archive (linux musl, x64 and arm64): empty in the repository, written in
# by the release (scripts/stamp-builder-checksums.sh, after checking each archive against the
# checksum its project publishes), so a release's control plane serves them. PLATFORM_<TOOL>_SHA256
# wins over them; with neither, that builder is not installed.
NIXPACKS_SHA256_X64=${PLATFORM_NIXPACKS_SHA256:-}
NIXPACKS_SHA256_ARM64=${PLATFORM_NIXPACKS_SHA256:-}
RAILPACK_SHA256_X64=${PLATFORM_RAILPACK_SHA256:-}
RAILPACK_SHA256_ARM64=${PLATFORM_RAILPACK_SHA256:-}

# install_builder TOOL VERSION ARCHIVE SHA256: 0 installed or up to date, 1 not installed.
install_builder() {
  tool=$1 version=$2 archive=$3 expected=$4
  if [ -x "$BUILDERS_DIR/$tool" ] && "$BUILDERS_DIR/$tool" --version 2>/dev/null | grep -qF "$version"; then
    say "$tool $version is installed"
    return 0
  fi
  url="$BUILDERS_URL/railwayapp/$tool/releases/download/v$version/$archive"
  if ! matches "$expected" '^[0-9a-f]{64}$'; then
    say "$tool $version not installed: no sha256 of $archive is recorded in this script (set PLATFORM_$(printf '%s' "$tool" | tr a-z A-Z)_SHA256)"
    return 1
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/platform-$tool.XXXXXXXX")
  if ! curl -fsSL --connect-timeout 10 --max-time 300 -o "$work/$archive" "$url" 2>"$work/curl.err"; then
    say "$tool $version not installed: could not download $url ($(tail -n 1 "$work/curl.err")); deploys of the $tool build type fail until it is installed: run the setup again where $BUILDERS_URL is reachable, or install $tool $version into $BUILDERS_DIR by hand"
    rm -rf "$work"
    return 1
  fi
  got=$(sha256sum "$work/$archive" | cut -d' ' -f1)
  if [ "$got" != "$expected" ]; then
    say "error: checksum mismatch for $archive: expected sha256 $expected, downloaded $got; $tool was not installed"
    rm -rf "$work"
    return 1
  fi
  mkdir -p "$work/unpacked" "$BUILDERS_DIR"
  if ! tar -xzf "$work/$archive" -C "$work/unpacked" "$tool" 2>/dev/null || [ ! -f "$work/unpacked/$tool" ] || [ -L "$work/unpacked/$tool" ]; then
    say "error: $archive holds no $tool executable; $tool was not installed"
    rm -rf "$work"
    return 1
  fi
  # Copied next to its place, then renamed over it: a builder is there whole or not at all.
  cp "$work/unpacked/$tool" "$BUILDERS_DIR/.$tool.new" && chmod 755 "$BUILDERS_DIR/.$tool.new" &&
    mv -f "$BUILDERS_DIR/.$tool.new" "$BUILDERS_DIR/$tool"
  rm -rf "$work"
  say "installed $tool $version at $BUILDERS_DIR/$tool (sha256 $got verified)"
}

install_builders() {
  case "$(uname -m)" in
    x86_64 | amd64)
      install_builder nixpacks "$NIXPACKS_VERSION" "nixpacks-v$NIXPACKS_VERSION-x86_64-unknown-linux-musl.tar.gz" "$NIXPACKS_SHA256_X64" || true
      install_builder railpack "$RAILPACK_VERSION" "railpack-v$RAILPACK_VERSION-x86_64-unknown-linux-musl.tar.gz" "$RAILPACK_SHA256_X64" || true
      ;;
    aarch64 | arm64)
      install_builder nixpacks "$NIXPACKS_VERSION" "nixpacks-v$NIXPACKS_VERSION-aarch64-unknown-linux-musl.tar.gz" "$NIXPACKS_SHA256_ARM64" || true
      install_builder railpack "$RAILPACK_VERSION" "railpack-v$RAILPACK_VERSION-arm64-unknown-linux-musl.tar.gz" "$RAILPACK_SHA256_ARM64" || true
      ;;
  esac
}
install_builders
# ---- builders (end) ---------------------------------------------------------------------------

# ---- the agent in place -----------------------------------------------------------------------
if [ -n "$AGENT_SOURCE" ]; then
  [ -f "$AGENT_SOURCE/apps/agent/src/main.ts" ] || die "PLATFORM_AGENT_SOURCE has no apps/agent/src/main.ts"
  has node || die "PLATFORM_AGENT_SOURCE needs Node.js on this host"
  say "running the agent from the checkout $AGENT_SOURCE"
  WORK_DIR=$AGENT_SOURCE
  EXEC="$(command -v node) --import tsx apps/agent/src/main.ts"
  MARKER=apps/agent/src/main.ts
else
  if [ -n "$NEW_BIN" ]; then
    chmod 755 "$NEW_BIN"
    mv -f "$NEW_BIN" "$AGENT_BIN.new" && mv -f "$AGENT_BIN.new" "$AGENT_BIN"
    NEW_BIN=
    CHANGED=yes
    say "installed the agent at $AGENT_BIN"
  fi
  WORK_DIR=$INSTALL_DIR
  EXEC=$AGENT_BIN
  MARKER=$AGENT_BIN
fi

# Writes stdin to $1 when it differs (then CHANGED=yes); keeps the file untouched otherwise.
write_if_changed() {
  tmp=$(mktemp "$1.XXXXXX")
  cat >"$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; CHANGED=yes; fi
}

# Read by systemd (EnvironmentFile, not a shell); values were validated above.
[ "$REENROLL" = no ] || rm -f "$STATE_DIR/agent.json" "$STATE_DIR/agent.creds"
umask 077
printf '%s\n' "$CONTROL_PLANE_URL" | write_if_changed "$STATE_DIR/control-plane-url"
{
  # glibc's default mmap threshold, pinned: otherwise freed large blocks (the parse of the agent's
  # code at start) raise it and later blocks stay resident in the arenas (~6 MiB of an idle agent).
  printf 'MALLOC_MMAP_THRESHOLD_=131072\n'
  # V8's young generation capped at 2 x 1 MiB: it otherwise grows while the agent starts and stays
  # (~2 MiB of an idle agent). The executable takes node flags from NODE_OPTIONS only.
  printf 'NODE_OPTIONS=--max-semi-space-size=1\n'
  printf 'AGENT_STATE_DIR=%s\n' "$STATE_DIR"
  printf 'AGENT_MAIN_DIR=%s\n' "$MAIN_DIR"
  if ! enrolled; then
    printf 'AGENT_CONTROL_PLANE_URL=%s\n' "$CONTROL_PLANE_URL"
    printf 'AGENT_ENROLLMENT_TOKEN=%s\n' "$TOKEN"
  fi
} | write_if_changed "$STATE_DIR/agent.env"
umask 022

# ---- start (or restart) the agent when something changed -------------------------------------
PID_FILE=$STATE_DIR/agent.pid
LOG_FILE=$STATE_DIR/agent.log
background_pid() {
  [ -f "$PID_FILE" ] || return 1
  pid=$(cat "$PID_FILE")
  matches "$pid" '^[0-9]+$' && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$MARKER" && echo "$pid"
}
stop_background_agent() {
  if pid=$(background_pid); then
    say "stopping the running agent (pid $pid)"
    kill "$pid" 2>/dev/null || true
    tries=0
    while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 20 ]; do sleep 0.5; tries=$((tries + 1)); done
  fi
  rm -f "$PID_FILE"
}

if systemd_runs; then
  write_if_changed /etc/systemd/system/$UNIT.service <<UNIT_FILE
[Unit]
Description=Platform agent
After=network-online.target docker.service
Wants=network-online.target

[Service]
EnvironmentFile=$STATE_DIR/agent.env
WorkingDirectory=$WORK_DIR
ExecStart=$EXEC
Restart=always
RestartSec=5

[Install]
WantedBy=multi-user.target
UNIT_FILE
  systemctl daemon-reload
  systemctl enable $UNIT >/dev/null 2>&1
  if [ "$CHANGED" = yes ] || ! systemctl is-active --quiet $UNIT; then
    systemctl restart $UNIT
    say "agent (re)started as systemd unit $UNIT"
  else
    say "agent unchanged and running as systemd unit $UNIT"
  fi
else
  if [ "$CHANGED" = no ] && pid=$(background_pid); then
    say "agent unchanged and running in the background (pid $pid)"
  else
    stop_background_agent
    (
      cd "$WORK_DIR"
      set -a
      . "$STATE_DIR/agent.env"
      set +a
      # shellcheck disable=SC2086 # EXEC is a command line made above from validated paths
      nohup $EXEC >>"$LOG_FILE" 2>&1 </dev/null &
      echo $! >"$PID_FILE"
    )
    say "agent running in the background (pid $(cat "$PID_FILE"), log $LOG_FILE)"
  fi
fi

# ---- wait for the enrollment ------------------------------------------------------------------
agent_log() {
  if systemd_runs; then journalctl -u $UNIT -n 20 --no-pager 2>/dev/null || true; else tail -n 20 "$LOG_FILE" 2>/dev/null || true; fi
}
waited=0
until enrolled; do
  if [ "$waited" -ge "$ENROLL_WAIT" ]; then
    say "the agent did not enroll within ${ENROLL_WAIT}s; its last log lines:"
    agent_log
    exit 1
  fi
  if ! systemd_runs && ! background_pid >/dev/null; then
    say "the agent stopped; its last log lines:"
    agent_log
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done
# The token is spent once the agent enrolled; keep it out of the files on disk.
if grep -q '^AGENT_ENROLLMENT_TOKEN=' "$STATE_DIR/agent.env"; then
  sed -i '/^AGENT_ENROLLMENT_TOKEN=/d; /^AGENT_CONTROL_PLANE_URL=/d' "$STATE_DIR/agent.env"
fi
say "agent enrolled ($(grep -o '"serverId": *"[^"]*"' "$STATE_DIR/agent.json"))"
say "done"
