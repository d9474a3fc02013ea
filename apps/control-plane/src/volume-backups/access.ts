/**
 * Who may see and act on a volume backup: the caller must see its service (an application, a
 * database service or a compose stack of its organization); anything else is a 404.
 */
import type { Caller, ServiceContext } from "../context.ts";
import type { VolumeBackup, VolumeBackupServiceType } from "../db/schema.ts";
import { ApiError, notFound } from "../errors.ts";
import { requireServiceAccess } from "../projects/permissions.ts";
import { findVolumeBackup } from "./repository.ts";
import { locateService, serviceIdOf, type VolumeService } from "./volume-backups.ts";

const label = (type: string) => `${type[0]!.toUpperCase()}${type.slice(1)}`;

/** The service of `type` named by `id`, of the caller's organization and visible to them (404 naming `field`). */
export async function loadService(
  ctx: ServiceContext,
  caller: Caller,
  type: VolumeBackupServiceType,
  id: string,
  field: string,
): Promise<VolumeService> {
  const service = await locateService(ctx.db, caller.organizationId, type, id);
  if (!service) throw new ApiError("NOT_FOUND", `${label(type)} not found (${field})`, { fields: [field] });
  await requireServiceAccess(ctx.db, caller, service, label(type));
  return service;
}

export async function loadVolumeBackup(
  ctx: ServiceContext,
  caller: Caller,
  volumeBackupId: string,
): Promise<{ row: VolumeBackup; service: VolumeService }> {
  const row = await findVolumeBackup(ctx.db, caller.organizationId, volumeBackupId);
  if (!row) throw notFound("Volume backup");
  const service = await loadService(ctx, caller, row.serviceType, serviceIdOf(row), "volumeBackupId").catch(
    (error) => {
      if (error instanceof ApiError && error.code === "NOT_FOUND") throw notFound("Volume backup");
      throw error;
    },
  );
  return { row, service };
}
