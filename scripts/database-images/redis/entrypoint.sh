#!/bin/sh
# Entrypoint of platform-test/db-redis:7 with the behaviour of the official redis image's
# docker-entrypoint.sh (written anew, not copied): a command starting with "-" or naming a
# .conf file is given to redis-server; "redis-server …" runs as the redis user in /data (its
# data directory), listening on every address (redis-server's default without a configuration
# file) with protected mode off, as the container's port is reachable only where it is
# published; any other command runs as is (redis-cli, sh).
set -eu

if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
  set -- redis-server "$@"
fi
if [ "$1" != redis-server ]; then
  exec "$@"
fi

if [ "$(id -u)" = 0 ]; then
  find . \! -user redis -exec chown redis '{}' +
  exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi

shift
# A configuration file must come first; the arguments after it win over these defaults.
if [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ]; then
  config=$1
  shift
  set -- "$config" --protected-mode no "$@"
else
  set -- --protected-mode no "$@"
fi
umask 0077
exec redis-server "$@"
