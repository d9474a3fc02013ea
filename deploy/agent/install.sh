#!/bin/sh
# Platform agent bootstrap for Debian-like hosts. Installs what is missing (Docker from
# Debian's docker.io, Swarm, the `platform-network` overlay network, Node.js >= 20 from
# Debian), installs the agent, writes its configuration and starts it: as a systemd unit when
# systemd runs, otherwise as a background process with a pid file. Running it again is
# harmless: present pieces are kept, the agent code is refreshed and the agent restarted; an
# agent that already enrolled keeps its identity (pass --reenroll to enroll it again).
#
# server.setup runs it over SSH. By hand, as root, with a token from the control plane:
#   curl -fsSLO https://cp.example.com/agent/install.sh
#   sh install.sh --control-plane-url https://cp.example.com --enrollment-token <token>
# (the agent bundle is then downloaded from <control-plane-url>/agent/bundle.tar.gz).
#
# Options:
#   --control-plane-url URL        where the agent enrolls (http:// or https://)
#   --enrollment-token TOKEN       one-time enrollment token (visible in `ps`; prefer the next)
#   --enrollment-token-file FILE   read the token from FILE (the file is deleted after reading)
#   --bundle FILE                  agent bundle (.tar.gz) already on this host
#   --advertise-addr ADDR          address for `docker swarm init` on multi-homed hosts
#   --reenroll                     forget a previous enrollment and enroll with the new token
# Environment (mainly for tests; options win):
#   PLATFORM_AGENT_STATE_DIR   agent config and credentials (default /etc/platform/agent)
#   PLATFORM_AGENT_INSTALL_DIR agent code (default /opt/platform-agent)
#   PLATFORM_MAIN_DIR          the platform's main directory (default /etc/platform)
#   PLATFORM_AGENT_SOURCE      run the agent from this checkout of the repository instead of
#                              installing the bundle (its node_modules must be installed)
#   PLATFORM_ENROLL_WAIT       seconds to wait for the agent to enroll (default 60)
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
BUNDLE=
ADVERTISE_ADDR=
REENROLL=no

say() { printf '[platform-install] %s\n' "$*"; }
die() { printf '[platform-install] error: %s\n' "$*" >&2; exit 1; }
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --control-plane-url) need_value "$@"; CONTROL_PLANE_URL=$2; shift 2 ;;
    --enrollment-token) need_value "$@"; TOKEN=$2; shift 2 ;;
    --enrollment-token-file) need_value "$@"; TOKEN_FILE=$2; shift 2 ;;
    --bundle) need_value "$@"; BUNDLE=$2; shift 2 ;;
    --advertise-addr) need_value "$@"; ADVERTISE_ADDR=$2; shift 2 ;;
    --reenroll) REENROLL=yes; shift ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
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
[ -z "$CONTROL_PLANE_URL" ] || matches "$CONTROL_PLANE_URL" '^https?://[][A-Za-z0-9.:_%/-]+$' ||
  die "--control-plane-url must be an http(s) URL of a host, port and path (got: $CONTROL_PLANE_URL)"
CONTROL_PLANE_URL=${CONTROL_PLANE_URL%/}
[ -z "$BUNDLE" ] || [ -f "$BUNDLE" ] || die "--bundle: no such file: $BUNDLE"
[ -z "$ADVERTISE_ADDR" ] || matches "$ADVERTISE_ADDR" '^[A-Za-z0-9.:]+$' || die "--advertise-addr must be an address"
[ "$(id -u)" -eq 0 ] || die "run as root (or through sudo)"

enrolled() { [ -f "$STATE_DIR/agent.json" ] && [ -f "$STATE_DIR/agent.creds" ]; }
if [ "$REENROLL" = yes ]; then rm -f "$STATE_DIR/agent.json" "$STATE_DIR/agent.creds"; fi
if ! enrolled; then
  [ -n "$TOKEN" ] || die "this host has no enrolled agent: give --enrollment-token or --enrollment-token-file"
  [ -n "$CONTROL_PLANE_URL" ] || die "this host has no enrolled agent: give --control-plane-url"
fi

