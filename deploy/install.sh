#!/usr/bin/env bash
# Installs Platform on this server in one command, or upgrades it (--upgrade), as root on
# Debian 12/13 or Ubuntu 22.04/24.04. A release's install.sh installs that release's control
# plane image (ghcr.io/<owner>/<repository>:<version>, written into its copy of this file):
#   curl -fsSL https://github.com/<owner>/<repository>/releases/download/<version>/install.sh | sudo bash
# This file as it is in the repository names no image: give --image, or build it here with
# --from-source.
# It installs Docker (the distribution's docker.io) and curl when missing, makes this machine a
# single-node Swarm, creates the overlay network the applications and Traefik share, generates
# the secrets (Postgres password, NATS operator/account keys and the control plane's NATS
# credentials, the control plane's secret key, the set-up token) as Docker secrets, deploys the
# stack (Postgres, NATS, Traefik, the control plane with this machine's agent; deploy/stack.yml,
# read from the control plane's image so it always matches the version), waits until every copy
# of the control plane runs the image and answers through Traefik and prints its URL, and, while no account exists, the set-up token the first
# registration needs (the control plane is reachable from the network before anyone owns it). Running it again changes nothing: secrets and data are kept, and an
# unchanged stack (same file, settings and images) is not redeployed. A run interrupted at any
# point (even killed) is finished by running the same command again (tests/install/stack.test.ts
# kills it at several points of an install and of an upgrade).
#
#   --upgrade           move the installed stack to the image (this release's, --image's or
#                       --from-source's): backs the database up first (pg_dump into
#                       <backup directory>/platform-<stack>-<UTC time>.sql, named in the output),
#                       then redeploys; the new control plane applies migrations. The copies of
#                       the control plane are replaced one at a time, each new one healthy before
#                       an old one stops: the API keeps answering through the upgrade (migrations
#                       only add, so the old copies run on the new schema until replaced)
#   --replicas N        run N copies of the control plane (default 1, or the install's), one Swarm
#                       service behind Traefik. PostgreSQL is then the one stateful part: the
#                       stack's single postgres service, or an external highly available one
#                       given as the stack's database-url secret (see docs/ha.md). On a Swarm
#                       with three managers or more, NATS runs as a JetStream cluster of three
#                       (deploy/stack-nats-cluster.yml), one server per manager
#   --image IMAGE       the control plane's image (default: this release's)
#   --from-source SOURCE [--ref REF]
#                       instead of an image, build one on this server from a git URL (https://,
#                       ssh://, git://, file://, user@host:path) or a local git directory: clones it,
#                       checks REF out (a commit, tag or branch; default the source's HEAD) and
#                       runs its scripts/build-control-plane-image.sh, the script the release
#                       workflow builds with. Needs git (installed when missing), Node.js 20+
#                       with npx on this server, the npm registry (the build's dependencies) and
#                       Debian's or Ubuntu's package mirror (the image's git). The image is
#                       platform/control-plane:<commit>, on this machine only (single-node Swarm).
#   --base-image IMAGE  the base of the image --from-source builds (default debian:bookworm-slim;
#                       Debian or Ubuntu based)
#                       On a machine that cannot reach a container registry, --from-source needs a
#                       local --base-image and the other images local too: --postgres-image,
#                       --nats-image and --traefik-image (tests/install/from-source.test.ts does so)
#   --postgres-image, --nats-image, --traefik-image IMAGE
#                       default postgres:16, nats:2.10, traefik:v3
#   --stack NAME        default platform;  --network NAME  default platform-network
#   --http-port, --https-port, --port, --nats-port N
#                       Traefik's published ports (default 80, 443), the control plane's (3000,
#                       Traefik's entry point platform-api, which reaches every copy) and NATS's
#                       client port for the agents of other servers (4222)
#   --main-directory D  default /etc/platform (Traefik's configuration, builds)
#   --backup-directory D default /var/backups/platform
#   --url URL           the URL agents and users reach the control plane at (default
#                       http://<this server's address>:<port>)
#   --nats-url URL      the NATS URL handed to the agents of other servers (default
#                       nats://<this server's address>:<nats port>)
#   --timeout SECONDS   how long to wait for the control plane (default 300)
#   -h, --help          print this
# The settings of an install are kept in <main directory>/install-<stack>.env; --upgrade reads them.
set -euo pipefail

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

