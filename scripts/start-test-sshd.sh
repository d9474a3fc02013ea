#!/usr/bin/env bash
# A private OpenSSH server on 127.0.0.1 for the server.setup tests, with its own sshd_config,
# host key and authorized_keys in a directory of its own (it never touches /etc/ssh).
#
#   scripts/start-test-sshd.sh                 install Debian's openssh-server if missing (CI)
#   scripts/start-test-sshd.sh --dir DIR --port PORT [--setenv KEY=VALUE]...
#       starts sshd in the background (as the calling user, root in CI) and prints
#       SSHD_PID=<pid>; logins are accepted for keys in DIR/authorized_keys; each --setenv is
#       set in every session (sshd's SetEnv), which is how tests point install.sh at test dirs.
#       Stop it with: kill "$(cat DIR/sshd.pid)"
set -euo pipefail

SSHD=/usr/sbin/sshd
if [ ! -x "$SSHD" ]; then
  echo "installing openssh-server" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null; }
fi
[ $# -gt 0 ] || exit 0

DIR=
PORT=
SETENV=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --setenv)
      [[ "$2" =~ ^[A-Z_][A-Z0-9_]*=[A-Za-z0-9._/:-]*$ ]] || { echo "bad --setenv $2" >&2; exit 2; }
      SETENV+=("$2"); shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ "$DIR" == /* && -d "$DIR" ]] || { echo "--dir must be an existing absolute directory" >&2; exit 2; }
[[ "$PORT" =~ ^[0-9]+$ ]] || { echo "--port must be a number" >&2; exit 2; }

mkdir -p /run/sshd
[ -f "$DIR/host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N "" -f "$DIR/host_ed25519_key"
touch "$DIR/authorized_keys"
chmod 600 "$DIR/authorized_keys"

{
  echo "ListenAddress 127.0.0.1"
  echo "Port $PORT"
  echo "HostKey $DIR/host_ed25519_key"
  echo "PidFile $DIR/sshd.pid"
  echo "AuthorizedKeysFile $DIR/authorized_keys"
  echo "PubkeyAuthentication yes"
  echo "PasswordAuthentication no"
  echo "KbdInteractiveAuthentication no"
  echo "PermitRootLogin prohibit-password"
  echo "UsePAM no"
  echo "StrictModes no"
  echo "Subsystem sftp internal-sftp"
  if [ ${#SETENV[@]} -gt 0 ]; then echo "SetEnv ${SETENV[*]}"; fi
} >"$DIR/sshd_config"

"$SSHD" -t -f "$DIR/sshd_config"
"$SSHD" -f "$DIR/sshd_config" -E "$DIR/sshd.log"
for _ in $(seq 1 50); do
  [ -s "$DIR/sshd.pid" ] && break
  sleep 0.1
done
[ -s "$DIR/sshd.pid" ] || { echo "sshd did not start:" >&2; cat "$DIR/sshd.log" >&2; exit 1; }
echo "SSHD_PID=$(cat "$DIR/sshd.pid")"
