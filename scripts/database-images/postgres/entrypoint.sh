#!/bin/sh
# Entrypoint of platform-test/db-postgres:15 with the environment contract of the official
# postgres image's docker-entrypoint.sh (written anew, not copied):
#   POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE)  the superuser's password; required to
#                              initialize unless POSTGRES_HOST_AUTH_METHOD=trust
#   POSTGRES_USER              the superuser (default postgres)
#   POSTGRES_DB                the database created at initialization (default POSTGRES_USER)
#   POSTGRES_HOST_AUTH_METHOD  pg_hba method for remote hosts (default scram-sha-256)
#   POSTGRES_INITDB_ARGS       extra initdb arguments
#   PGDATA                     the data directory (default /var/lib/postgresql/data)
# The data directory is initialized only when it holds no cluster; the server then listens on
# all addresses, port 5432, as the postgres user. A command starting with "-" is given to
# postgres ("-c max_connections=50"); "postgres …" runs postgres with those arguments; any
# other command runs as is (psql, pg_dump, bash).
set -eu

fail() {
  echo "db-postgres entrypoint: error: $*" >&2
  exit 1
}

# VAR or VAR_FILE (the file's content), never both.
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
  export "$name"
  unset "${name}_FILE"
}

if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
  set -- postgres "$@"
fi
if [ "$1" != postgres ]; then
  exec "$@"
fi

PGDATA=${PGDATA:-/var/lib/postgresql/data}
export PGDATA

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres /var/run/postgresql
  chmod 2775 /var/run/postgresql
  # Only what is not the postgres user's already: a large existing cluster is left as it is.
  find "$PGDATA" \! -user postgres -exec chown postgres:postgres '{}' +
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  from_env_or_file POSTGRES_PASSWORD
  from_env_or_file POSTGRES_USER
  from_env_or_file POSTGRES_DB
  POSTGRES_USER=${POSTGRES_USER:-postgres}
  POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
  auth_method=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  if [ -z "$POSTGRES_PASSWORD" ] && [ "$auth_method" != trust ]; then
    fail "the database is uninitialized and the superuser password is not specified.
  Set POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE) to a non-empty value, or
  POSTGRES_HOST_AUTH_METHOD=trust to allow every connection without a password."
  fi
  if [ "$auth_method" = md5 ]; then encryption=md5; else encryption=scram-sha-256; fi

  echo "db-postgres entrypoint: initializing $PGDATA for user $POSTGRES_USER"
  password_file=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of arguments, as upstream.
  initdb --username="$POSTGRES_USER" --pwfile="$password_file" --auth-local=trust \
    --auth-host="$auth_method" ${POSTGRES_INITDB_ARGS:-} >/dev/null
  rm -f "$password_file"
  {
    echo "listen_addresses = '*'"
    echo "password_encryption = $encryption"
  } >>"$PGDATA/postgresql.conf"
  echo "host all all all $auth_method" >>"$PGDATA/pg_hba.conf"

  # The database through a server on the Unix socket only: no remote client can connect
  # before the cluster is complete.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    # psql quotes the name (:"name"); variables are interpolated in its input, not in -c.
    echo 'CREATE DATABASE :"name";' | psql -v ON_ERROR_STOP=1 --no-psqlrc --quiet \
      --username="$POSTGRES_USER" --dbname=postgres --set=name="$POSTGRES_DB" >/dev/null
  fi
  if [ -d /docker-entrypoint-initdb.d ]; then
    for script in /docker-entrypoint-initdb.d/*; do
      case "$script" in
        *.sh) echo "running $script"; . "$script" ;;
        *.sql) echo "running $script"; psql -v ON_ERROR_STOP=1 --no-psqlrc --username="$POSTGRES_USER" --dbname="$POSTGRES_DB" -f "$script" ;;
        *) ;;
      esac
    done
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "db-postgres entrypoint: initialization complete"
fi

exec "$@"
