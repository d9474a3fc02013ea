#!/usr/bin/env bash
# Makes a local Docker Engine ready for the agent's tests: installs docker.io when no engine
# answers and dockerd is missing, starts dockerd (vfs storage) in the background with its log
# in a file, joins it to a single-node Swarm on 127.0.0.1 and creates the attachable overlay
# network "platform-network". Idempotent: each step is skipped when already done.
set -euo pipefail

SOCKET="${DOCKER_SOCKET:-/var/run/docker.sock}"
LOG_FILE="${DOCKERD_LOG:-/var/log/dockerd.log}"
NETWORK="platform-network"

engine_up() { docker info >/dev/null 2>&1; }

if ! engine_up && ! command -v dockerd >/dev/null; then
  echo "installing docker.io"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi

if ! engine_up; then
  if ! (command -v pgrep >/dev/null && pgrep -x dockerd >/dev/null); then
    echo "starting dockerd (log: $LOG_FILE)"
    nohup dockerd --storage-driver=vfs >>"$LOG_FILE" 2>&1 </dev/null &
  fi
  for _ in $(seq 1 120); do
    [ -S "$SOCKET" ] && engine_up && break
    sleep 0.5
  done
  engine_up || { echo "dockerd did not come up; see $LOG_FILE" >&2; exit 1; }
fi

# Docker's overlay driver sometimes leaves a network's VXLAN link (vx-<vni>-<id>) in the host's
# namespace (moby/libnetwork#1765): every later task on a network with that VNI is then rejected
# ("error creating vxlan interface: file exists"). The agent deletes such links (docker/vxlan.ts);
# one left by an earlier run goes here. A link being set up lives microseconds: one still there a
# second later is an orphan.
vxlan_links() {
  local link
  for link in /sys/class/net/vx-*; do
    [ -e "$link/uevent" ] && grep -qx DEVTYPE=vxlan "$link/uevent" && echo "${link##*/}:$(cat "$link/ifindex")"
  done
  return 0
}
orphans=$(vxlan_links)
if [ -n "$orphans" ]; then
  sleep 1
  for link in $(vxlan_links); do
    if grep -qx "$link" <<<"$orphans"; then
      echo "removing the VXLAN link ${link%%:*} the engine left behind"
      ip link delete "${link%%:*}" || true
    fi
  done
fi

swarm_state=$(docker info --format '{{.Swarm.LocalNodeState}}')
if [ "$swarm_state" != "active" ]; then
  echo "initialising a single-node swarm"
  docker swarm init --advertise-addr 127.0.0.1 >/dev/null
fi

if ! docker network inspect "$NETWORK" >/dev/null 2>&1; then
  echo "creating overlay network $NETWORK"
  docker network create --driver overlay --attachable "$NETWORK" >/dev/null
fi

echo "docker is ready: engine $(docker version --format '{{.Server.Version}}'), swarm active, network $NETWORK"
