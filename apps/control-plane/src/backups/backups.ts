/**
 * Database backups (Dokploy's backup row): which database service is dumped, where to (a
 * destination), when (a croner schedule), under which prefix, how many files are kept, and
 * whether each run's file is verified by a restore into a throwaway container. Dokploy names
 * the service by a per-kind id field (postgresId, mysqlId, mariadbId, mongoId, libsqlId; redisId is
 * ours); one `database_id` column holds it.
 */
import { Cron } from "croner";
import { z } from "zod";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { Backup, BackupDatabaseType, BackupUpdate } from "../db/schema.ts";
import { composeMetadataSchema } from "./compose-credentials.ts";
import { destinationSchema, idSchema } from "./destinations.ts";
import type { OwnFiles } from "./run-steps.ts";

export const backupDatabaseTypes = ["postgres", "mysql", "mariadb", "mongo", "redis", "libsql"] as const;
/** What a backup row can back up: a database service's kind, or the control plane's own database. */
export const backupTargetTypes = [...backupDatabaseTypes, "web-server"] as const;
export const kindIdKeys = ["postgresId", "mysqlId", "mariadbId", "mongoId", "redisId", "libsqlId"] as const;
export type KindIdKey = (typeof kindIdKeys)[number];
export const idKeyOf = (kind: BackupDatabaseType): KindIdKey => `${kind}Id`;

/** A cron expression croner accepts (5 or 6 fields, or a nickname such as @daily). */
export const scheduleSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(100)
  .refine(
    (value) => {
      try {
        new Cron(value, { paused: true }).stop();
        return true;
      } catch {
        return false;
      }
    },
    { message: "must be a cron expression such as 0 3 * * * (minute hour day month weekday)" },
  );

/** Object key prefix: path segments of letters, digits, '.', '_' and '-' (no '..', no leading '/'). */
export const prefixSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(200)
  .regex(
    /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/?$/,
    "must be path segments of letters, digits, '.', '_' and '-'",
  )
  .refine((value) => !value.split("/").includes(".."), { message: "must not contain '..'" })
  .transform((value) => value.replace(/\/+$/, ""));

/**
 * An object key a restore or verification names: relative, without '.' or '..' parts (the S3
 * client resolves them in the request path: `x/../../other-bucket/key` leaves the bucket),
 * without backslashes or control characters (nor in the run's log).
 */
export const objectKeySchema = z
  .string()
  .min(1, "must not be empty")
  .max(1024)
  .refine(
    (key) =>
      !key.startsWith("/") &&
      !/[\\\p{Cc}]/u.test(key) &&
      !key.split("/").some((part) => part === "." || part === ".."),
    { message: "must be an object key without '.' or '..' parts, a leading '/', '\\' or control characters" },
  );

/** The database to dump (postgres, mysql, mariadb, mongo); redis dumps every database: "" or "all". */
export const databaseNameSchema = z
  .string()
  .trim()
  .max(63)
  .regex(/^([A-Za-z0-9_][A-Za-z0-9_.-]*)?$/, "must be a database name (letters, digits, '_', '.', '-')");

/** A table (or collection) whose rows a verified restore counts: `name` or `schema.name`. */
export const verifyTableSchema = z
  .string()
  .trim()
  .max(127)
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/,
    "must be a table name such as orders or public.orders",
  );

/** A service of a stack's file (backupType compose). */
export const stackServiceNameSchema = z
  .string()
  .trim()
  .max(100)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, "must be a service name of the stack's file");

export const keepLatestCountSchema = z.number().int().min(1).max(10_000);

const kindIds = {
  postgresId: idSchema.nullish(),
  mysqlId: idSchema.nullish(),
  mariadbId: idSchema.nullish(),
  mongoId: idSchema.nullish(),
  redisId: idSchema.nullish(),
  libsqlId: idSchema.nullish(),
};

export const createBackupInput = z.object({
  schedule: scheduleSchema,
  enabled: z.boolean().optional(),
  prefix: prefixSchema,
  destinationId: idSchema,
  keepLatestCount: keepLatestCountSchema.nullish(),
  database: databaseNameSchema,
  databaseType: z.enum(backupTargetTypes),
  backupType: z.enum(["database", "compose"]).optional(),
  ...kindIds,
  serviceName: stackServiceNameSchema.nullish(),
  composeId: idSchema.nullish(),
  metadata: composeMetadataSchema.nullish(),
  verifyRestore: z.boolean().optional(),
  verifyTable: verifyTableSchema.nullish(),
});

