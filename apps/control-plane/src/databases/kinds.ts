/**
 * What differs between the six database kinds (spec 2.9), as data: the id field, the port,
 * where the data volume is mounted, the default image, which fields a kind has and requires,
 * the container environment its image reads, and the shape of its connection URL. Everything
 * else (rows, procedures, deployments) is one implementation over this table.
 */
import type { DatabaseKind } from "../db/schema.ts";
import { REPLICA_SET_NAME, replicaSetCommand } from "./mongo-replica-set.ts";

export type { DatabaseKind };

export const databaseKinds = [
  "postgres",
  "mysql",
  "mariadb",
  "mongo",
  "redis",
  "libsql",
] as const satisfies readonly DatabaseKind[];

/** A database service with its passwords opened (never stored or logged in this form). */
export interface OpenedDatabase {
  appName: string;
  databaseName: string | null;
  databaseUser: string | null;
  databasePassword: string;
  databaseRootPassword: string | null;
  replicaSets: boolean;
  sqldNode: "primary" | "replica";
  sqldPrimaryUrl: string | null;
  enableNamespaces: boolean;
}

/** A further port of a kind that `saveExternalPorts` publishes (libsql: sqld's gRPC and admin). */
export interface ExtraPort {
  /** The input field (Dokploy's name). */
  field: "externalGRPCPort" | "externalAdminPort";
  /** The database_services column holding the published port. */
  column: "externalGrpcPort" | "externalAdminPort";
  /** The port inside the container. */
  targetPort: number;
}

/** Procedures of the common database router that a kind's Dokploy router does not have. */
export type OmittedProcedure = "changePassword" | "search" | "saveExternalPort";

export interface DatabaseKindFacts {
  kind: DatabaseKind;
  /** postgresId, mysqlId, mariadbId, mongoId, redisId, libsqlId. */
  idKey: `${DatabaseKind}Id`;
  /** The port the database listens on inside its container. */
  port: number;
  /** Where the `<appName>-data` volume is mounted for `image` (the image's own VOLUME). */
  mountPath: (image: string) => string;
  /** Spec 2.9's default image (PLATFORM_DEFAULT_IMAGE_<KIND> replaces it per installation). */
  defaultImage: string;
  /** The optional fields of 2.9 this kind has; `required` ones are required on create. */
  fields: {
    databaseName?: "required";
    databaseUser?: "required";
    databaseRootPassword?: "required" | "optional";
    replicaSets?: "optional";
    /** libsql: sqldNode, sqldPrimaryUrl (a replica's primary) and enableNamespaces. */
    sqld?: "optional";
  };
  /** Ports besides `port`, published by `saveExternalPorts` (which replaces saveExternalPort). */
  extraPorts?: readonly ExtraPort[];
  /** Procedures the kind does not serve (Dokploy's router for it has none). */
  omits?: readonly OmittedProcedure[];
  /** The container environment the kind's image reads (the official images' contract). */
  env(database: OpenedDatabase): Record<string, string>;
  /**
   * The entrypoint (command) and its arguments when the service sets none (redis: its password
   * is an argument); an empty command keeps the image's entrypoint.
   */
  defaultCommand?(database: OpenedDatabase): { command: string[]; args: string[] };
  /** The connection URL for `host:port` (user and password percent-encoded). */
  url(database: OpenedDatabase, host: string, port: number): string;
}

const enc = encodeURIComponent;
const userInfo = (database: OpenedDatabase) =>
  `${enc(database.databaseUser ?? "")}:${enc(database.databasePassword)}`;

/** mysql and mariadb images create the user only when it is not root (it exists already). */
function mysqlFamilyEnv(prefix: "MYSQL" | "MARIADB", database: OpenedDatabase): Record<string, string> {
  const env: Record<string, string> = { [`${prefix}_DATABASE`]: database.databaseName ?? "" };
  if (prefix === "MARIADB" || database.databaseUser !== "root") {
    env[`${prefix}_USER`] = database.databaseUser ?? "";
    env[`${prefix}_PASSWORD`] = database.databasePassword;
  }
  // Without a root password of its own, root gets the user's (the image refuses to start with none).
  env[`${prefix}_ROOT_PASSWORD`] = database.databaseRootPassword ?? database.databasePassword;
  return env;
}