# The control plane image of the release this file belongs to: written on this line when the
# release is made (scripts/stamp-install-script.sh), empty in the repository.
release_image=

usage() {
  sed -n '2,/^# The settings of an install/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" 2>/dev/null ||
    echo "the options are at the top of this script: download it, then run bash install.sh --help"
}

upgrade=false
image=
from_source=
ref=
base_image=
postgres_image=
nats_image=
traefik_image=
stack=platform
network=
http_port=
https_port=
port=
nats_port=
replicas=
nats_url=
main_directory=/etc/platform
backup_directory=/var/backups/platform
url=
timeout=300
while [ $# -gt 0 ]; do
  case "$1" in -h | --help) usage; exit 0 ;; esac
  [ $# -ge 2 ] || [ "$1" = --upgrade ] || fail "$1 needs a value"
  case "$1" in
    --upgrade) upgrade=true; shift; continue ;;
    --image) image=$2 ;;
    --from-source) from_source=$2 ;;
    --ref) ref=$2 ;;
    --base-image) base_image=$2 ;;
    --postgres-image) postgres_image=$2 ;;
    --nats-image) nats_image=$2 ;;
    --traefik-image) traefik_image=$2 ;;
    --stack) stack=$2 ;;
    --network) network=$2 ;;
    --http-port) http_port=$2 ;;
    --https-port) https_port=$2 ;;
    --port) port=$2 ;;
    --nats-port) nats_port=$2 ;;
    --replicas) replicas=$2 ;;
    --nats-url) nats_url=$2 ;;
    --main-directory) main_directory=$2 ;;
    --backup-directory) backup_directory=$2 ;;
    --url) url=$2 ;;
    --timeout) timeout=$2 ;;
    *) fail "unknown argument: $1" ;;
  esac
  shift 2
done

# The source and the ref reach git as arguments only, never through a shell: a leading - (an
# option), spaces, shell metacharacters and git's <transport>::<address> form are refused.
if [ -n "$from_source" ]; then
  [ -z "$image" ] || fail "--image and --from-source exclude each other (--from-source builds the image)"
  [[ "$from_source" != -* && "$from_source" =~ ^[A-Za-z0-9_./~:@+=%-]+$ && "$from_source" != *::* ]] ||
    fail "--from-source takes a git URL or a directory, without spaces, shell metacharacters or a leading - (got $from_source)"
fi
if [ -n "$ref" ]; then
  [ -n "$from_source" ] || fail "--ref goes with --from-source"
  [[ "$ref" != -* && "$ref" =~ ^[A-Za-z0-9_./+-]+$ && "$ref" != *..* ]] ||
    fail "--ref takes a commit, tag or branch name, without spaces, shell metacharacters, .. or a leading - (got $ref)"
fi
[ -z "$base_image" ] || [ -n "$from_source" ] || fail "--base-image goes with --from-source"
image=${image:-$release_image}
[ -n "$image" ] || [ -n "$from_source" ] || fail "no control plane image: this install.sh is the repository's, \
not a release's (a release's names its own image). Give --image <control plane image>, or \
--from-source <git URL or directory> [--ref REF] to build the image on this server"
[ "$(id -u)" = 0 ] || fail "run it as root (sudo)"
[[ "$stack" =~ ^[a-z0-9][a-z0-9_-]*$ ]] || fail "--stack must be lower-case letters, digits, - and _"

settings="$main_directory/install-$stack.env"
if $upgrade; then
  [ -f "$settings" ] || fail "no install of stack $stack found ($settings is missing)"
  # shellcheck disable=SC1090
  . "$settings"
fi
# Command-line values win over the kept settings; defaults fill the rest.
postgres_image=${postgres_image:-${PLATFORM_POSTGRES_IMAGE:-postgres:16}}
nats_image=${nats_image:-${PLATFORM_NATS_IMAGE:-nats:2.10}}
traefik_image=${traefik_image:-${PLATFORM_TRAEFIK_IMAGE:-traefik:v3}}
network=${network:-${PLATFORM_NETWORK:-platform-network}}
http_port=${http_port:-${PLATFORM_HTTP_PORT:-80}}
https_port=${https_port:-${PLATFORM_HTTPS_PORT:-443}}
port=${port:-${PLATFORM_CONTROL_PLANE_PORT:-3000}}
nats_port=${nats_port:-${PLATFORM_NATS_PORT:-4222}}
replicas=${replicas:-${PLATFORM_CONTROL_PLANE_REPLICAS:-1}}
for value in "$http_port" "$https_port" "$port" "$nats_port" "$timeout"; do
  [[ "$value" =~ ^[0-9]+$ ]] || fail "ports and --timeout are numbers (got $value)"
