/**
 * volumeBackups (Dokploy's router, issue 32): a named volume of an application, a database
 * service or a compose stack archived to a destination on a cron schedule and by hand
 * (runManually, answered once the run settled), with retention and optionally the service
 * stopped while the volume is read; restoreVolumeBackupWithLogs writes an archive into a volume
 * as a deployment whose log streams at /api/deployment.logs. The rules and runs live in
 * volume-backups/. A volume backup belongs to its service: members who may see the service use
 * it; another organization's volume backup, service or destination is a 404.
 */
import { z } from "zod";
import { objectKeySchema } from "../backups/backups.ts";
import { findDestination, idSchema, requireDestination, toDestinationView } from "../backups/destinations.ts";
import { manualAnswer, waitForRun } from "../backups/wait.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { VolumeBackup, VolumeBackupServiceType } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { checkVolumeName } from "../mounts/mounts.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import { loadService, loadVolumeBackup } from "../volume-backups/access.ts";
import {
  deleteVolumeBackup,
  insertVolumeBackup,
  listServiceVolumeBackups,
  updateVolumeBackup,
} from "../volume-backups/repository.ts";
import {
  checkServiceTypeClaim,
  createVolumeBackupInput,
  lastVolumeRun,
  requireOwnVolume,
  type ServiceIdKey,
  serviceIdKeys,
  serviceIdOf,
  startVolumeBackupRun,
  startVolumeRestoreRun,
  typeOfIdKey,
  updateVolumeBackupInput,
  type VolumeService,
  volumeBackupSchema,
  volumeNameSchema,
  volumeServiceTypes,
} from "../volume-backups/volume-backups.ts";

async function toView(ctx: ServiceContext, row: VolumeBackup): Promise<z.input<typeof volumeBackupSchema>> {
  const destination = await findDestination(ctx.db, row.organizationId, row.destinationId);
  const id = serviceIdOf(row);
  const idOf = (type: VolumeBackupServiceType) => (row.serviceType === type ? id : null);
  return {
    volumeBackupId: row.volumeBackupId,
    name: row.name,
    volumeName: row.volumeName,
    prefix: row.prefix,
    appName: row.appName,
    serviceName: row.serviceName,
    turnOff: row.turnOff,
    cronExpression: row.cronExpression,
    keepLatestCount: row.keepLatestCount,
    enabled: row.enabled,
    serviceType: row.serviceType,
    applicationId: idOf("application"),
    postgresId: idOf("postgres"),
    mysqlId: idOf("mysql"),
    mariadbId: idOf("mariadb"),
    mongoId: idOf("mongo"),
    redisId: idOf("redis"),
    libsqlId: null,
    composeId: idOf("compose"),
    destinationId: row.destinationId,
    createdAt: row.createdAt,
    destination: toDestinationView(destination!),
    lastRun: await lastVolumeRun(ctx.db, row.volumeBackupId),
  };
}

const volumeBackupIdInput = z.object({ volumeBackupId: idSchema });

