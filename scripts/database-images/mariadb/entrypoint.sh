#!/bin/sh
# Entrypoint of platform-test/db-mariadb:11 with the environment contract of the official
# mariadb image (and of the mysql image, whose MYSQL_* names it also reads; written anew, not
# copied). Each MARIADB_X may be given as MYSQL_X, and as MARIADB_X_FILE / MYSQL_X_FILE:
#   MARIADB_ROOT_PASSWORD            root's password, for 'root'@'localhost' and
#                                    'root'@MARIADB_ROOT_HOST (default '%', remote login)
#   MARIADB_ALLOW_EMPTY_ROOT_PASSWORD / MARIADB_RANDOM_ROOT_PASSWORD   the alternatives to it
#   MARIADB_DATABASE                 a database created at initialization
#   MARIADB_USER, MARIADB_PASSWORD   a user ('%') with all privileges on MARIADB_DATABASE
# /var/lib/mysql is initialized only when it holds no system database; the server then
# listens on 0.0.0.0:3306 as the mysql user. A command starting with "-" is given to mariadbd;
# "mariadbd …" and "mysqld …" run the server with those arguments; any other command runs as
# is (mariadb, mariadb-dump, bash).
set -eu

fail() {
  echo "db-mariadb entrypoint: error: $*" >&2
  exit 1
}

# setting NAME: MARIADB_NAME, else MYSQL_NAME, each also as a _FILE; exported as MARIADB_NAME.
setting() {
  name=$1
  value=
  for variable in "MARIADB_$name" "MYSQL_$name"; do
    eval "direct=\${$variable:-} file=\${${variable}_FILE:-}"
    if [ -n "$direct" ] && [ -n "$file" ]; then
      fail "both $variable and ${variable}_FILE are set (they are exclusive)"
    fi
    if [ -n "$file" ]; then
      [ -r "$file" ] || fail "${variable}_FILE names $file, which cannot be read"
      direct=$(cat "$file")
    fi
    if [ -n "$direct" ]; then
      value=$direct
      break
    fi
  done
  eval "MARIADB_$name=\$value"
  export "MARIADB_$name"
}

# A value inside '…' of an SQL string literal: backslashes and quotes escaped.
sql_string() {
  printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g"
}

# A name inside `…`: backquotes doubled.
sql_name() {
  printf '%s' "$1" | sed -e 's/`/``/g'
}

if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
  set -- mariadbd "$@"
fi
case "$1" in
  mysqld | mariadbd) shift; set -- mariadbd "$@" ;;
  *) exec "$@" ;;
esac

DATADIR=/var/lib/mysql

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$DATADIR" /run/mysqld
  find "$DATADIR" /run/mysqld \! -user mysql -exec chown mysql:mysql '{}' +
  exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

if [ ! -d "$DATADIR/mysql" ]; then
  for name in ROOT_PASSWORD ALLOW_EMPTY_ROOT_PASSWORD RANDOM_ROOT_PASSWORD ROOT_HOST DATABASE USER PASSWORD; do
    setting "$name"
  done
  if [ -z "$MARIADB_ROOT_PASSWORD" ] && [ -z "$MARIADB_ALLOW_EMPTY_ROOT_PASSWORD" ] && [ -z "$MARIADB_RANDOM_ROOT_PASSWORD" ]; then
    fail "the database is uninitialized and no root password option is given.
  Set one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD or
  MARIADB_RANDOM_ROOT_PASSWORD (or their MYSQL_ names)."
  fi
  if [ -n "$MARIADB_USER" ] && [ -z "$MARIADB_PASSWORD" ]; then
    fail "MARIADB_USER (or MYSQL_USER) is set without MARIADB_PASSWORD (or MYSQL_PASSWORD)"
  fi
  if [ -z "$MARIADB_USER" ] && [ -n "$MARIADB_PASSWORD" ]; then
    fail "MARIADB_PASSWORD (or MYSQL_PASSWORD) is set without MARIADB_USER (or MYSQL_USER)"
  fi
  if [ "$MARIADB_USER" = root ]; then
    fail "MARIADB_USER=root: MARIADB_USER and MARIADB_PASSWORD are for a regular user; root's password is MARIADB_ROOT_PASSWORD"
  fi
  if [ -n "$MARIADB_RANDOM_ROOT_PASSWORD" ]; then
    MARIADB_ROOT_PASSWORD=$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 32)
    echo "GENERATED ROOT PASSWORD: $MARIADB_ROOT_PASSWORD"
  fi
  root_host=${MARIADB_ROOT_HOST:-%}

  echo "db-mariadb entrypoint: initializing $DATADIR"
  mariadb-install-db --datadir="$DATADIR" --skip-test-db --auth-root-authentication-method=normal \
    --skip-name-resolve --cross-bootstrap >/dev/null

  # The accounts through a server on a private socket only: no remote client can connect
  # before they are complete.
  socket_dir=$(mktemp -d)
  socket=$socket_dir/mysqld.sock
  mariadbd --skip-networking --socket="$socket" --skip-ssl --skip-log-bin >"$socket_dir/log" 2>&1 &
  server=$!
  tries=0
  # The client asks for TLS unless told not to, even on a socket.
  until mariadb --skip-ssl --protocol=socket --socket="$socket" -uroot -e 'SELECT 1' >"$socket_dir/client" 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 600 ] || ! kill -0 "$server" 2>/dev/null; then
      cat "$socket_dir/log" "$socket_dir/client" >&2
      fail "the initialization server did not start"
    fi
    sleep 0.1
  done

  password=$(sql_string "$MARIADB_ROOT_PASSWORD")
  host=$(sql_string "$root_host")
  # printf, not echo: dash's echo would turn the escaped backslashes back into single ones.
  {
    printf '%s\n' "SET SESSION sql_log_bin = 0;"
    # mariadb-install-db's other root accounts: root is 'localhost' and MARIADB_ROOT_HOST.
    printf '%s\n' "DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1';"
    printf '%s\n' "ALTER USER 'root'@'localhost' IDENTIFIED BY '$password';"
    if [ "$root_host" != localhost ]; then
      printf '%s\n' "CREATE USER 'root'@'$host' IDENTIFIED BY '$password';"
      printf '%s\n' "GRANT ALL ON *.* TO 'root'@'$host' WITH GRANT OPTION;"
      printf '%s\n' "GRANT PROXY ON ''@'%' TO 'root'@'$host' WITH GRANT OPTION;"
    fi
    if [ -n "$MARIADB_DATABASE" ]; then
      printf '%s\n' "CREATE DATABASE IF NOT EXISTS \`$(sql_name "$MARIADB_DATABASE")\`;"
    fi
    if [ -n "$MARIADB_USER" ]; then
      user=$(sql_string "$MARIADB_USER")
      printf '%s\n' "CREATE USER '$user'@'%' IDENTIFIED BY '$(sql_string "$MARIADB_PASSWORD")';"
      if [ -n "$MARIADB_DATABASE" ]; then
        printf '%s\n' "GRANT ALL ON \`$(sql_name "$MARIADB_DATABASE" | sed -e 's/[_%]/\\&/g')\`.* TO '$user'@'%';"
      fi
    fi
  } | mariadb --skip-ssl --protocol=socket --socket="$socket" -uroot --batch ||
    { kill "$server"; fail "setting up the accounts failed"; }

  kill "$server"
  wait "$server" || true
  rm -rf "$socket_dir"
  echo "db-mariadb entrypoint: initialization complete"
fi

exec "$@"