done
[[ "$replicas" =~ ^[1-9][0-9]?$ ]] || fail "--replicas is a number from 1 to 99 (got $replicas)"

# ---- Docker, curl, Swarm, network -------------------------------------------------------------
if ! command -v docker >/dev/null || ! command -v curl >/dev/null; then
  command -v apt-get >/dev/null || fail "Docker is not installed and this is not Debian or Ubuntu: install Docker first"
  echo "installing Docker and curl from the distribution"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io curl ca-certificates >/dev/null
  systemctl enable --now docker >/dev/null 2>&1 || true
fi
docker info >/dev/null 2>&1 || fail "the Docker Engine does not answer"

# The generated values pass through this directory only while they become secrets (and a
# --from-source clone while its image builds); a run killed before its end leaves it behind, and
# the next run removes it first.
work="${TMPDIR:-/tmp}/platform-install-$stack"
rm -rf "$work"
mkdir -m 700 "$work"
trap 'rm -rf "$work"' EXIT

# ---- the control plane's image, built here with --from-source ---------------------------------
if [ -n "$from_source" ]; then
  if ! command -v git >/dev/null; then
    command -v apt-get >/dev/null || fail "--from-source needs git: install it first"
    echo "installing git from the distribution"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git >/dev/null
  fi
  command -v node >/dev/null && command -v npx >/dev/null &&
    [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] ||
    fail "--from-source builds with Node.js 20 or later and npx: install them first (found: $(node -v 2>/dev/null || echo none))"
  location=$from_source
  [ ! -d "$from_source" ] || location=$(cd "$from_source" && pwd)
  echo "cloning $from_source"
  git -c protocol.ext.allow=never clone --quiet --no-checkout -- "$location" "$work/source" ||
    fail "could not clone $from_source"
  commit=$(git -C "$work/source" rev-parse --verify --quiet "${ref:-HEAD}^{commit}" ||
    git -C "$work/source" rev-parse --verify --quiet "origin/$ref^{commit}") ||
    fail "$from_source has no commit, tag or branch ${ref:-HEAD}"
  git -C "$work/source" checkout --quiet --detach "$commit"
  [ -f "$work/source/scripts/build-control-plane-image.sh" ] ||
    fail "$from_source at $commit has no scripts/build-control-plane-image.sh: not Platform's source"
  echo "building the control plane's image from $from_source at $commit"
  build_options=()
  [ -z "$base_image" ] || build_options+=(--base "$base_image")
  bash "$work/source/scripts/build-control-plane-image.sh" "${build_options[@]}" | tee "$work/build.log"
  image=$(tail -n 1 "$work/build.log")
  rm -rf "$work/source" "$work/build.log"
fi

# ---- Swarm and network ------------------------------------------------------------------------
if [ "$(docker info --format '{{.Swarm.LocalNodeState}}')" != active ]; then
  address=$(hostname -I 2>/dev/null | awk '{print $1}')
  echo "making this machine a single-node Swarm"
  docker swarm init --advertise-addr "${address:-127.0.0.1}" >/dev/null
fi
if ! docker network inspect "$network" >/dev/null 2>&1; then
  docker network create --driver overlay --attachable "$network" >/dev/null
fi
# The node whose Docker socket, directories and volumes the stack uses: this one.
node_id=$(docker info --format '{{.Swarm.NodeID}}')
[ -n "$node_id" ] || fail "this machine's Swarm node id is unknown"

