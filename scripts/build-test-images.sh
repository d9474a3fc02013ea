#!/usr/bin/env bash
# Builds the local test images the suites use (no registry can be pulled from):
#   platform-test/busybox:latest  FROM scratch + Debian's static busybox (sh, httpd, ...)
# Idempotent and quick: an image is rebuilt only when its inputs changed (their hash is kept
# in the image label platform.test.inputs).
set -euo pipefail

docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }

if ! dpkg -s busybox-static >/dev/null 2>&1; then
  echo "installing busybox-static"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq busybox-static >/dev/null
fi

BUSYBOX=/bin/busybox
IMAGE=platform-test/busybox:latest

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$BUSYBOX" "$context/busybox"
mkdir -p "$context/www"
echo "platform test image" >"$context/www/index.html"
cat >"$context/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
COPY www /www
WORKDIR /www
ENV PATH=/bin
CMD ["/bin/sh"]
DOCKERFILE

inputs=$(cat "$context/busybox" "$context/Dockerfile" "$context/www/index.html" | sha256sum | cut -c1-16)
current=$(docker image inspect --format '{{ index .Config.Labels "platform.test.inputs" }}' "$IMAGE" 2>/dev/null || true)
if [ "$current" = "$inputs" ]; then
  echo "$IMAGE is up to date"
  exit 0
fi

echo "building $IMAGE"
docker build --quiet --label "platform.test.inputs=$inputs" --tag "$IMAGE" "$context" >/dev/null
echo "$IMAGE built"
