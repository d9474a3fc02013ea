#!/usr/bin/env bash
# Builds the control plane's production image: the built JavaScript (npm run build), the
# repository's files it reads at run time, production node_modules only (pnpm install --prod
# from the lock file), this machine's node binary (20+) as the entry point, git and the docker
# CLI for the builds of this machine's agent, which runs inside the control plane.
#   bash scripts/build-control-plane-image.sh [--base IMAGE] [--tag IMAGE] [--agents DIRECTORY]
# --base (default debian:bookworm-slim) must be Debian or Ubuntu based (apt-get installs git);
# the tests use platform-test/debian:bookworm. --tag defaults to platform/control-plane:<commit>.
# --agents puts the agent executables of DIRECTORY (platform-agent-linux-<arch>) in the image in
# place of the ones this build makes: a release builds them once and serves the same files (the
# checksums it publishes) from the image of every architecture.
# The same script builds the release's images (.github/workflows/release.yml) and the image of
# `install.sh --from-source` on a server. A tree without node_modules (a fresh clone) gets the
# build's dependencies first, from the lock file with the pnpm that package.json pins.
# Idempotent: the image is rebuilt only when its inputs changed (hash in the label
# platform.inputs). Prints the image name on its last line.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
base=debian:bookworm-slim
tag=
agents=
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
  case "$1" in
    --base) base=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --agents) agents=$(cd "$2" && pwd); shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
tag=${tag:-platform/control-plane:$(git -C "$root" rev-parse --short=12 HEAD)}

node_binary=$(command -v node)
node_major=$("$node_binary" -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || { echo "node 20 or later is needed to build the image (found $("$node_binary" -v))" >&2; exit 1; }
docker_binary=$(command -v docker)

cd "$root"
if [ -n "$agents" ]; then
  agent_files=("$agents"/platform-agent-linux-*)
  [ -f "${agent_files[0]}" ] || { echo "--agents: no platform-agent-linux-<arch> in $agents" >&2; exit 2; }
fi
pnpm="pnpm@$(node -p 'require("./package.json").packageManager.split("@")[1]')"
if [ ! -d node_modules ]; then
  echo "installing the build's dependencies ($pnpm)"
  CI=true npx --yes "$pnpm" install --frozen-lockfile --prefer-offline </dev/null >/dev/null
fi
node scripts/build.mjs >/dev/null

# The files the image holds: every tracked file the control plane may read (its sources'
# neighbours: deploy/agent/install.sh, schemas, proto), without tests, docs and tooling.
files=$(git ls-files --cached --others --exclude-standard -- package.json pnpm-lock.yaml pnpm-workspace.yaml apps packages proto deploy \
  | grep -vE '(\.test\.ts|/testing/.*)$' | while read -r file; do [ -f "$file" ] && echo "$file"; done)
inputs=$( (
  docker image inspect --format '{{.Id}}' "$base" 2>/dev/null || echo "$base"
  sha256sum "$node_binary" "$docker_binary" dist/control-plane/main.js "$0"
  [ -z "$agents" ] || sha256sum "${agent_files[@]}"
  echo "$files" | xargs sha256sum
) | sha256sum | cut -c1-16)
current=$(docker image inspect --format '{{ index .Config.Labels "platform.inputs" }}' "$tag" 2>/dev/null || true)
if [ "$current" = "$inputs" ]; then
  echo "$tag is up to date"
  echo "$tag"
  exit 0
fi

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
# Everything the image adds goes in one COPY of rootfs/ (on a vfs storage driver each build step
# copies the whole filesystem, so the few heavy steps come last and the rest stays cached).
mkdir -p "$context/rootfs/opt/platform" "$context/rootfs/usr/local/bin"
echo "$files" | tar -cf - -T - | tar -C "$context/rootfs/opt/platform" -xf -
# dist/node-cache holds the node binaries of other architectures the agents were built from.
tar -cf - --exclude=dist/node-cache --exclude='*.tmp' --exclude='main.js.map' dist | tar -C "$context/rootfs/opt/platform" -xf -
# Copied after the bundle, so newer than it: the control plane serves an executable only then.
[ -z "$agents" ] || cp "${agent_files[@]}" "$context/rootfs/opt/platform/dist/agent/"
echo "installing the production node_modules"
(cd "$context/rootfs/opt/platform" && CI=true npx --yes "$pnpm" install --prod --frozen-lockfile --prefer-offline --config.confirmModulesPurge=false >/dev/null)
cp "$node_binary" "$docker_binary" "$context/rootfs/usr/local/bin/"
# MALLOC_MMAP_THRESHOLD_ and --max-semi-space-size=4 as in package.json's start (why: see
# bench/memory.ts, which measures them): glibc otherwise keeps a password hash's 16 MiB resident
# in each worker thread's arena, and V8 keeps the 2 x 16 MiB young generation grown at start.
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $base
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git ca-certificates openssh-client >/dev/null \\
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production PLATFORM_DATA_DIR=/var/lib/platform MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /opt/platform
EXPOSE 3000
ENTRYPOINT ["/usr/local/bin/node", "--max-semi-space-size=4", "dist/control-plane/main.js"]
COPY rootfs /
DOCKERFILE
echo "building $tag"
docker build --quiet --network host --label "platform.inputs=$inputs" --tag "$tag" "$context" >/dev/null
echo "$tag built"
echo "$tag"
