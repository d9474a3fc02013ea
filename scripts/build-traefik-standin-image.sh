#!/usr/bin/env bash
# Builds platform-test/traefik-standin:latest, the stand-in for the Traefik image in tests (no
# Traefik image can be pulled here). FROM platform-test/busybox:latest (built first by
# scripts/build-test-images.sh when missing). Its entrypoint accepts Traefik's arguments, refuses
# to start when the --configFile it is given cannot be read, and then serves, on Traefik's entry
# point ports 80, 443 and 8080, a page naming the image plus /traefik.yml (the static
# configuration it started with), until it is stopped.
# Idempotent and quick: rebuilt only when its inputs changed (hash in label platform.test.inputs).
set -euo pipefail

docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }

BASE=platform-test/busybox:latest
IMAGE=platform-test/traefik-standin:latest

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
  "$(dirname "$0")/build-test-images.sh"
fi

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cat >"$context/entrypoint.sh" <<'ENTRYPOINT'
#!/bin/sh
# Traefik stand-in: takes Traefik's command line (an optional leading "traefik", then --flags).
config=/etc/traefik/traefik.yml
for argument in "$@"; do
  case "$argument" in
    traefik) ;;
    --configFile=* | --configfile=*) config="${argument#*=}" ;;
    --*) ;;
    *) echo "traefik stand-in: unexpected argument: $argument" >&2; exit 2 ;;
  esac
done
if [ ! -r "$config" ]; then
  echo "traefik stand-in: cannot read the configuration file $config" >&2
  exit 1
fi
mkdir -p /tmp/www
echo "traefik stand-in" >/tmp/www/index.html
cp "$config" /tmp/www/traefik.yml
for port in 80 443 8080; do
  httpd -p "$port" -h /tmp/www || exit 1
done
echo "traefik stand-in: serving on 80, 443 and 8080 with $config"
trap 'exit 0' TERM INT
while :; do
  sleep 3600 &
  wait $!
done
ENTRYPOINT
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $BASE
COPY entrypoint.sh /entrypoint.sh
ENTRYPOINT ["/bin/sh", "/entrypoint.sh"]
CMD ["traefik"]
DOCKERFILE

base_id=$(docker image inspect --format '{{.Id}}' "$BASE")
inputs=$( (echo "$base_id"; cat "$context/entrypoint.sh" "$context/Dockerfile") | sha256sum | cut -c1-16)
current=$(docker image inspect --format '{{ index .Config.Labels "platform.test.inputs" }}' "$IMAGE" 2>/dev/null || true)
if [ "$current" = "$inputs" ]; then
  echo "$IMAGE is up to date"
  exit 0
fi

echo "building $IMAGE"
docker build --quiet --label "platform.test.inputs=$inputs" --tag "$IMAGE" "$context" >/dev/null
echo "$IMAGE built"
