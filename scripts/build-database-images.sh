#!/usr/bin/env bash
# Builds the local images of the database services for tests (no registry can be pulled from
# here), from Debian's packages, with the environment contract of the official images. Their
# build contexts are scripts/database-images/<name>/ (each entrypoint.sh documents its contract):
#   platform-test/db-postgres:15       Debian bookworm's postgresql-15, as postgres:15
#                                      (POSTGRES_PASSWORD, POSTGRES_USER, POSTGRES_DB, PGDATA,
#                                      POSTGRES_HOST_AUTH_METHOD, "postgres -c …" commands)
#   platform-test/db-mariadb:11        Debian trixie's mariadb-server 11.8, as mariadb:11 and
#                                      mysql (MARIADB_* and MYSQL_* ROOT_PASSWORD, DATABASE,
#                                      USER, PASSWORD; 'root'@'%'); "mysqld …" runs mariadbd
#   platform-test/db-redis:7           Debian bookworm's redis-server 7.0, as redis:7
#                                      ("redis-server --requirepass …", data in /data)
#   platform-test/db-mongo-standin:8   NOT MongoDB (Debian packages none): busybox answering
#                                      TCP on 27017 behind the mongo image's
#                                      MONGO_INITDB_ROOT_USERNAME/PASSWORD checks and /data/db
#   platform-test/db-libsql-standin:0.24  NOT sqld (Debian packages none): Debian's python3
#                                      and SQLite answering sqld's HTTP API (GET /health,
#                                      /version, POST /v2/pipeline and /) behind SQLD_HTTP_AUTH,
#                                      SQLD_NODE and sqld's flags; data in /var/lib/sqld
# (platform-test/postgres:15 of scripts/build-stack-images.sh is the control plane's own
# database: it runs only "postgres" and needs no trust mode, so it is kept apart.)
# Each image drops apt's downloaded packages, documentation and translations (and postgres its
# LLVM JIT): Docker's vfs storage driver copies an image's whole tree for every container, so
# the suite's database containers start several times faster (postgres 589 → 238 MB).
# Idempotent and quick: an image is rebuilt only when its base or context changed (hash in the
# label platform.test.inputs). Prints the image names on its last line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
contexts=$here/database-images
docker info >/dev/null 2>&1 || { echo "Docker is not reachable: run scripts/docker-setup.sh" >&2; exit 1; }

# build IMAGE CONTEXT: docker build unless the label matches the hash of the base and context.
build() {
  local image=$1 context=$2 base inputs current
  base=$(sed -n 's/^FROM //p' "$context/Dockerfile" | head -1)
  inputs=$( (docker image inspect --format '{{.Id}}' "$base"; cd "$context" && for file in *; do echo "$file"; cat "$file"; done) | sha256sum | cut -c1-16)
  current=$(docker image inspect --format '{{ index .Config.Labels "platform.test.inputs" }}' "$image" 2>/dev/null || true)
  if [ "$current" = "$inputs" ]; then
    echo "$image is up to date"
    return
  fi
  echo "building $image"
  docker build --quiet --network host --label "platform.test.inputs=$inputs" --tag "$image" "$context" >/dev/null
  echo "$image built"
}

bash "$here/build-debian-image.sh" bookworm
bash "$here/build-debian-image.sh" trixie
if ! docker image inspect platform-test/busybox:latest >/dev/null 2>&1; then
  bash "$here/build-test-images.sh"
fi

build platform-test/db-postgres:15 "$contexts/postgres"
build platform-test/db-mariadb:11 "$contexts/mariadb"
build platform-test/db-redis:7 "$contexts/redis"
build platform-test/db-mongo-standin:8 "$contexts/mongo-standin"
build platform-test/db-libsql-standin:0.24 "$contexts/libsql-standin"
echo "platform-test/db-postgres:15 platform-test/db-mariadb:11 platform-test/db-redis:7 platform-test/db-mongo-standin:8 platform-test/db-libsql-standin:0.24"
