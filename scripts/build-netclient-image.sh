#!/usr/bin/env bash
# Builds platform-test/netclient:latest: the static busybox test image plus the host's curl and
# the shared libraries `ldd` lists for it (a real glibc resolver: busybox's own DNS lookups
# crash). Tests run it on platform-network to reach services by name.
# Idempotent: rebuilt only when its inputs changed (hash kept in the label platform.test.inputs).
set -euo pipefail

IMAGE=platform-test/netclient:latest
BASE=platform-test/busybox:latest

docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
docker image inspect "$BASE" >/dev/null 2>&1 || "$here/build-test-images.sh"
if ! command -v curl >/dev/null 2>&1; then
  echo "installing curl"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
fi

CURL=$(command -v curl)
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/root/usr/bin"
cp -L "$CURL" "$context/root/usr/bin/curl"
# Every library curl loads, at the path the dynamic loader expects (the loader itself included).
for library in $(ldd "$CURL" | grep -oE '/[^ ]+' | sort -u); do
  mkdir -p "$context/root$(dirname "$library")"
  cp -L "$library" "$context/root$library"
done
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $BASE
COPY root/ /
ENV PATH=/usr/bin:/bin
DOCKERFILE

inputs=$( (cat "$context/Dockerfile"; find "$context/root" -type f -print0 | sort -z | xargs -0 cat) | sha256sum | cut -c1-16)
current=$(docker image inspect --format '{{ index .Config.Labels "platform.test.inputs" }}' "$IMAGE" 2>/dev/null || true)
if [ "$current" = "$inputs" ]; then
  echo "$IMAGE is up to date"
  exit 0
fi
echo "building $IMAGE"
docker build --quiet --label "platform.test.inputs=$inputs" --tag "$IMAGE" "$context" >/dev/null
echo "$IMAGE built"
