/**
 * backup (Dokploy's router; issue 26): database backups to a destination, on a croner schedule
 * and by hand (manualBackup<Kind>, answered once the upload and the retention are done),
 * their files (listBackupFiles), restores (restoreBackupWithLogs: a deployment whose log
 * streams at /api/deployment.logs) and verified restores into a throwaway container
 * (verifyRestore; also after each run with `verifyRestore: true`). A backup belongs to its
 * database service: members who may see the service use it; another organization's backup,
 * database or destination is a 404. Every run is a deployment of the database (backups/runs.ts).
 * A backup of databaseType `web-server` is the control plane's own database (Dokploy's web
 * server backup, run by manualBackupWebServer and its schedule; backups/web-server-runs.ts):
 * it holds every organization's data, so only instance administrators create, see, change, run
 * or delete it (403 for everyone else; another organization's is a 404 first). It is restored
 * with `npm run web-server-backup -- restore`, since a lost installation's destinations are in
 * its lost database.
 */
import { listObjects } from "@platform/object-storage";
import { z } from "zod";
import { loadBackup, loadDatabase, requireInstanceAdmin, requireStack } from "../backups/access.ts";
import {
  backupIdInput,
  backupSchema,
  createBackupInput,
  deleteBackup,
  idKeyOf,
  insertBackup,
  kindIdKeys,
  type OwnedBackup,
  objectKeySchema,
  updateBackup,
  updateBackupInput,
} from "../backups/backups.ts";
import { checkCredentials, credentialsContext, sealCredentials } from "../backups/compose-credentials.ts";
import { checkStackService, startComposeBackupRun } from "../backups/compose-runs.ts";
import { idSchema, requireDestination, storageOf } from "../backups/destinations.ts";
import { startBackupRun, startRestoreRun } from "../backups/runs.ts";
import { toBackupView } from "../backups/views.ts";
import { manualAnswer, waitForRun } from "../backups/wait.ts";
import { startWebServerBackupRun, WEB_SERVER } from "../backups/web-server-runs.ts";
import type { Caller, ServiceContext } from "../context.ts";
import type { BackupDatabaseType, BackupUpdate } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import { agentServerId } from "../servers/repository.ts";

/** Fields of compose backups only (a database inside a stack): refused on the others. */
function refuseComposeFields(input: {
  serviceName?: string | null;
  metadata?: Record<string, unknown> | null;
}): void {
  for (const field of ["serviceName", "metadata"] as const) {
    const value = input[field];
    if (
      value !== undefined &&
      value !== null &&
      !(typeof value === "object" && Object.keys(value).length === 0)
    ) {
      throw badRequest(`${field} belongs to backups of a database inside a stack (backupType compose)`, {
        fields: [field],
      });
    }
  }
}

/**
 * redis dumps every logical database in its RDB snapshot: `database` names none. A web-server
 * or libsql backup's `database` only names its files (`<prefix>/<database or appName>-<time>.json.gz`).
 */
function checkDatabaseField(kind: BackupDatabaseType | "web-server", database: string): void {
  // libsql's archive holds sqld's whole database directory: `database` only names the files.
  if (kind === WEB_SERVER || kind === "libsql") return;
  if (kind === "redis" ? database !== "" && database !== "all" : database === "") {
    throw badRequest(
      kind === "redis"
        ? 'database must be "" or "all" for redis: its RDB snapshot holds every database'
        : "database must name the database to back up",
      { fields: ["database"] },
    );
  }
}

/**
 * Restore verification starts a throwaway database container: web-server backups have none, and
 * libsql's archives are not restored by the platform (docs/decisions.md).
 */
function refuseVerification(
  input: { verifyRestore?: boolean; verifyTable?: string | null },
  what = "the web server's",
): void {
  if (input.verifyRestore) {
    throw badRequest(`verifyRestore is for database services' backups, not ${what}`, {
      fields: ["verifyRestore"],
    });
  }
  if (input.verifyTable !== undefined && input.verifyTable !== null) {
    throw badRequest(`verifyTable is for database services' backups, not ${what}`, {
      fields: ["verifyTable"],
    });
  }
}

/**
 * backup.create with databaseType web-server: the control plane's own database, by an instance
 * administrator, to one of the organization's destinations; no database service is named.
 */
async function createWebServerBackup(
  ctx: ServiceContext,
  caller: Caller,
  input: z.infer<typeof createBackupInput>,
): Promise<z.infer<typeof backupSchema>> {
  // The destination and services named were found the caller's (backup.create) before this.
  await requireInstanceAdmin(ctx, caller);
  for (const key of kindIdKeys) {
    if (input[key]) {
      throw badRequest(`${key} does not match databaseType web-server (the control plane's own database)`, {
        fields: [key],
      });
    }
  }
  refuseVerification(input);
  const backupId = await insertBackup(ctx.db, caller.userId, input, { databaseId: null });
  await ctx.backups.reschedule();
  return toBackupView(ctx, await loadBackup(ctx, caller, backupId));
}