# ---- NATS: a JetStream cluster of three when the Swarm has three managers -----------------------
# Three managers (this node and two others, chosen once and kept by their node labels
# platform.nats.<stack>=1, 2, 3) each run one NATS server (deploy/stack-nats-cluster.yml).
nats_label="platform.nats.$stack"
nats_cluster=false
managers=$(docker node ls --filter role=manager --format '{{.ID}}' 2>/dev/null | wc -l)
if [ "$managers" -ge 3 ]; then
  nats_cluster=true
  # The NATS slot of a node (its label's value), empty when it has none.
  slot_of() { docker node inspect --format "{{ index .Spec.Labels \"$nats_label\" }}" "$1"; }
  # The node holding a slot, if any.
  labelled() {
    for node in $(docker node ls -q); do
      [ "$(slot_of "$node")" != "$1" ] || { echo "$node"; break; }
    done
  }
  [ -n "$(labelled 1)" ] || docker node update --label-add "$nats_label=1" "$node_id" >/dev/null
  for slot in 2 3; do
    [ -z "$(labelled "$slot")" ] || continue
    candidate=$(docker node ls --filter role=manager --format '{{.ID}} {{.Status}}' | awk '$2 == "Ready" { print $1 }' |
      while read -r manager; do
        [ -n "$(slot_of "$manager")" ] || echo "$manager"
      done | awk 'NR == 1')
    [ -n "$candidate" ] || fail "no third ready manager for the NATS cluster: $managers managers, fewer than three ready"
    docker node update --label-add "$nats_label=$slot" "$candidate" >/dev/null
  done
fi

# ---- main directory and Traefik's static configuration ----------------------------------------
mkdir -p "$main_directory/traefik/dynamic" "$backup_directory"
chmod 700 "$backup_directory"
# Files are written beside and renamed into place: a run killed half-way leaves the old file or
# the whole new one, never half of one that a later run would take as it is.
write_file() {
  cat >"$1.partial"
  mv -f "$1.partial" "$1"
}
# The entry point platform-api (port 3000 in Traefik's container, published on the control
# plane's port) serves the control plane's API, reached through Traefik since its copies publish
# no port. A traefik.yml of an earlier install gets it added under entryPoints.
# The access log is JSON with the User-Agent kept, as settings.toggleRequests writes it
# (Traefik drops request headers from the access log unless told to keep them).
if [ ! -f "$main_directory/traefik/traefik.yml" ]; then
  write_file "$main_directory/traefik/traefik.yml" <<'TRAEFIK'
entryPoints:
  web:
    address: ":80"
  websecure:
    address: ":443"
  platform-api:
    address: ":3000"
providers:
  file:
    directory: /etc/traefik/dynamic
    watch: true
accessLog:
  filePath: /etc/traefik/access.log
  format: json
  fields:
    headers:
      names:
        User-Agent: keep
TRAEFIK
elif ! grep -qE '^  platform-api:' "$main_directory/traefik/traefik.yml"; then
  grep -qE '^entryPoints:[[:space:]]*$' "$main_directory/traefik/traefik.yml" ||
    fail "$main_directory/traefik/traefik.yml has no entryPoints: block to add the entry point platform-api (address \":3000\") to: add it by hand"
  awk '{ print } /^entryPoints:[[:space:]]*$/ { print "  platform-api:"; print "    address: \":3000\"" }' \
    "$main_directory/traefik/traefik.yml" | write_file "$main_directory/traefik/traefik.yml"
fi
# Every request on platform-api goes to the control plane's copies (their DNS name on the platform
# network resolves to the healthy ones only), retried on another copy when a copy is stopping.
write_file "$main_directory/traefik/dynamic/platform-api-entrypoint.yml" <<'ROUTE'
http:
  routers:
    platform-api-entrypoint:
      entryPoints:
        - platform-api
      rule: PathPrefix(`/`)
      priority: 1000000
      service: platform-api-entrypoint
      middlewares:
        - platform-api-entrypoint-retry
  middlewares:
    platform-api-entrypoint-retry:
      retry:
        attempts: 3
        initialInterval: 100ms
  services:
    platform-api-entrypoint:
      loadBalancer:
        passHostHeader: true
        servers:
          - url: http://platform-control-plane:3000
ROUTE

# ---- secrets (made once; never replaced) ------------------------------------------------------
has_secret() { docker secret inspect "${stack}_$1" >/dev/null 2>&1; }
# Each generated file is removed as soon as it is a secret.
make_secret() { docker secret create --label "platform.stack=$stack" "${stack}_$1" "$2" >/dev/null && rm -f "$2"; }
random() { head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c "$1"; }

# The password is made last: a run killed between the two leaves no password without its URL
# (the URL alone is replaced), and once the password exists it is never replaced, since
# Postgres initialized its data volume with it.
if ! has_secret postgres-password; then
  has_secret database-url && docker secret rm "${stack}_database-url" >/dev/null
  password=$(random 32)
  printf '%s' "$password" >"$work/postgres-password"
  printf 'postgres://platform:%s@postgres:5432/platform' "$password" >"$work/database-url"
  make_secret database-url "$work/database-url"
  make_secret postgres-password "$work/postgres-password"