export const volumeBackupsRouter = defineRouter("volumeBackups", {
  list: query({
    summary: "The volume backups of a service, newest first",
    access: "member",
    input: z.object({ id: idSchema, volumeBackupType: z.enum([...volumeServiceTypes, "libsql"]) }),
    output: z.array(volumeBackupSchema),
    handler: async ({ ctx, caller, input }) => {
      if (input.volumeBackupType === "libsql") {
        throw badRequest("volumeBackupType libsql: volume backups of libsql services are not served", {
          fields: ["volumeBackupType"],
        });
      }
      const service = await loadService(ctx, caller, input.volumeBackupType, input.id, "id");
      const column =
        service.targetKind === "application"
          ? "applicationId"
          : service.targetKind === "compose"
            ? "composeId"
            : "databaseId";
      const rows = await listServiceVolumeBackups(ctx.db, column, service.serviceId);
      return Promise.all(rows.map((row) => toView(ctx, row)));
    },
  }),

  create: mutation({
    summary:
      "Back up a named volume of a service to a destination on a cron schedule, with retention and optionally the service stopped while the volume is read",
    access: "member",
    input: createVolumeBackupInput,
    output: volumeBackupSchema,
    handler: async ({ ctx, caller, input }) => {
      // Every service and destination named must be the caller's to see (404) before a 400.
      await requireDestination(ctx, caller, input.destinationId);
      const named: { key: ServiceIdKey; service: VolumeService }[] = [];
      for (const key of serviceIdKeys) {
        const id = input[key];
        if (id) named.push({ key, service: await loadService(ctx, caller, typeOfIdKey(key), id, key) });
      }
      if (named.length !== 1) {
        throw badRequest(
          named.length === 0
            ? "One of applicationId, postgresId, mysqlId, mariadbId, mongoId, redisId or composeId is required"
            : `Only one service may be named (${named.map((entry) => entry.key).join(", ")})`,
          { fields: named.length === 0 ? ["applicationId"] : named.slice(1).map((entry) => entry.key) },
        );
      }
      const { service } = named[0]!;
      checkServiceTypeClaim(input.serviceType, service.type);
      await requireOwnVolume(ctx.db, service, input.volumeName);
      const volumeBackupId = newId();
      const row = await insertVolumeBackup(ctx.db, {
        volumeBackupId,
        organizationId: caller.organizationId,
        name: input.name,
        volumeName: input.volumeName,
        prefix: input.prefix,
        appName: `volume-backup-${volumeBackupId
          .toLowerCase()
          .replace(/[^a-z0-9]/g, "")
          .slice(0, 20)}`,
        serviceName: input.serviceName ?? null,
        turnOff: input.turnOff ?? false,
        cronExpression: input.cronExpression,
        keepLatestCount: input.keepLatestCount ?? null,
        enabled: input.enabled ?? true,
        serviceType: service.type,
        applicationId: service.targetKind === "application" ? service.serviceId : null,
        databaseId: service.targetKind === "database" ? service.serviceId : null,
        composeId: service.targetKind === "compose" ? service.serviceId : null,
        destinationId: input.destinationId,
      });
      await ctx.backups.reschedule();
      return toView(ctx, row);
    },
  }),

  one: query({
    summary: "One volume backup, with its destination and its last run",
    access: "member",
    input: volumeBackupIdInput,
    output: volumeBackupSchema,
    handler: async ({ ctx, caller, input }) =>
      toView(ctx, (await loadVolumeBackup(ctx, caller, input.volumeBackupId)).row),
  }),

  update: mutation({
    summary: "Change a volume backup's volume, schedule, destination, prefix, retention or turnOff",
    access: "member",
    input: updateVolumeBackupInput,
    output: volumeBackupSchema,
    handler: async ({ ctx, caller, input }) => {
      const { row, service } = await loadVolumeBackup(ctx, caller, input.volumeBackupId);
      if (input.destinationId !== undefined) await requireDestination(ctx, caller, input.destinationId);
      // Every service named must be the caller's to see (404) before any 400.
      const named = serviceIdKeys.filter((key) => input[key] !== undefined && input[key] !== null);
      for (const key of named) await loadService(ctx, caller, typeOfIdKey(key), input[key]!, key);
      for (const key of named) {
        if (typeOfIdKey(key) !== service.type || input[key] !== service.serviceId) {
          throw badRequest(`${key} cannot change: a volume backup belongs to its service`, { fields: [key] });
        }
      }
      checkServiceTypeClaim(input.serviceType, service.type);
      if (input.volumeName !== undefined) await requireOwnVolume(ctx.db, service, input.volumeName);
      const patch = {
        name: input.name,
        volumeName: input.volumeName,
        prefix: input.prefix,
        serviceName: input.serviceName,
        turnOff: input.turnOff,
        cronExpression: input.cronExpression,
        keepLatestCount: input.keepLatestCount,
        enabled: input.enabled === null ? true : input.enabled,
        destinationId: input.destinationId,
      };
      const set = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
      const updated =
        Object.keys(set).length > 0 ? await updateVolumeBackup(ctx.db, row.volumeBackupId, set) : row;
      await ctx.backups.reschedule();
      return toView(ctx, updated);
    },
  }),

  delete: mutation({
    summary: "Delete a volume backup (its files stay in the bucket; its runs stay in the deployments)",
    access: "member",
    input: volumeBackupIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await loadVolumeBackup(ctx, caller, input.volumeBackupId);
      await deleteVolumeBackup(ctx.db, input.volumeBackupId);
      await ctx.backups.reschedule();
      return success;
    },
  }),

  runManually: mutation({
    summary: "Back up the volume now; answers once the upload and the retention are done, with the outcome",
    access: "member",
    input: volumeBackupIdInput,
    output: manualAnswer,
    handler: async ({ ctx, caller, input }) => {
      const { row, service } = await loadVolumeBackup(ctx, caller, input.volumeBackupId);
      await requireOwnVolume(ctx.db, service, row.volumeName, "volumeBackupId");
      const { deploymentId } = await startVolumeBackupRun(ctx, row);
      return waitForRun(ctx, deploymentId);
    },
  }),

  restoreVolumeBackupWithLogs: mutation({
    summary:
      "Restore a volume archive into a volume of the service (a new one or its own), as a deployment whose log streams at /api/deployment.logs",
    access: "member",
    input: z.object({
      backupFileName: objectKeySchema,
      destinationId: idSchema,
      volumeName: volumeNameSchema,
      id: idSchema,
      serviceType: z.enum(volumeServiceTypes),
      serverId: idSchema.optional(),
    }),
    output: z.object({ success: z.literal(true), deploymentId: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const service = await loadService(ctx, caller, input.serviceType, input.id, "id");
      await requireDestination(ctx, caller, input.destinationId);
      if (input.serverId !== undefined && input.serverId !== service.serverId) {
        throw badRequest("serverId must be the server of the service (the volume lives there)", {
          fields: ["serverId"],
        });
      }
      // Its own volume, or a new name no other service uses (the agent refuses a foreign volume).
      await requireOwnVolume(ctx.db, service, input.volumeName).catch(async () => {
        await checkVolumeName(
          ctx.db,
          { organizationId: service.organizationId, kind: service.type, serviceId: service.serviceId },
          input.volumeName,
          undefined,
        );
      });
      const { deploymentId } = await startVolumeRestoreRun(ctx, service, {
        destinationId: input.destinationId,
        backupFile: input.backupFileName,
        volumeName: input.volumeName,
      });
      return { success: true as const, deploymentId };
    },
  }),
});