/**
 * backup.create with backupType compose: a database inside the caller's stack (composeId), in
 * its service serviceName, reached with the credentials of metadata (sealed).
 */
async function createComposeBackup(
  ctx: ServiceContext,
  caller: Caller,
  input: z.infer<typeof createBackupInput>,
): Promise<z.infer<typeof backupSchema>> {
  if (!input.composeId)
    throw badRequest("composeId is required for backupType compose", { fields: ["composeId"] });
  const stack = await requireStack(ctx, caller, input.composeId);
  if (input.backupType !== "compose") {
    throw badRequest("backupType must be compose for a backup of a stack's database (composeId)", {
      fields: ["backupType"],
    });
  }
  const kind = input.databaseType;
  if (kind === WEB_SERVER) {
    throw badRequest("databaseType web-server is the control plane's own database, not a stack's", {
      fields: ["databaseType"],
    });
  }
  for (const key of kindIdKeys) {
    if (input[key])
      throw badRequest(`${key} does not belong to a backup of a stack's database`, { fields: [key] });
  }
  if (!input.serviceName) {
    throw badRequest("serviceName is required for backupType compose: the stack's service of the database", {
      fields: ["serviceName"],
    });
  }
  if (input.verifyRestore || (input.verifyTable !== undefined && input.verifyTable !== null)) {
    throw badRequest("Restore verification is for database services' backups, not a stack's", {
      fields: [input.verifyRestore ? "verifyRestore" : "verifyTable"],
    });
  }
  checkDatabaseField(kind, input.database);
  checkCredentials(kind, input.metadata);
  await checkStackService(ctx, stack, input.serviceName);
  const metadata = input.metadata ?? {};
  const backupId = await insertBackup(ctx.db, caller.userId, input, {
    databaseId: null,
    stack: {
      composeId: stack.composeId,
      serviceName: input.serviceName,
      metadata: (id) =>
        sealCredentials(
          ctx.secrets,
          credentialsContext({ backupId: id, organizationId: caller.organizationId }),
          metadata,
          null,
        ),
    },
  });
  await ctx.backups.reschedule();
  return toBackupView(ctx, await loadBackup(ctx, caller, backupId));
}

/** backup.update of a stack's backup: its service (checked against the file) and credentials. */
async function composeBackupPatch(
  ctx: ServiceContext,
  caller: Caller,
  backup: OwnedBackup,
  input: z.infer<typeof updateBackupInput>,
): Promise<BackupUpdate> {
  if (input.verifyRestore || (input.verifyTable !== undefined && input.verifyTable !== null)) {
    throw badRequest("Restore verification is for database services' backups, not a stack's", {
      fields: [input.verifyRestore ? "verifyRestore" : "verifyTable"],
    });
  }
  const patch: BackupUpdate = {};
  if (input.serviceName !== undefined) {
    if (!input.serviceName)
      throw badRequest("serviceName must name the stack's service", { fields: ["serviceName"] });
    const stack = await requireStack(ctx, caller, backup.composeId!);
    await checkStackService(ctx, stack, input.serviceName);
    patch.serviceName = input.serviceName;
  }
  if (input.metadata !== undefined) {
    const kind = backup.databaseType as BackupDatabaseType;
    checkCredentials(kind, input.metadata);
    patch.metadata = JSON.stringify(
      sealCredentials(
        ctx.secrets,
        credentialsContext(backup),
        input.metadata ?? {},
        backup.metadata as Record<string, unknown> | null,
      ),
    );
  }
  return patch;
}

function manualBackup(kind: BackupDatabaseType) {
  return mutation({
    summary: `Back up a ${kind} database now; answers once the upload and the retention are done, with the outcome`,
    access: "member",
    input: backupIdInput,
    output: manualAnswer,
    handler: async ({ ctx, caller, input }) => {
      const backup = await loadBackup(ctx, caller, input.backupId);
      if (backup.databaseType !== kind || backup.composeId) {
        throw badRequest(
          backup.composeId
            ? `The backup is of a database inside a stack: run it with backup.manualBackupCompose`
            : `The backup is of a ${backup.databaseType} database, not ${kind}`,
          { fields: ["backupId"] },
        );
      }
      const { deploymentId } = await startBackupRun(ctx, backup, "backup");
      return waitForRun(ctx, deploymentId);
    },
  });
}