export const databaseKindFacts: Record<DatabaseKind, DatabaseKindFacts> = {
  postgres: {
    kind: "postgres",
    idKey: "postgresId",
    port: 5432,
    // The official images declare VOLUME /var/lib/postgresql/data up to 17 and
    // /var/lib/postgresql from 18 (PGDATA …/18/docker): the mount must be that path, or the
    // image's anonymous volume would take the data. A tag without a major version is 18+.
    mountPath: (image) => {
      const major = /:(\d+)(?:[.-][^/]*)?$/.exec(image)?.[1];
      return major !== undefined && Number(major) < 18 ? "/var/lib/postgresql/data" : "/var/lib/postgresql";
    },
    defaultImage: "postgres:18",
    fields: { databaseName: "required", databaseUser: "required" },
    env: (database) => ({
      POSTGRES_DB: database.databaseName ?? "",
      POSTGRES_USER: database.databaseUser ?? "",
      POSTGRES_PASSWORD: database.databasePassword,
    }),
    url: (database, host, port) =>
      `postgresql://${userInfo(database)}@${host}:${port}/${enc(database.databaseName ?? "")}`,
  },
  mysql: {
    kind: "mysql",
    idKey: "mysqlId",
    port: 3306,
    mountPath: () => "/var/lib/mysql",
    defaultImage: "mysql:8",
    fields: { databaseName: "required", databaseUser: "required", databaseRootPassword: "optional" },
    env: (database) => mysqlFamilyEnv("MYSQL", database),
    url: (database, host, port) =>
      `mysql://${userInfo(database)}@${host}:${port}/${enc(database.databaseName ?? "")}`,
  },
  mariadb: {
    kind: "mariadb",
    idKey: "mariadbId",
    port: 3306,
    mountPath: () => "/var/lib/mysql",
    defaultImage: "mariadb:11",
    fields: { databaseName: "required", databaseUser: "required", databaseRootPassword: "optional" },
    env: (database) => mysqlFamilyEnv("MARIADB", database),
    url: (database, host, port) =>
      `mysql://${userInfo(database)}@${host}:${port}/${enc(database.databaseName ?? "")}`,
  },
  mongo: {
    kind: "mongo",
    idKey: "mongoId",
    port: 27017,
    mountPath: () => "/data/db",
    defaultImage: "mongo:8",
    fields: { databaseUser: "required", replicaSets: "optional" },
    env: (database) => ({
      MONGO_INITDB_ROOT_USERNAME: database.databaseUser ?? "",
      MONGO_INITDB_ROOT_PASSWORD: database.databasePassword,
    }),
    defaultCommand: (database) =>
      database.replicaSets ? replicaSetCommand(database.appName) : { command: [], args: [] },
    url: (database, host, port) =>
      `mongodb://${userInfo(database)}@${host}:${port}/${database.replicaSets ? `?replicaSet=${REPLICA_SET_NAME}` : ""}`,
  },
  redis: {
    kind: "redis",
    idKey: "redisId",
    port: 6379,
    mountPath: () => "/data",
    defaultImage: "redis:7",
    fields: {},
    env: () => ({}),
    // Arguments of the image's entrypoint (it runs redis-server as the redis user). An
    // append-only file in /data: what was written survives a restart (reload), not only a save.
    defaultCommand: (database) => ({
      command: [],
      args: [
        "redis-server",
        "--requirepass",
        database.databasePassword,
        "--appendonly",
        "yes",
        "--dir",
        "/data",
      ],
    }),
    url: (database, host, port) => `redis://:${enc(database.databasePassword)}@${host}:${port}`,
  },
  libsql: {
    kind: "libsql",
    idKey: "libsqlId",
    // sqld's HTTP (Hrana over HTTP) port; gRPC (replication) and admin are the extra ports.
    port: 8080,
    mountPath: () => SQLD_DATA_DIRECTORY,
    defaultImage: "ghcr.io/tursodatabase/libsql-server:v0.24.32",
    fields: { databaseUser: "required", sqld: "optional" },
    extraPorts: [
      { field: "externalGRPCPort", column: "externalGrpcPort", targetPort: 5001 },
      { field: "externalAdminPort", column: "externalAdminPort", targetPort: 5000 },
    ],
    omits: ["changePassword", "search", "saveExternalPort"],
    // sqld's documented variables: the node's role, HTTP basic authentication, a replica's primary.
    env: (database) => ({
      SQLD_NODE: database.sqldNode,
      SQLD_HTTP_AUTH: `basic:${Buffer.from(`${database.databaseUser ?? ""}:${database.databasePassword}`).toString("base64")}`,
      ...(database.sqldNode === "replica" && database.sqldPrimaryUrl
        ? { SQLD_PRIMARY_URL: database.sqldPrimaryUrl }
        : {}),
    }),
    defaultCommand: (database) => ({
      command: ["/bin/sh", "-c", sqldCommandLine(database.enableNamespaces)],
      args: [],
    }),
    url: (database, host, port) => `http://${userInfo(database)}@${host}:${port}`,
  },
};

/** Where a libsql service's data volume is mounted (the sqld image's working directory). */
export const SQLD_DATA_DIRECTORY = "/var/lib/sqld";
/** The database sqld keeps in the data volume (its --db-path, a directory). */
export const SQLD_DB_PATH = `${SQLD_DATA_DIRECTORY}/iku.db`;

/** sqld listening on every interface on its three ports, its database in the data volume. */
function sqldCommandLine(enableNamespaces: boolean): string {
  return `exec sqld --db-path ${SQLD_DB_PATH} --http-listen-addr 0.0.0.0:8080 --grpc-listen-addr 0.0.0.0:5001 --admin-listen-addr 0.0.0.0:5000${enableNamespaces ? " --enable-namespaces" : ""}`;
}

/** The data volume of a database service (spec 2.9: `<appName>-data` for every kind). */
export const dataVolumeOf = (appName: string) => `${appName}-data`;

/** The image a service runs: its own, else the installation's default for the kind, else 2.9's. */
export function imageOf(
  database: { kind: DatabaseKind; dockerImage: string | null },
  defaults: Partial<Record<DatabaseKind, string>> | undefined,
): string {
  return database.dockerImage || defaults?.[database.kind] || databaseKindFacts[database.kind].defaultImage;
}
