#!/usr/bin/env bash
# Builds platform-test/forward-auth:latest, the stand-in for oauth2-proxy in the forward-auth
# tests (no image can be pulled here): scripts/forward-auth-standin.mjs run by this machine's node
# (20+), FROM platform-test/debian:bookworm (built by scripts/build-debian-image.sh when missing).
# Idempotent and quick: rebuilt only when its inputs changed (hash in label platform.test.inputs).
# Prints the image name on its last line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
IMAGE=platform-test/forward-auth:latest
docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }

base=$(bash "$here/build-debian-image.sh" bookworm | tail -1)
node_binary=$(command -v node)

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/rootfs/opt/forward-auth" "$context/rootfs/usr/local/bin"
cp "$here/forward-auth-standin.mjs" "$context/rootfs/opt/forward-auth/server.mjs"
cp "$node_binary" "$context/rootfs/usr/local/bin/node"
# The metadata first and one COPY last: on a vfs storage driver every step copies the filesystem.
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $base
EXPOSE 4180
ENTRYPOINT ["/usr/local/bin/node", "/opt/forward-auth/server.mjs"]
COPY rootfs /
DOCKERFILE

inputs=$( (docker image inspect --format '{{.Id}}' "$base"; cat "$context/rootfs/opt/forward-auth/server.mjs" "$context/Dockerfile"; sha256sum "$node_binary") | sha256sum | cut -c1-16)
current=$(docker image inspect --format '{{ index .Config.Labels "platform.test.inputs" }}' "$IMAGE" 2>/dev/null || true)
if [ "$current" = "$inputs" ]; then
  echo "$IMAGE is up to date"
else
  echo "building $IMAGE"
  docker build --quiet --label "platform.test.inputs=$inputs" --tag "$IMAGE" "$context" >/dev/null
  echo "$IMAGE built"
fi
echo "$IMAGE"
