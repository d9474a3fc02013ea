/**
 * What runs inside a database's container for a backup, a restore and a verification, per
 * kind: argv arrays (never a shell string built from values; where a shell is needed, values
 * reach it as positional arguments "$1"…) and the environment that carries the password, so
 * no password is part of a command line (mongo's tools take it only as an argument).
 */
import type { DatabaseAccess } from "@platform/agent-protocol";
import { CommandError } from "../command-error.ts";

export interface ToolCall {
  cmd: string[];
  env: string[];
}

/** postgres | mysql | mariadb | mongo | redis | libsql */
export const BACKUP_KINDS = ["postgres", "mysql", "mariadb", "mongo", "redis", "libsql"] as const;

/** Where a libsql service's data volume is mounted: sqld's database directory lives in it. */
export const SQLD_DATA_DIRECTORY = "/var/lib/sqld";
export type BackupKind = (typeof BACKUP_KINDS)[number];

/** Database, user and table names as the kinds' own rules allow them (no quoting games). */
const IDENTIFIER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$/;
/** A table to count: `name` or `schema.name`, letters, digits and underscores. */
const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

export function checkAccess(database: DatabaseAccess | undefined): DatabaseAccess & { kind: BackupKind } {
  if (!database) throw new CommandError("INVALID_ARGUMENT", "database is required");
  if (!(BACKUP_KINDS as readonly string[]).includes(database.kind)) {
    throw new CommandError("INVALID_ARGUMENT", `database.kind ${database.kind} cannot be backed up`);
  }
  if (database.kind !== "redis" && database.kind !== "libsql") {
    if (!IDENTIFIER.test(database.databaseName))
      throw new CommandError("INVALID_ARGUMENT", "database.databaseName is not a valid name");
    if (!IDENTIFIER.test(database.user))
      throw new CommandError("INVALID_ARGUMENT", "database.user is not a valid name");
  }
  return database as DatabaseAccess & { kind: BackupKind };
}

export function checkTableName(table: string): string {
  if (!TABLE.test(table)) throw new CommandError("INVALID_ARGUMENT", "checkTable is not a valid table name");
  return table;
}

const mysqlFirst = (tool: string, fallback: string) => [
  "sh",
  "-c",
  `if command -v ${tool} >/dev/null 2>&1; then exec ${tool} "$@"; else exec ${fallback} "$@"; fi`,
  tool,
];

/** The dump, written to stdout. */
export function dumpCall(database: DatabaseAccess & { kind: BackupKind }): ToolCall {
  const { databaseName, user, password } = database;
  switch (database.kind) {
    case "postgres":
      return {
        cmd: ["pg_dump", "-Fc", "--no-password", "-U", user, "-d", databaseName],
        env: [`PGPASSWORD=${password}`],
      };
    case "mysql":
    case "mariadb":
      return {
        cmd: [
          ...mysqlFirst("mariadb-dump", "mysqldump"),
          "--user=root",
          "--single-transaction",
          "--quick",
          "--routines",
          "--no-tablespaces",
          "--default-character-set=utf8mb4",
          databaseName,
        ],
        env: [`MYSQL_PWD=${password}`],
      };
    case "mongo":
      return {
        cmd: [
          "mongodump",
          "--archive",
          `--db=${databaseName}`,
          `--username=${user}`,
          `--password=${password}`,
          "--authenticationDatabase=admin",
        ],
        env: [],
      };
    case "redis":
      // The RDB snapshot, streamed by the server itself (redis-cli asks for a full sync).
      return { cmd: ["redis-cli", "--no-auth-warning", "--rdb", "-"], env: [`REDISCLI_AUTH=${password}`] };
    case "libsql":
      // sqld has no dump tool of its own: its data directory (the database files) archived.
      return { cmd: ["tar", "-cf", "-", "-C", SQLD_DATA_DIRECTORY, "."], env: [] };
  }
}

const notRestored = () =>
  new CommandError(
    "INVALID_ARGUMENT",
    "libsql archives are not restored by the platform (docs/decisions.md)",
  );

/** The restore, reading the uncompressed dump from stdin. */
export function restoreCall(database: DatabaseAccess & { kind: BackupKind }): ToolCall {
  const { databaseName, user, password } = database;
  switch (database.kind) {
    case "postgres":
      return {
        cmd: [
          "pg_restore",
          "--clean",
          "--if-exists",
          "--no-owner",
          "--exit-on-error",
          "--no-password",
          "-U",
          user,
          "-d",
          databaseName,
        ],
        env: [`PGPASSWORD=${password}`],
      };
    case "mysql":
    case "mariadb":
      return {
        cmd: [...mysqlFirst("mariadb", "mysql"), "--user=root", databaseName],
        env: [`MYSQL_PWD=${password}`],
      };
    case "mongo":
      return {
        cmd: [
          "mongorestore",
          "--archive",
          "--drop",
          `--nsInclude=${databaseName}.*`,
          `--username=${user}`,
          `--password=${password}`,
          "--authenticationDatabase=admin",
        ],
        env: [],
      };
    case "redis":
      // The RDB becomes the base of the append-only file (and dump.rdb): loaded at the restart
      // the agent does next. Writes stop first (appendonly no), so nothing overwrites it.
      return {
        cmd: ["sh", "-c", REDIS_RESTORE_SCRIPT],
        env: [`REDISCLI_AUTH=${password}`],
      };
    case "libsql":
      throw notRestored();
  }
}