export const updateBackupInput = z.object({
  backupId: idSchema,
  schedule: scheduleSchema.optional(),
  enabled: z.boolean().optional(),
  prefix: prefixSchema.optional(),
  destinationId: idSchema.optional(),
  keepLatestCount: keepLatestCountSchema.nullish(),
  database: databaseNameSchema.optional(),
  databaseType: z.enum(backupTargetTypes).optional(),
  serviceName: stackServiceNameSchema.nullish(),
  metadata: composeMetadataSchema.nullish(),
  verifyRestore: z.boolean().optional(),
  verifyTable: verifyTableSchema.nullish(),
});

export const backupIdInput = z.object({ backupId: idSchema });

const runSchema = z.object({
  deploymentId: z.string(),
  kind: z.enum(["backup", "restore", "verify"]),
  status: z.enum(["idle", "running", "done", "error"]),
  backupFile: z.string().nullable(),
  sizeBytes: z.number().nullable(),
  check: z.string().nullable(),
  errorMessage: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const backupSchema = z.object({
  backupId: z.string(),
  appName: z.string(),
  schedule: z.string(),
  enabled: z.boolean(),
  database: z.string(),
  prefix: z.string(),
  serviceName: z.string().nullable(),
  destinationId: z.string(),
  keepLatestCount: z.number().nullable(),
  backupType: z.enum(["database", "compose"]),
  databaseType: z.enum(backupTargetTypes),
  postgresId: z.string().nullable(),
  mysqlId: z.string().nullable(),
  mariadbId: z.string().nullable(),
  mongoId: z.string().nullable(),
  redisId: z.string().nullable(),
  libsqlId: z.string().nullable(),
  composeId: z.string().nullable(),
  userId: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  verifyRestore: z.boolean(),
  verifyTable: z.string().nullable(),
  createdAt: z.string(),
  destination: destinationSchema,
  /** The newest run of any kind, and the newest verification (a verify run, or a backup run that verified). */
  lastRun: runSchema.nullable(),
  lastVerifiedRestore: runSchema.nullable(),
});

export type BackupRun = z.infer<typeof runSchema>;

export function toRunView(row: {
  deploymentId: string;
  kind: string;
  status: "idle" | "running" | "done" | "error";
  backupFile: string | null;
  backupSizeBytes: string | null;
  backupCheck: string | null;
  errorMessage: string | null;
  createdAt: string;
  completedAt: string | null;
}): BackupRun {
  return {
    deploymentId: row.deploymentId,
    kind: row.kind as BackupRun["kind"],
    status: row.status,
    backupFile: row.backupFile,
    sizeBytes: row.backupSizeBytes === null ? null : Number(row.backupSizeBytes),
    check: row.backupCheck,
    errorMessage: row.errorMessage,
    createdAt: row.createdAt,
    finishedAt: row.completedAt,
  };
}

/** The backup with its organization (through its destination), whatever the caller. */
export function findBackupWithOrganization(db: Db, backupId: string) {
  return db
    .selectFrom("backups")
    .innerJoin("destinations", "destinations.destinationId", "backups.destinationId")
    .selectAll("backups")
    .select("destinations.organizationId")
    .where("backups.backupId", "=", backupId)
    .executeTakeFirst();
}

export type OwnedBackup = Backup & { organizationId: string };

/** A database service's backups (its organization's destinations only), oldest first. */
export function listDatabaseBackups(
  db: Db,
  organizationId: string,
  kind: BackupDatabaseType,
  databaseId: string,
): Promise<OwnedBackup[]> {
  return db
    .selectFrom("backups")
    .innerJoin("destinations", "destinations.destinationId", "backups.destinationId")
    .selectAll("backups")
    .select("destinations.organizationId")
    .where("destinations.organizationId", "=", organizationId)
    .where("backups.databaseType", "=", kind)
    .where("backups.databaseId", "=", databaseId)
    .orderBy("backups.createdAt")
    .orderBy("backups.backupId")
    .execute();
}

/** A backup's target: a database service, a stack's service (compose), or neither (web server). */
export interface BackupTarget {
  databaseId: string | null;
  stack?: { composeId: string; serviceName: string; metadata: (backupId: string) => Record<string, unknown> };
}

/** Stores a backup of `input` (databaseId null: the web server's own or a stack's); answers its id. */
export async function insertBackup(
  db: Db,
  userId: string,
  input: z.infer<typeof createBackupInput>,
  target: BackupTarget,
): Promise<string> {
  const { databaseId, stack } = target;
  const backupId = newId();
  await db
    .insertInto("backups")
    .values({
      backupId,
      appName: `backup-${backupId
        .toLowerCase()
        .replace(/[^a-z0-9]/g, "")
        .slice(0, 20)}`,
      schedule: input.schedule,
      enabled: input.enabled ?? true,
      database: input.database,
      prefix: input.prefix,
      serviceName: stack?.serviceName ?? null,
      destinationId: input.destinationId,
      keepLatestCount: input.keepLatestCount ?? null,
      backupType: stack ? "compose" : "database",
      databaseType: input.databaseType,
      databaseId,
      composeId: stack?.composeId ?? null,
      userId,
      metadata: stack ? JSON.stringify(stack.metadata(backupId)) : null,
      verifyRestore: input.verifyRestore ?? false,
      verifyTable: input.verifyTable ?? null,
    })
    .execute();
  return backupId;
}

export async function updateBackup(db: Db, backupId: string, patch: BackupUpdate): Promise<void> {
  await db.updateTable("backups").set(patch).where("backupId", "=", backupId).execute();
}

/** Deletes the backup row (its files stay in the bucket; its runs stay, naming no backup). */
export async function deleteBackup(db: Db, backupId: string): Promise<void> {
  await db.deleteFrom("backups").where("backupId", "=", backupId).execute();
}

/** The newest runs of a backup: the last one, and the last verified restore. */
export async function lastRuns(db: Db, backupId: string) {
  const columns = [
    "deployments.deploymentId",
    "kind",
    "status",
    "backupFile",
    "backupSizeBytes",
    "backupCheck",
    "errorMessage",
    "createdAt",
    "completedAt",
  ] as const;
  const runs = db
    .selectFrom("deployments")
    .innerJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
    .select(columns)
    .where("backupRuns.backupId", "=", backupId);
  const last = await runs
    .orderBy("createdAt", "desc")
    .orderBy("deployments.deploymentId", "desc")
    .executeTakeFirst();
  const verified = await runs
    .where((eb) => eb.or([eb("kind", "=", "verify"), eb("backupCheck", "is not", null)]))
    .where("status", "in", ["done", "error"])
    .orderBy("completedAt", "desc")
    .orderBy("deployments.deploymentId", "desc")
    .executeTakeFirst();
  return {
    lastRun: last ? toRunView(last) : null,
    lastVerifiedRestore: verified ? toRunView(verified) : null,
  };
}

/** The file extension of a kind's dump (before .gz). */
export const dumpExtension: Record<BackupDatabaseType | "web-server", string> = {
  "web-server": "json",
  postgres: "dump",
  mysql: "sql",
  mariadb: "sql",
  mongo: "archive",
  redis: "rdb",
  // sqld's database directory, archived (docs/decisions.md).
  libsql: "tar",
};

/** `<prefix>/<name>-<UTC time>.<ext>.gz`: keys of one backup sort by time. */
export function objectKeyOf(
  backup: Pick<Backup, "prefix" | "database" | "appName" | "databaseType">,
  now: Date,
): string {
  const files = ownFilesOf(backup);
  return `${files.prefix}${now.toISOString().replace(/:/g, "-")}${files.extension}`;
}

/** The backup's own files (its prefix, name and kind's extension): retention touches only those. */
export function ownFilesOf(
  backup: Pick<Backup, "prefix" | "database" | "appName" | "databaseType">,
): OwnFiles {
  return {
    prefix: `${backup.prefix}/${backup.database || backup.appName}-`,
    extension: `.${dumpExtension[backup.databaseType]}.gz`,
  };
}