fi
has_secret database-url || fail "the secret ${stack}_database-url is missing while ${stack}_postgres-password exists: \
recreate it with the database's password (postgres://platform:<password>@postgres:5432/platform)"
if ! has_secret secret-key; then
  random 48 >"$work/secret-key"
  make_secret secret-key "$work/secret-key"
fi
# Only the first account's registration needs it; the control plane reads it from the secret.
if ! has_secret setup-token; then
  random 32 >"$work/setup-token"
  make_secret setup-token "$work/setup-token"
fi
if ! has_secret nats-conf || ! has_secret nats-creds || ! has_secret nats-account-seed; then
  echo "generating the NATS operator, accounts and the control plane's credentials"
  for name in nats-conf nats-creds nats-account-seed; do
    has_secret "$name" && docker secret rm "${stack}_$name" >/dev/null
  done
  mkdir -p "$work/nats"
  docker run --rm --network none -v "$work/nats:/out" --entrypoint /usr/local/bin/node "$image" \
    apps/control-plane/bin/nats-keys.mjs /out
  make_secret nats-conf "$work/nats/nats.conf"
  make_secret nats-creds "$work/nats/control-plane.creds"
  make_secret nats-account-seed "$work/nats/account-seed"
fi

# ---- backup before an upgrade -----------------------------------------------------------------
if $upgrade; then
  container=$(docker ps -q --filter "label=com.docker.swarm.service.name=${stack}_postgres" | head -1)
  [ -n "$container" ] || fail "the database of stack $stack is not running: no backup, no upgrade"
  backup="$backup_directory/platform-$stack-$(date -u +%Y%m%dT%H%M%SZ).sql"
  echo "backing the database up to $backup"
  # Named .sql only once complete: a run killed during the dump leaves a .partial file, which
  # the next run removes.
  rm -f "$backup_directory/platform-$stack-"*.sql.partial
  docker exec "$container" pg_dump -U platform -d platform >"$backup.partial" || fail "pg_dump failed: no upgrade"
  [ -s "$backup.partial" ] || fail "the backup $backup is empty: no upgrade"
  mv "$backup.partial" "$backup"
fi