const backupFileSchema = z.object({
  key: z.string(),
  size: z.number(),
  lastModified: z.string(),
  Path: z.string(),
  Name: z.string(),
  Size: z.number(),
  IsDir: z.boolean(),
  ModTime: z.string(),
});

export const backupRouter = defineRouter("backup", {
  create: mutation({
    summary:
      "Create a database backup: schedule, destination, prefix, retention and optional restore verification",
    access: "member",
    input: createBackupInput,
    output: backupSchema,
    handler: async ({ ctx, caller, input }) => {
      // Every service, stack and destination named must be the caller's to see (404) before a 400.
      await requireDestination(ctx, caller, input.destinationId);
      for (const key of kindIdKeys) {
        const id = input[key];
        if (id) await loadDatabase(ctx, caller, key.slice(0, -2) as BackupDatabaseType, id, key);
      }
      if (input.composeId || input.backupType === "compose") return createComposeBackup(ctx, caller, input);
      refuseComposeFields(input);
      if (input.databaseType === WEB_SERVER) return createWebServerBackup(ctx, caller, input);
      const kind = input.databaseType;
      const idKey = idKeyOf(kind);
      for (const key of kindIdKeys) {
        if (key !== idKey && input[key]) {
          throw badRequest(`${key} does not match databaseType ${kind}`, { fields: [key] });
        }
      }
      const databaseId = input[idKey];
      if (!databaseId) throw badRequest(`${idKey} is required for databaseType ${kind}`, { fields: [idKey] });
      checkDatabaseField(kind, input.database);
      if (kind === "libsql") refuseVerification(input, "libsql's");
      await loadDatabase(ctx, caller, kind, databaseId, idKey);
      await requireDestination(ctx, caller, input.destinationId);
      const backupId = await insertBackup(ctx.db, caller.userId, input, { databaseId });
      await ctx.backups.reschedule();
      return toBackupView(ctx, await loadBackup(ctx, caller, backupId));
    },
  }),

  one: query({
    summary: "One backup, with its destination, its last run and its last verified restore",
    access: "member",
    input: backupIdInput,
    output: backupSchema,
    handler: async ({ ctx, caller, input }) =>
      toBackupView(ctx, await loadBackup(ctx, caller, input.backupId)),
  }),

  update: mutation({
    summary: "Change a backup's schedule, destination, prefix, retention, database or verification",
    access: "member",
    input: updateBackupInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const backup = await loadBackup(ctx, caller, input.backupId);
      if (!backup.composeId) refuseComposeFields(input);
      if (input.databaseType !== undefined && input.databaseType !== backup.databaseType) {
        throw badRequest(`databaseType cannot change (the backup is of a ${backup.databaseType} database)`, {
          fields: ["databaseType"],
        });
      }
      if (input.database !== undefined) checkDatabaseField(backup.databaseType, input.database);
      if (backup.databaseType === WEB_SERVER) refuseVerification(input);
      if (backup.databaseType === "libsql") refuseVerification(input, "libsql's");
      if (input.destinationId !== undefined) await requireDestination(ctx, caller, input.destinationId);
      const { backupId, databaseType: _type, serviceName: _service, metadata: _metadata, ...fields } = input;
      const patch: BackupUpdate = {
        ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
        ...(backup.composeId ? await composeBackupPatch(ctx, caller, backup, input) : {}),
      };
      if (Object.keys(patch).length > 0) {
        await updateBackup(ctx.db, backupId, patch);
      }
      await ctx.backups.reschedule();
      return success;
    },
  }),

  remove: mutation({
    summary: "Delete a backup (its files stay in the bucket; its runs stay in the deployments)",
    access: "member",
    input: backupIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await loadBackup(ctx, caller, input.backupId);
      await deleteBackup(ctx.db, input.backupId);
      await ctx.backups.reschedule();
      return success;
    },
  }),

  manualBackupPostgres: manualBackup("postgres"),
  manualBackupMySql: manualBackup("mysql"),
  manualBackupMysql: manualBackup("mysql"),
  manualBackupMariadb: manualBackup("mariadb"),
  manualBackupMongo: manualBackup("mongo"),
  manualBackupRedis: manualBackup("redis"),
  manualBackupLibsql: manualBackup("libsql"),

  manualBackupCompose: mutation({
    summary:
      "Back up a database inside a compose stack now (in a running container of its stack service); answers once the upload and the retention are done, with the outcome",
    access: "member",
    input: backupIdInput,
    output: manualAnswer,
    handler: async ({ ctx, caller, input }) => {
      const backup = await loadBackup(ctx, caller, input.backupId);
      if (!backup.composeId) {
        throw badRequest(
          `The backup is of a ${backup.databaseType} database service, not of a stack's database`,
          {
            fields: ["backupId"],
          },
        );
      }
      const { deploymentId } = await startComposeBackupRun(ctx, backup);
      return waitForRun(ctx, deploymentId);
    },
  }),

  manualBackupWebServer: mutation({
    summary:
      "Back up the control plane's own database now (instance administrators); answers once the upload and the retention are done, with the outcome",
    access: "member",
    input: backupIdInput,
    output: manualAnswer,
    handler: async ({ ctx, caller, input }) => {
      const backup = await loadBackup(ctx, caller, input.backupId);
      if (backup.databaseType !== WEB_SERVER) {
        throw badRequest(`The backup is of a ${backup.databaseType} database, not the web server`, {
          fields: ["backupId"],
        });
      }
      const { deploymentId } = await startWebServerBackupRun(ctx, backup, "Manual backup");
      return waitForRun(ctx, deploymentId);
    },
  }),

  verifyRestore: mutation({
    summary:
      "Restore the newest file (or backupFile) into a throwaway container, check it, and store the result",
    access: "member",
    input: z.object({ backupId: idSchema, backupFile: objectKeySchema.optional() }),
    output: manualAnswer,
    handler: async ({ ctx, caller, input }) => {
      const backup = await loadBackup(ctx, caller, input.backupId);
      if (backup.composeId) {
        throw badRequest("Restore verification is for database services' backups, not a stack's", {
          fields: ["backupId"],
        });
      }
      if (backup.databaseType === WEB_SERVER) {
        throw badRequest(
          "A web-server backup is verified by restoring it into a fresh installation (npm run web-server-backup -- restore)",
          { fields: ["backupId"] },
        );
      }
      if (input.backupFile !== undefined && !input.backupFile.startsWith(`${backup.prefix}/`)) {
        throw badRequest("backupFile must be a file of this backup (under its prefix)", {
          fields: ["backupFile"],
        });
      }
      const { deploymentId } = await startBackupRun(ctx, backup, "verify", {
        backupFile: input.backupFile,
      });
      return waitForRun(ctx, deploymentId);
    },
  }),

  listBackupFiles: query({
    summary: "The files of a destination whose key starts with `search`, oldest first",
    access: "member",
    input: z.object({
      destinationId: idSchema,
      search: z.string().max(1024).default(""),
      serverId: idSchema.optional(),
    }),
    output: z.array(backupFileSchema),
    handler: async ({ ctx, caller, input }) => {
      const destination = await requireDestination(ctx, caller, input.destinationId);
      if (input.serverId !== undefined) await agentServerId(ctx, caller.organizationId, input.serverId);
      const storage = await storageOf(ctx, destination);
      let objects: Awaited<ReturnType<typeof listObjects>>;
      try {
        objects = await listObjects(storage, input.search);
      } catch (error) {
        ctx.logger.info(
          { destinationId: destination.destinationId, err: error },
          "listing a destination failed",
        );
        throw badRequest("The destination could not be listed: test its connection", {
          fields: ["destinationId"],
        });
      }
      return objects.map((object) => {
        const name = object.key.split("/").pop() ?? object.key;
        const modified = object.lastModified.toISOString();
        return {
          key: object.key,
          size: object.size,
          lastModified: modified,
          Path: object.key,
          Name: name,
          Size: object.size,
          IsDir: false,
          ModTime: modified,
        };
      });
    },
  }),

  restoreBackupWithLogs: mutation({
    summary:
      "Restore a backup file into a database, as a deployment whose log streams at /api/deployment.logs",
    access: "member",
    input: z.object({
      databaseId: idSchema,
      databaseType: z.enum(["postgres", "mysql", "mariadb", "mongo", "redis"]),
      databaseName: z
        .string()
        .max(63)
        .regex(/^([A-Za-z0-9_][A-Za-z0-9_.-]*)?$/, "must be a database name"),
      backupFile: objectKeySchema,
      destinationId: idSchema,
      backupType: z.literal("database").optional(),
      metadata: z.object({}).strict().optional(),
    }),
    output: z.object({ success: z.literal(true), deploymentId: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      checkDatabaseField(input.databaseType, input.databaseName);
      const database = await loadDatabase(ctx, caller, input.databaseType, input.databaseId, "databaseId");
      await requireDestination(ctx, caller, input.destinationId);
      const { deploymentId } = await startRestoreRun(ctx, database, {
        destinationId: input.destinationId,
        backupFile: input.backupFile,
        databaseName: input.databaseName,
      });
      return { success: true as const, deploymentId };
    },
  }),
});
