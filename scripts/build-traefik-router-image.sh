#!/usr/bin/env bash
# Builds platform-test/traefik-router:latest, the routing stand-in for Traefik in the production
# stack's test (no Traefik image can be pulled here): scripts/traefik-router-standin.mjs bundled
# with its YAML parser (esbuild) and run by this machine's node (20+), FROM
# platform-test/debian:bookworm (built by scripts/build-debian-image.sh when missing). Its
# command line is Traefik's (`traefik --configFile=...`); it routes HTTP by the file provider's
# routers (see the script's header for what it understands).
# Idempotent and quick: rebuilt only when its inputs changed (hash in label platform.test.inputs).
# Prints the image name on its last line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
IMAGE=platform-test/traefik-router:latest
docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }

base=$(bash "$here/build-debian-image.sh" bookworm | tail -1)
node_binary=$(command -v node)

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/rootfs/opt/traefik-router" "$context/rootfs/usr/local/bin"
"$root/node_modules/.bin/esbuild" "$here/traefik-router-standin.mjs" --bundle --platform=node --format=cjs \
  --target=node20 --log-level=warning --outfile="$context/rootfs/opt/traefik-router/router.cjs"
cp "$node_binary" "$context/rootfs/usr/local/bin/node"
# The metadata first and one COPY last: on a vfs storage driver every step copies the filesystem.
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $base
EXPOSE 80 443
ENTRYPOINT ["/usr/local/bin/node", "/opt/traefik-router/router.cjs"]
CMD ["traefik"]
COPY rootfs /
DOCKERFILE

inputs=$( (docker image inspect --format '{{.Id}}' "$base"; cat "$context/rootfs/opt/traefik-router/router.cjs" "$context/Dockerfile"; sha256sum "$node_binary") | sha256sum | cut -c1-16)
current=$(docker image inspect --format '{{ index .Config.Labels "platform.test.inputs" }}' "$IMAGE" 2>/dev/null || true)
if [ "$current" = "$inputs" ]; then
  echo "$IMAGE is up to date"
else
  echo "building $IMAGE"
  docker build --quiet --label "platform.test.inputs=$inputs" --tag "$IMAGE" "$context" >/dev/null
  echo "$IMAGE built"
fi
echo "$IMAGE"
