#!/usr/bin/env bash
# Builds platform-test/debian:<suite> (default bookworm, i.e. Debian 12): a minimal Debian
# userland made by debootstrap from the Debian mirror this machine's apt uses, imported into
# Docker. No registry can be pulled from here, so images that need a real distribution (the
# install tests' fresh server, images of Debian's postgresql or nats-server) start from it.
# Idempotent: an existing image is kept (PLATFORM_REBUILD_DEBIAN=1 rebuilds it).
#   bash scripts/build-debian-image.sh [suite]    # prints the image name on its last line
set -euo pipefail

SUITE=${1:-bookworm}
IMAGE=platform-test/debian:$SUITE

docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }
if [ "${PLATFORM_REBUILD_DEBIAN:-0}" != 1 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "$IMAGE"
  exit 0
fi

if ! command -v debootstrap >/dev/null; then
  echo "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

# The first deb.debian.org-style URI of apt's own sources (deb822 or one-line format).
mirror=$(
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}'
  } | grep -v -- '-security' | grep -m1 '/debian' || true
)
mirror=${mirror:-http://deb.debian.org/debian}

rootfs=$(mktemp -d)
trap 'rm -rf "$rootfs"' EXIT
echo "building $IMAGE (debootstrap $SUITE from $mirror)"
debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >/dev/null
# apt inside the image uses the same mirror; nothing is cached in the image.
echo "deb $mirror $SUITE main" >"$rootfs/etc/apt/sources.list"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
# mktemp made the root directory 0700: every user of the image must traverse it.
chmod 755 "$rootfs"
tar -C "$rootfs" -c . | docker import --change 'CMD ["/bin/bash"]' - "$IMAGE" >/dev/null
echo "$IMAGE"