has() { command -v "$1" >/dev/null 2>&1; }
systemd_runs() { [ -d /run/systemd/system ] && has systemctl; }
apt_install() {
  has apt-get || die "$* is missing and this host has no apt-get: install it by hand and run again"
  say "installing $* from Debian packages"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# ---- Docker, Swarm, network, main directory --------------------------------------------------
if has docker; then
  say "Docker is installed: $(docker --version)"
else
  apt_install docker.io
fi
if ! docker info >/dev/null 2>&1; then
  say "starting Docker"
  if systemd_runs; then systemctl enable --now docker; elif has service; then service docker start; fi
  tries=0
  until docker info >/dev/null 2>&1; do
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
mkdir -p "$MAIN_DIR"
mkdir -p "$STATE_DIR"
chmod 700 "$STATE_DIR"

# ---- Node.js and the agent code ---------------------------------------------------------------
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if ! has node || [ "$(node_major)" -lt 20 ]; then apt_install nodejs npm; fi
[ "$(node_major)" -ge 20 ] ||
  die "Node.js 20 or later is needed (this host's Debian packages have $(node -v 2>/dev/null)); install it and run again"
NODE=$(command -v node)

if [ -n "$AGENT_SOURCE" ]; then
  AGENT_DIR=$AGENT_SOURCE
  [ -f "$AGENT_DIR/apps/agent/src/main.ts" ] || die "PLATFORM_AGENT_SOURCE has no apps/agent/src/main.ts"
  say "running the agent from the checkout $AGENT_DIR"
else
  AGENT_DIR=$INSTALL_DIR
  if [ -z "$BUNDLE" ]; then
    [ -n "$CONTROL_PLANE_URL" ] || die "give --bundle or --control-plane-url to fetch the agent"
    has curl || apt_install curl ca-certificates
    BUNDLE=$(mktemp)
    trap 'rm -f "$BUNDLE"' EXIT
    say "downloading the agent from $CONTROL_PLANE_URL/agent/bundle.tar.gz"
    curl -fsSL -o "$BUNDLE" "$CONTROL_PLANE_URL/agent/bundle.tar.gz"
  fi
  has npm || apt_install npm
  say "installing the agent into $INSTALL_DIR"
  mkdir -p "$INSTALL_DIR"
  rm -rf "$INSTALL_DIR/apps" "$INSTALL_DIR/packages" "$INSTALL_DIR/proto"
  tar -xzf "$BUNDLE" -C "$INSTALL_DIR" --no-same-owner
  (cd "$INSTALL_DIR" && npm install --omit=dev --no-audit --no-fund --loglevel=error)
  mkdir -p "$INSTALL_DIR/node_modules/@platform"
  ln -sfn ../../packages/agent-protocol "$INSTALL_DIR/node_modules/@platform/agent-protocol"
fi

# ---- configuration ----------------------------------------------------------------------------
# Read by systemd (EnvironmentFile, not a shell); values were validated above.
umask 077
{
  printf 'AGENT_STATE_DIR=%s\n' "$STATE_DIR"
  printf 'AGENT_MAIN_DIR=%s\n' "$MAIN_DIR"
  if ! enrolled; then
    printf 'AGENT_CONTROL_PLANE_URL=%s\n' "$CONTROL_PLANE_URL"
    printf 'AGENT_ENROLLMENT_TOKEN=%s\n' "$TOKEN"
  fi
} >"$STATE_DIR/agent.env"
umask 022

# ---- start (or restart) the agent ------------------------------------------------------------
PID_FILE=$STATE_DIR/agent.pid
LOG_FILE=$STATE_DIR/agent.log
stop_background_agent() {
  [ -f "$PID_FILE" ] || return 0
  pid=$(cat "$PID_FILE")
  if matches "$pid" '^[0-9]+$' && grep -q 'apps/agent/src/main.ts' "/proc/$pid/cmdline" 2>/dev/null; then
    say "stopping the running agent (pid $pid)"
    kill "$pid" 2>/dev/null || true
    tries=0
    while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 20 ]; do sleep 0.5; tries=$((tries + 1)); done
  fi
  rm -f "$PID_FILE"
}

if systemd_runs; then
  cat >/etc/systemd/system/$UNIT.service <<UNIT_FILE
[Unit]
Description=Platform agent
After=network-online.target docker.service
Wants=network-online.target

[Service]
EnvironmentFile=$STATE_DIR/agent.env
WorkingDirectory=$AGENT_DIR
ExecStart=$NODE --import tsx apps/agent/src/main.ts
Restart=always
RestartSec=5

[Install]
WantedBy=multi-user.target
UNIT_FILE
  systemctl daemon-reload
  systemctl enable $UNIT >/dev/null 2>&1
  systemctl restart $UNIT
  say "agent running as systemd unit $UNIT"
else
  stop_background_agent
  (
    cd "$AGENT_DIR"
    export AGENT_STATE_DIR="$STATE_DIR" AGENT_MAIN_DIR="$MAIN_DIR"
    if ! enrolled; then export AGENT_CONTROL_PLANE_URL="$CONTROL_PLANE_URL" AGENT_ENROLLMENT_TOKEN="$TOKEN"; fi
    nohup "$NODE" --import tsx apps/agent/src/main.ts >>"$LOG_FILE" 2>&1 </dev/null &
    echo $! >"$PID_FILE"
  )
  say "agent running in the background (pid $(cat "$PID_FILE"), log $LOG_FILE)"
fi

# ---- wait for the enrollment ------------------------------------------------------------------
waited=0
until enrolled; do
  if [ "$waited" -ge "$ENROLL_WAIT" ]; then
    say "the agent did not enroll within ${ENROLL_WAIT}s; its last log lines:"
    if systemd_runs; then journalctl -u $UNIT -n 20 --no-pager 2>/dev/null || true; else tail -n 20 "$LOG_FILE" 2>/dev/null || true; fi
    exit 1
  fi
  if ! systemd_runs && ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    say "the agent stopped; its last log lines:"
    tail -n 20 "$LOG_FILE" 2>/dev/null || true
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done
# The token is spent once the agent enrolled; keep it out of the files on disk.
sed -i '/^AGENT_ENROLLMENT_TOKEN=/d; /^AGENT_CONTROL_PLANE_URL=/d' "$STATE_DIR/agent.env"
say "agent enrolled ($(grep -o '"serverId": *"[^"]*"' "$STATE_DIR/agent.json"))"
say "done"
