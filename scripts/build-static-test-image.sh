#!/usr/bin/env bash
# Builds platform-test/static-httpd:latest, the base image the agent's tests use for static
# builds (no registry is reachable, so nginx cannot be pulled): platform-test/busybox running
# busybox httpd on port 80, serving /www with /etc/httpd.conf (the build writes both).
# The agent uses it with PLATFORM_STATIC_IMAGE=platform-test/static-httpd:latest and
# PLATFORM_STATIC_IMAGE_FLAVOR=busybox-httpd. Idempotent: rebuilt only when its inputs changed.
set -euo pipefail

docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }
BASE=platform-test/busybox:latest
IMAGE=platform-test/static-httpd:latest
docker image inspect "$BASE" >/dev/null 2>&1 || "$(dirname "$0")/build-test-images.sh"

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $BASE
RUN mkdir -p /www && touch /etc/httpd.conf
EXPOSE 80
CMD ["/bin/httpd", "-f", "-v", "-p", "80", "-h", "/www", "-c", "/etc/httpd.conf"]
DOCKERFILE

base_id=$(docker image inspect --format '{{.Id}}' "$BASE")
inputs=$( (cat "$context/Dockerfile"; echo "$base_id") | sha256sum | cut -c1-16)
current=$(docker image inspect --format '{{ index .Config.Labels "platform.test.inputs" }}' "$IMAGE" 2>/dev/null || true)
if [ "$current" = "$inputs" ]; then
  echo "$IMAGE is up to date"
  exit 0
fi
echo "building $IMAGE"
DOCKER_BUILDKIT=0 docker build --quiet --label "platform.test.inputs=$inputs" --tag "$IMAGE" "$context" >/dev/null
echo "$IMAGE built"
