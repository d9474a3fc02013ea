#!/bin/sh
# Entrypoint of platform-test/db-mongo-standin:8. A STAND-IN, NOT MONGODB: Debian packages no
# MongoDB and no registry can be pulled from here, so this image only lets a platform service
# built from the mongo image's contract start and be reached. It
#   - reads the official mongo entrypoint's MONGO_INITDB_ROOT_USERNAME and
#     MONGO_INITDB_ROOT_PASSWORD (or their _FILE forms) and, as it does, refuses to start when
#     only one of the two is given;
#   - takes mongod's command line ("mongod …", or arguments starting with "-"), of which it
#     honours --port only; any other command runs as is;
#   - keeps its data directory /data/db (recording there, when it is empty, the root user's
#     name) and answers every TCP connection on the port (default 27017) with one line saying
#     it is a stand-in, then closes it. It speaks no MongoDB protocol.
set -eu

fail() {
  echo "db-mongo-standin entrypoint: error: $*" >&2
  exit 1
}

from_env_or_file() {
  name=$1
  eval "value=\${$name:-} file=\${${name}_FILE:-}"
  if [ -n "$value" ] && [ -n "$file" ]; then
    fail "both $name and ${name}_FILE are set (they are exclusive)"
  fi
  if [ -n "$file" ]; then
    [ -r "$file" ] || fail "${name}_FILE names $file, which cannot be read"
    value=$(cat "$file")
  fi
  eval "$name=\$value"
}

if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
  set -- mongod "$@"
fi
if [ "$1" != mongod ]; then
  exec "$@"
fi
shift

port=27017
while [ "$#" -gt 0 ]; do
  case "$1" in
    --port) [ "$#" -ge 2 ] || fail "--port needs a value"; port=$2; shift ;;
    --port=*) port=${1#--port=} ;;
    *) ;;
  esac
  shift
done

from_env_or_file MONGO_INITDB_ROOT_USERNAME
from_env_or_file MONGO_INITDB_ROOT_PASSWORD
if [ -n "$MONGO_INITDB_ROOT_USERNAME" ] && [ -z "$MONGO_INITDB_ROOT_PASSWORD" ]; then
  fail "MONGO_INITDB_ROOT_USERNAME is set without MONGO_INITDB_ROOT_PASSWORD: both must be given for the root user to be created"
fi
if [ -z "$MONGO_INITDB_ROOT_USERNAME" ] && [ -n "$MONGO_INITDB_ROOT_PASSWORD" ]; then
  fail "MONGO_INITDB_ROOT_PASSWORD is set without MONGO_INITDB_ROOT_USERNAME: both must be given for the root user to be created"
fi

mkdir -p /data/db
if [ -z "$(ls -A /data/db)" ]; then
  printf 'root user: %s\n' "${MONGO_INITDB_ROOT_USERNAME:-(none, no authentication)}" >/data/db/platform-standin-initialized
  echo "db-mongo-standin: initialized /data/db"
fi

echo "db-mongo-standin: NOT MongoDB, a stand-in answering TCP connections on port $port"
nc -ll -p "$port" -e /usr/local/bin/mongo-standin-reply &
listener=$!
trap 'kill "$listener" 2>/dev/null; exit 0' TERM INT
wait "$listener"