# ---- deploy -----------------------------------------------------------------------------------
address=$(hostname -I 2>/dev/null | awk '{print $1}')
url=${url:-${PLATFORM_URL:-http://${address:-127.0.0.1}:$port}}
nats_url=${nats_url:-${PLATFORM_NATS_AGENT_URL:-nats://${address:-127.0.0.1}:$nats_port}}
export PLATFORM_STACK=$stack PLATFORM_IMAGE=$image PLATFORM_POSTGRES_IMAGE=$postgres_image \
  PLATFORM_NATS_IMAGE=$nats_image PLATFORM_TRAEFIK_IMAGE=$traefik_image PLATFORM_NETWORK=$network \
  PLATFORM_HTTP_PORT=$http_port PLATFORM_HTTPS_PORT=$https_port PLATFORM_CONTROL_PLANE_PORT=$port \
  PLATFORM_NATS_PORT=$nats_port PLATFORM_MAIN_DIRECTORY=$main_directory PLATFORM_URL=$url \
  PLATFORM_NATS_AGENT_URL=$nats_url PLATFORM_CONTROL_PLANE_REPLICAS=$replicas PLATFORM_NODE_ID=$node_id
{
  for variable in PLATFORM_IMAGE PLATFORM_POSTGRES_IMAGE PLATFORM_NATS_IMAGE PLATFORM_TRAEFIK_IMAGE \
    PLATFORM_NETWORK PLATFORM_HTTP_PORT PLATFORM_HTTPS_PORT PLATFORM_CONTROL_PLANE_PORT PLATFORM_NATS_PORT \
    PLATFORM_URL PLATFORM_NATS_AGENT_URL PLATFORM_CONTROL_PLANE_REPLICAS; do
    printf '%s=%q\n' "$variable" "${!variable}"
  done
} | (umask 077 && write_file "$settings")

docker run --rm --network none --entrypoint cat "$image" deploy/stack.yml >"$work/stack.yml"
stack_files=(-c "$work/stack.yml")
if $nats_cluster; then
  docker run --rm --network none --entrypoint cat "$image" deploy/stack-nats-cluster.yml >"$work/stack-nats-cluster.yml" ||
    fail "the image $image has no deploy/stack-nats-cluster.yml: it cannot run NATS as a cluster (use a newer image)"
  stack_files+=(-c "$work/stack-nats-cluster.yml")
fi
deploy_options=()
# Newer CLIs wait for the services by default; this script waits for the control plane itself.
docker stack deploy --help 2>/dev/null | grep -q -- --detach && deploy_options+=(--detach=true)
# Images only this machine has (built here, no registry) are used as they are.
local_images=true
for name in "$image" "$postgres_image" "$nats_image" "$traefik_image"; do
  docker image inspect "$name" >/dev/null 2>&1 || local_images=false
done
$local_images && deploy_options+=(--resolve-image never)
# The same stack file with the same settings is not deployed again while every service exists:
# `docker stack deploy` lists a service's bind mounts in no fixed order, so a redeploy of an
# unchanged stack could still restart the control plane.
deployed="$main_directory/install-$stack.deployed"
fingerprint=$( (
  cat "$work/stack.yml" "$settings"
  ! $nats_cluster || cat "$work/stack-nats-cluster.yml"
  echo "$node_id ${deploy_options[*]}"
  for name in "$image" "$postgres_image" "$nats_image" "$traefik_image"; do
    docker image inspect --format '{{.Id}}' "$name" 2>/dev/null || echo "$name"
  done
) | sha256sum | cut -d' ' -f1)
services_exist=true
for service in postgres nats traefik control-plane; do
  docker service inspect "${stack}_$service" >/dev/null 2>&1 || services_exist=false
done
if $services_exist && [ -f "$deployed" ] && [ "$(cat "$deployed")" = "$fingerprint" ]; then
  echo "stack $stack is deployed with these settings already: unchanged"
else
  echo "deploying stack $stack (control plane $image)"
  docker stack deploy "${deploy_options[@]}" "${stack_files[@]}" "$stack" >/dev/null
  echo "$fingerprint" | write_file "$deployed"
fi

# ---- wait until every copy of the new control plane is ready -----------------------------------
# Each of the $replicas copies the Swarm wants running runs the image (an update replaces them one
# at a time, so the older ones run on meanwhile), and the API answers through Traefik.
started=$(date +%s)
new_task_running() {
  docker service ps "${stack}_control-plane" --filter desired-state=running --format '{{.Image}} {{.CurrentState}}' 2>/dev/null |
    awk -v image="$image" -v replicas="$replicas" '
      { tasks++ }
      ($1 == image || index($1, image "@") == 1) && $2 == "Running" { running++ }
      END { exit !(tasks == replicas && running == replicas) }'
}
until new_task_running &&
  curl -fsS -o /dev/null "http://127.0.0.1:$port/health/ready" 2>/dev/null; do
  if [ $(($(date +%s) - started)) -ge "$timeout" ]; then
    docker service ps --no-trunc "${stack}_control-plane" >&2 || true
    docker service logs --tail 30 "${stack}_control-plane" >&2 || true
    fail "the control plane was not ready after ${timeout}s"
  fi
  sleep 2
done
echo "Platform is ready at $url (took $(($(date +%s) - started))s after the deploy)"
if [ "$replicas" -gt 1 ]; then
  echo "$replicas copies of the control plane run behind Traefik; PostgreSQL is the one stateful part: back it up, or give the copies an external highly available PostgreSQL (docs/ha.md)"
fi

# ---- the set-up token, while no account exists -----------------------------------------------
# The page says whether an account exists (data-first-run); when it cannot tell, the token is
# printed. The token is read from the running control plane's secret (Docker gives no other
# way back to a secret's value).
page=$(curl -fsS "http://127.0.0.1:$port/" 2>/dev/null) || page=
if [[ "$page" != *'data-first-run="false"'* ]]; then
  container=$(docker ps -q --filter "label=com.docker.swarm.service.name=${stack}_control-plane" | head -n 1)
  setup_token=$(docker exec "$container" cat /run/secrets/setup-token 2>/dev/null) || setup_token=
  if [ -n "$setup_token" ]; then
    echo "Set-up token: $setup_token"
    echo "  No account exists yet: the first one needs this token. Open $url/?setup=$setup_token"
  else
    echo "No account exists yet: the first one needs the set-up token; once the control plane runs, read it with" >&2
    echo "  docker exec \$(docker ps -q --filter label=com.docker.swarm.service.name=${stack}_control-plane) cat /run/secrets/setup-token" >&2
  fi
fi