// redis-cli --rdb - cannot cut the 40-byte end mark of a diskless sync off a pipe, so the file
// is loaded once by a private redis-server (unix socket only) that saves it clean; that copy
// becomes the base of the append-only file and dump.rdb.
const REDIS_RESTORE_SCRIPT = `set -eu
get() { redis-cli --no-auth-warning CONFIG GET "$1" | sed -n 2p; }
dir=$(get dir); adir=$(get appenddirname); afile=$(get appendfilename); rdb=$(get dbfilename)
tmp="$dir/.platform-restore"
rm -rf "$tmp"; mkdir -p "$tmp"
cat >"$tmp/dump.rdb"
redis-check-rdb "$tmp/dump.rdb" >/dev/null
redis-server --port 0 --unixsocket "$tmp/redis.sock" --dir "$tmp" --dbfilename dump.rdb --appendonly no --save "" >/dev/null &
n=0; until env -u REDISCLI_AUTH redis-cli -s "$tmp/redis.sock" ping >/dev/null 2>&1; do n=$((n+1)); [ $n -lt 150 ] || exit 1; sleep 0.2; done
env -u REDISCLI_AUTH redis-cli -s "$tmp/redis.sock" SAVE >/dev/null
env -u REDISCLI_AUTH redis-cli -s "$tmp/redis.sock" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait
redis-cli --no-auth-warning CONFIG SET appendonly no >/dev/null
mkdir -p "$dir/$adir"
rm -f "$dir/$adir"/*
cp "$tmp/dump.rdb" "$dir/$adir/$afile.1.base.rdb"
: >"$dir/$adir/$afile.1.incr.aof"
printf 'file %s seq 1 type b\\nfile %s seq 1 type i\\n' "$afile.1.base.rdb" "$afile.1.incr.aof" >"$dir/$adir/$afile.manifest"
mv "$tmp/dump.rdb" "$dir/$rdb"
rm -rf "$tmp"
chown -R "$(stat -c %u:%g "$dir")" "$dir/$adir" "$dir/$rdb"`;

/** Whether the restore needs the container restarted to take effect (redis loads at start). */
export const restartsAfterRestore = (kind: BackupKind) => kind === "redis";

/** Exits 0 once the database accepts connections over TCP (the images' init servers do not). */
export function readyCall(database: DatabaseAccess & { kind: BackupKind }): ToolCall {
  const { databaseName, user, password } = database;
  switch (database.kind) {
    case "postgres":
      return {
        cmd: ["pg_isready", "-h", "127.0.0.1", "-U", user, "-d", databaseName],
        env: [`PGPASSWORD=${password}`],
      };
    case "mysql":
    case "mariadb":
      return {
        cmd: [
          ...mysqlFirst("mariadb-admin", "mysqladmin"),
          "--user=root",
          "--host=127.0.0.1",
          "--protocol=tcp",
          "ping",
        ],
        env: [`MYSQL_PWD=${password}`],
      };
    case "mongo":
      return {
        cmd: ["mongosh", "--quiet", "--host", "127.0.0.1", "--eval", "db.runCommand({ ping: 1 }).ok"],
        env: [],
      };
    case "redis":
      return {
        cmd: ["redis-cli", "--no-auth-warning", "-h", "127.0.0.1", "ping"],
        env: [`REDISCLI_AUTH=${password}`],
      };
    case "libsql":
      throw notRestored();
  }
}

/**
 * The check after a verification restore: a row count of `table`, or the server's own check.
 * Prints one number (the rows, keys or tables counted) on its last line.
 */
export function checkCall(database: DatabaseAccess & { kind: BackupKind }, table: string): ToolCall {
  const { databaseName, user, password } = database;
  switch (database.kind) {
    case "postgres": {
      const quoted = table
        .split(".")
        .map((part) => `"${part}"`)
        .join(".");
      const sql = table
        ? `SELECT count(*) FROM ${quoted}`
        : "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')";
      return {
        cmd: ["psql", "-X", "-v", "ON_ERROR_STOP=1", "-tA", "-U", user, "-d", databaseName, "-c", sql],
        env: [`PGPASSWORD=${password}`],
      };
    }
    case "mysql":
    case "mariadb": {
      if (!table) {
        // mariadb-check (mysqlcheck) checks every table; an error line makes the check fail.
        return {
          cmd: [
            "sh",
            "-c",
            'out=$( (command -v mariadb-check >/dev/null 2>&1 && mariadb-check --user=root "$1") || mysqlcheck --user=root "$1") || exit 1; echo "$out" | grep -qi error && { echo "$out"; exit 1; }; echo "$out" | grep -c OK',
            "check",
            databaseName,
          ],
          env: [`MYSQL_PWD=${password}`],
        };
      }
      const quoted = table
        .split(".")
        .map((part) => `\`${part}\``)
        .join(".");
      return {
        cmd: [
          ...mysqlFirst("mariadb", "mysql"),
          "--user=root",
          "-N",
          "-B",
          "-e",
          `SELECT COUNT(*) FROM ${quoted}`,
          databaseName,
        ],
        env: [`MYSQL_PWD=${password}`],
      };
    }
    case "mongo":
      return {
        cmd: [
          "mongosh",
          "--quiet",
          `--username=${user}`,
          `--password=${password}`,
          "--authenticationDatabase=admin",
          databaseName,
          "--eval",
          table
            ? `db.getCollection(${JSON.stringify(table)}).countDocuments()`
            : "db.getCollectionNames().map((c) => db.runCommand({ validate: c }).valid).filter(Boolean).length",
        ],
        env: [],
      };
    case "redis":
      return { cmd: ["redis-cli", "--no-auth-warning", "DBSIZE"], env: [`REDISCLI_AUTH=${password}`] };
    case "libsql":
      throw notRestored();
  }
}
