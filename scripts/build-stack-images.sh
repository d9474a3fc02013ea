#!/usr/bin/env bash
# Builds the local images of the production stack's dependencies for tests (no registry can be
# pulled from here), from Debian's packages, with the interface of the official images the stack
# names by default:
#   platform-test/postgres:15  Debian bookworm's postgresql-15; like postgres:16 it reads
#                              POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD_FILE and PGDATA and
#                              has pg_dump/psql on PATH
#   platform-test/nats:2.10    Debian trixie's nats-server (bookworm's 2.9 lacks JetStream's
#                              sync_interval); like nats:2.10 its entrypoint is nats-server
# Idempotent and quick: an image is rebuilt only when its inputs changed (hash in the label
# platform.test.inputs). Prints the image names on its last line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }

# build IMAGE CONTEXT: docker build unless the label matches the hash of the base and context.
build() {
  local image=$1 context=$2 base inputs current
  base=$(sed -n 's/^FROM //p' "$context/Dockerfile" | head -1)
  inputs=$( (docker image inspect --format '{{.Id}}' "$base"; cat "$context"/*) | sha256sum | cut -c1-16)
  current=$(docker image inspect --format '{{ index .Config.Labels "platform.test.inputs" }}' "$image" 2>/dev/null || true)
  if [ "$current" = "$inputs" ]; then
    echo "$image is up to date"
    return
  fi
  echo "building $image"
  docker build --quiet --network host --label "platform.test.inputs=$inputs" --tag "$image" "$context" >/dev/null
  echo "$image built"
}

bookworm=$(bash "$here/build-debian-image.sh" bookworm | tail -1)
trixie=$(bash "$here/build-debian-image.sh" trixie | tail -1)

postgres=$(mktemp -d)
nats=$(mktemp -d)
trap 'rm -rf "$postgres" "$nats"' EXIT

cat >"$postgres/entrypoint.sh" <<'ENTRYPOINT'
#!/bin/sh
# Stand-in for the official postgres image's entrypoint: first start initializes PGDATA with
# POSTGRES_USER and the password of POSTGRES_PASSWORD_FILE (scram-sha-256 over TCP), creates
# POSTGRES_DB, then runs postgres as the postgres user.
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
export PGDATA
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /run/postgresql
  chown -R postgres:postgres "$PGDATA" /run/postgresql
  chmod 700 "$PGDATA"
  exec runuser -u postgres -- "$0" "$@"
fi
user=${POSTGRES_USER:-postgres}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file=$(mktemp)
  if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then cat "$POSTGRES_PASSWORD_FILE" >"$password_file"; else printf '%s' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE is needed}" >"$password_file"; fi
  initdb -D "$PGDATA" -U "$user" --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password_file"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  database=${POSTGRES_DB:-$user}
  if [ "$database" != postgres ]; then
    echo "CREATE DATABASE \"$database\";" | postgres --single -D "$PGDATA" -j postgres >/dev/null
  fi
fi
exec postgres -D "$PGDATA" "$@"
ENTRYPOINT
cat >"$postgres/Dockerfile" <<DOCKERFILE
FROM $bookworm
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \\
 && rm -rf /var/lib/apt/lists/* /var/lib/postgresql/15 /etc/postgresql/15/main
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PGDATA=/var/lib/postgresql/data
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
RUN chmod 755 /usr/local/bin/docker-entrypoint.sh
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD []
DOCKERFILE

cat >"$nats/Dockerfile" <<DOCKERFILE
FROM $trixie
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nats-server >/dev/null \\
 && rm -rf /var/lib/apt/lists/*
EXPOSE 4222 8222
ENTRYPOINT ["nats-server"]
CMD ["--jetstream"]
DOCKERFILE

build platform-test/postgres:15 "$postgres"
build platform-test/nats:2.10 "$nats"
echo "platform-test/postgres:15 platform-test/nats:2.10"
