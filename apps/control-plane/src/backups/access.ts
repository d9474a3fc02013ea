/**
 * Who may see and act on a backup: its database service, stack or (the control plane's own) the
 * instance administrators; another organization's or a service the caller may not see is a 404.
 */

import { findCompose } from "../compose/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { findDatabase } from "../databases/repository.ts";
import type { BackupDatabaseType } from "../db/schema.ts";
import { ApiError, forbidden, notFound } from "../errors.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { requireServiceAccess } from "../projects/permissions.ts";
import { findBackupWithOrganization, type OwnedBackup } from "./backups.ts";
import { WEB_SERVER } from "./web-server-runs.ts";

const label = (kind: string) => `${kind[0]!.toUpperCase()}${kind.slice(1)}`;

/** A stack named in a backup's input, the caller's to see (404 naming composeId otherwise). */
export async function requireStack(ctx: ServiceContext, caller: Caller, composeId: string) {
  const row = await findCompose(ctx.db, caller.organizationId, composeId);
  if (!row) throw new ApiError("NOT_FOUND", "Compose not found (composeId)", { fields: ["composeId"] });
  await requireServiceAccess(
    ctx.db,
    caller,
    { serviceId: row.composeId, environmentId: row.environmentId, projectId: row.projectId },
    "Compose",
  );
  return row;
}

/** The database service of `kind` named by `id`, of the caller's organization and visible to them. */
export async function loadDatabase(
  ctx: ServiceContext,
  caller: Caller,
  kind: BackupDatabaseType,
  id: string,
  field: string,
) {
  const row = await findDatabase(ctx.db, caller.organizationId, kind, id);
  if (!row) throw new ApiError("NOT_FOUND", `${label(kind)} not found (${field})`, { fields: [field] });
  await requireServiceAccess(
    ctx.db,
    caller,
    { serviceId: row.databaseId, environmentId: row.environmentId, projectId: row.projectId },
    label(kind),
  );
  return row;
}

/** The control plane's own backup is the instance administrators' alone (403 for others). */
export async function requireInstanceAdmin(ctx: ServiceContext, caller: Caller): Promise<void> {
  if (!(await isInstanceAdmin(ctx.db, caller))) {
    throw forbidden(
      "Only instance administrators manage the web-server backup: it holds every organization's data",
    );
  }
}

/** The backup when its database is visible to the caller (another organization's: 404). */
export async function loadBackup(
  ctx: ServiceContext,
  caller: Caller,
  backupId: string,
): Promise<OwnedBackup> {
  const backup = await findBackupWithOrganization(ctx.db, backupId);
  if (!backup || backup.organizationId !== caller.organizationId) throw notFound("Backup");
  if (backup.composeId) {
    await requireStack(ctx, caller, backup.composeId).catch((error) => {
      if (error instanceof ApiError && error.code === "NOT_FOUND") throw notFound("Backup");
      throw error;
    });
    return backup;
  }
  if (backup.databaseType === WEB_SERVER || !backup.databaseId) {
    await requireInstanceAdmin(ctx, caller);
    return backup;
  }
  await loadDatabase(ctx, caller, backup.databaseType, backup.databaseId, "backupId").catch((error) => {
    if (error instanceof ApiError && error.code === "NOT_FOUND") throw notFound("Backup");
    throw error;
  });
  return backup;
}
