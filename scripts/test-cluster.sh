#!/usr/bin/env bash
# Extra Docker Engines for the cluster tests and bench: each in its own network namespace
# (pcl-<name>, veth to the bridge pcl0 = 10.231.0.1/24 on the host), with its own --data-root,
# --exec-root, --pidfile and unix socket, storage driver vfs. The host's own dockerd is never
# touched: these engines form their own Swarm.
#
#   scripts/test-cluster.sh up a b c     start engines a b c (10.231.0.2, .3, .4), images loaded
#   scripts/test-cluster.sh stop b       kill engine b's dockerd (kill -9: a node that dies)
#   scripts/test-cluster.sh start b      start engine b again (its Swarm state is kept)
#   scripts/test-cluster.sh down         stop every engine, remove namespaces, bridge, rules, data
#
# Engine <name>'s socket: /run/pcl/<name>/docker.sock. Needs root, ip, nsenter, iptables, VXLAN.
# Why nsenter and not `ip netns exec`: the latter remounts /sys, and dockerd then finds no
# cgroups ("Devices cgroup isn't mounted").
set -euo pipefail

BRIDGE=pcl0
SUBNET=10.231.0
RUN=/run/pcl
DATA=/var/lib/pcl
IMAGES=${PLATFORM_CLUSTER_IMAGES:-"platform-test/busybox:latest platform-test/static-httpd:latest platform-test/netclient:latest"}
names=(a b c d)

index_of() {
  local i
  for i in "${!names[@]}"; do [[ ${names[$i]} == "$1" ]] && { echo $((i + 2)); return; }; done
  echo "unknown engine $1 (a, b, c or d)" >&2
  exit 2
}

start_engine() {
  local name=$1 ip
  ip=$(index_of "$name")
  mkdir -p "$RUN/$name" "$DATA/$name"
  # Its own UTS namespace too: the node's hostname is node-<name>.
  nsenter --net="/var/run/netns/pcl-$name" unshare --uts sh -c 'hostname "$0"; exec "$@"' "node-$name" dockerd \
    --data-root "$DATA/$name/data" --exec-root "$RUN/$name/exec" --pidfile "$RUN/$name/docker.pid" \
    -H "unix://$RUN/$name/docker.sock" --storage-driver=vfs --bip "172.31.$ip.1/24" \
    --cgroup-parent "pcl-$name" >>"$DATA/$name/dockerd.log" 2>&1 &
  for _ in $(seq 1 100); do
    docker -H "unix://$RUN/$name/docker.sock" version >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "engine $name did not start; its log:" >&2
  tail -20 "$DATA/$name/dockerd.log" >&2
  return 1
}

up() {
  [[ -d /sys/class/net/$BRIDGE ]] || {
    ip link add "$BRIDGE" type bridge
    ip addr add "$SUBNET.1/24" dev "$BRIDGE"
  }
  ip link set "$BRIDGE" up
  # The host's FORWARD policy is DROP (its dockerd) and bridged frames pass iptables.
  iptables -C FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null ||
    iptables -I FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
  local archive
  archive=$(mktemp /tmp/pcl-images.XXXXXX.tar)
  # shellcheck disable=SC2086
  docker save $IMAGES -o "$archive"
  for name in "$@"; do
    local ip
    ip=$(index_of "$name")
    if [[ ! -e /var/run/netns/pcl-$name ]]; then
      ip netns add "pcl-$name"
      ip link add "pcl-$name-h" type veth peer name eth0 netns "pcl-$name"
      ip link set "pcl-$name-h" master "$BRIDGE" up
      ip netns exec "pcl-$name" ip addr add "$SUBNET.$ip/24" dev eth0
      ip netns exec "pcl-$name" ip link set eth0 up
      ip netns exec "pcl-$name" ip link set lo up
      ip netns exec "pcl-$name" ip route add default via "$SUBNET.1"
      # No way out of the test network: a registry lookup fails at once instead of after a
      # 20 s DNS timeout per task (the images are loaded, never pulled).
      ip netns exec "pcl-$name" iptables -A OUTPUT ! -d "$SUBNET.0/24" -o eth0 -j REJECT
    fi
    start_engine "$name"
    docker -H "unix://$RUN/$name/docker.sock" load -q -i "$archive" >/dev/null
  done
  rm -f "$archive"
}

# Kills the engine's dockerd and the containerd and shims it started (found by their socket
# path under its exec root, never by name), then unmounts what it left.
kill_engine() {
  local name=$1 pid
  if [[ -f $RUN/$name/docker.pid ]]; then
    pid=$(cat "$RUN/$name/docker.pid")
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$RUN/$name/docker.pid"
  fi
  # dockerd takes a containerd.pid naming any process that still exists (a zombie not reaped yet)
  # for its running containerd and waits for it forever: the pgrep below killed it.
  rm -f "$RUN/$name/exec/containerd/containerd.pid"
  for pid in $(pgrep -f -- "$RUN/$name/exec/" || true); do kill -9 "$pid" 2>/dev/null || true; done
  # Its containers too (a machine that dies takes them along): they live under its own cgroup
  # parent, never the host engine's /docker.
  for pid in $(cat /sys/fs/cgroup/pids/"pcl-$name"/*/cgroup.procs 2>/dev/null || true); do
    kill -9 "$pid" 2>/dev/null || true
  done
  sleep 0.3
  for mount in $(grep -oE " ($RUN|$DATA)/$name/[^ ]*" /proc/mounts | sort -r || true); do
    umount -l "$mount" 2>/dev/null || true
  done
}

down() {
  for name in "${names[@]}"; do
    [[ -e /var/run/netns/pcl-$name || -d $RUN/$name ]] || continue
    kill_engine "$name"
    ip netns del "pcl-$name" 2>/dev/null || true
    ip link del "pcl-$name-h" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  while iptables -D FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null; do :; done
  rm -rf "$RUN" "$DATA"
}

command=${1:-}
shift || true
case $command in
  up) up "$@" ;;
  stop) for name in "$@"; do kill_engine "$name"; done ;;
  start) for name in "$@"; do start_engine "$name"; done ;;
  down) down ;;
  *)
    echo "usage: $0 up <names...> | stop <name> | start <name> | down" >&2
    exit 2
    ;;
esac
