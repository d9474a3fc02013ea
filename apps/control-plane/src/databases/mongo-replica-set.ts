/**
 * A mongo service with replicaSets: its container runs the image's entrypoint with
 * `mongod --replSet rs0 --bind_ip_all --keyFile …` and, beside it, initiates the one-member
 * replica set `rs0` (member `<appName>:27017`, the name the platform network resolves) once
 * mongod accepts the root user, retrying until then. rs.status() answering first means it was
 * initiated before (a restart): nothing is done. mongod with authentication and a replica set
 * needs a key file; it is derived from the root password (SHA-256, hex: base64 characters) and
 * written where only mongod's user reads it. The shell forwards a stop to mongod.
 */
export const REPLICA_SET_NAME = "rs0";
const KEY_FILE = "/tmp/platform-mongo-keyfile";

export function replicaSetCommand(appName: string): { command: string[]; args: string[] } {
  const initiate = `try { rs.status().ok } catch (e) { rs.initiate({ _id: "${REPLICA_SET_NAME}", members: [{ _id: 0, host: "${appName}:27017" }] }).ok }`;
  const script = [
    "mkdir -p /tmp",
    `printf %s "$MONGO_INITDB_ROOT_PASSWORD" | sha256sum | cut -c1-64 > ${KEY_FILE}`,
    `chmod 400 ${KEY_FILE}`,
    `chown mongodb:mongodb ${KEY_FILE} 2>/dev/null || true`,
    `docker-entrypoint.sh mongod --replSet ${REPLICA_SET_NAME} --bind_ip_all --keyFile ${KEY_FILE} &`,
    "mongod_pid=$!",
    `trap 'kill -TERM "$mongod_pid" 2>/dev/null' TERM INT`,
    "shell=$(command -v mongosh || command -v mongo)",
    `until [ -n "$shell" ] && "$shell" --quiet -u "$MONGO_INITDB_ROOT_USERNAME" -p "$MONGO_INITDB_ROOT_PASSWORD" --authenticationDatabase admin --eval '${initiate}' >/dev/null 2>&1; do`,
    `  kill -0 "$mongod_pid" 2>/dev/null || break`,
    "  sleep 2",
    "  shell=$(command -v mongosh || command -v mongo)",
    "done",
    `kill -0 "$mongod_pid" 2>/dev/null && echo "platform: replica set ${REPLICA_SET_NAME} initiated"`,
    'wait "$mongod_pid"',
    // A trapped stop interrupts the first wait: wait for mongod to end.
    'wait "$mongod_pid"',
  ].join("\n");
  return { command: ["/bin/sh", "-c", script], args: [] };
}
